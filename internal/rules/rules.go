// Package rules holds the request rules that the REST gateway and the gRPC
// services both apply, so that the two cannot drift apart: how many items a
// request may list, how large it may be and how a boolean is spelled. The gateway refuses an
// oversized body while decoding it, before the service would; the service
// applies the same limits to gRPC callers.
package rules

import (
	"strings"
)

// The limits of a request.
const (
	// MaxJobsPerPost is how many jobs one post processes; each further job
	// is reported as a limit error.
	MaxJobsPerPost = 1000
	// MaxListItems bounds the jobs of a post and the ids or reference
	// numbers of a delete: past it the summary would only grow, so the
	// request is refused instead.
	MaxListItems = 10_000
	// MaxImportJobs is the most jobs one import may list.
	MaxImportJobs = 50_000
)

// The largest request of an operation, in bytes: a REST body, or a gRPC
// request message (whose protobuf form is smaller than the JSON of the same
// request, so a gRPC caller can send whatever a REST caller can).
const (
	JobsPostLimit  = 16 << 20
	JobImportLimit = 64 << 20
	DefaultLimit   = 1 << 20
)

// Bool reads a boolean as the API spells it: true or 1, false or 0, in any
// letter case; the empty text is false. ok is false for anything else.
// Callers decide whether surrounding spaces are allowed.
func Bool(s string) (value, ok bool) {
	switch strings.ToLower(s) {
	case "true", "1":
		return true, true
	case "false", "0", "":
		return false, true
	}
	return false, false
}

// OrEmpty is the text of an optional value: an absent (nil) one reads as
// empty.
func OrEmpty(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// ReadZIP reads a US ZIP code, 12345 or 12345-6789 (the hyphen may be
// left out), and returns it as 12345 or 12345-6789; ok is false for any
// other text. A loop rather than a regular expression: every job and
// every application has one.
func ReadZIP(s string) (zip string, ok bool) {
	switch {
	case len(s) == 5 && asciiDigits(s):
		return s, true
	case len(s) == 9 && asciiDigits(s):
		return s[:5] + "-" + s[5:], true
	case len(s) == 10 && s[5] == '-' && asciiDigits(s[:5]) && asciiDigits(s[6:]):
		return s, true
	}
	return "", false
}

// asciiDigits reports whether s is all ASCII digits.
func asciiDigits(s string) bool { return LeadingDigits(s) == len(s) }

// LeadingDigits is the number of ASCII digits s starts with.
func LeadingDigits(s string) int {
	n := 0
	for n < len(s) && '0' <= s[n] && s[n] <= '9' {
		n++
	}
	return n
}

// Canonical finds s among values whatever its letter case, and returns the
// value as values spell it.
func Canonical(values []string, s string) (string, bool) {
	for _, v := range values {
		if strings.EqualFold(v, s) {
			return v, true
		}
	}
	return "", false
}
