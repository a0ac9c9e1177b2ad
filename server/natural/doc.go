// Package natural converts between the two forms of the API's messages:
// package jobboard.v2 (gen/jobboard/v2), the gRPC API with natural types
// (bools, integers, enums, timestamps), and package jobboard.rest.v2
// (gen/jobboard/rest/v2), the lenient text form REST sends and the
// validation in package server checks. The gRPC services turn a natural
// request into the lenient form, let the one core check and answer it, and
// turn the answer back.
//
// The labels of the closed vocabularies are defined here once: the
// validation accepts exactly these labels (canonicalising case), so every
// value the core stores or answers has an enum value.
package natural
