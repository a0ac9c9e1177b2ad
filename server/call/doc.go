// Package call holds what every area of the service knows of the call it
// serves, REST or gRPC alike: who the caller is (Caller, in the call's
// context) and how a refusal or a failure is told (InvalidField and its
// kin, with google.rpc.BadRequest details; Internal). The areas, the gRPC
// adapters and the wiring all import it; it imports none of them.
package call
