// Package server wires the job board's areas (jobs, drivers, imports,
// leads, with auth) over one store and one queue into the Services the
// REST gateway calls in-process and the gRPC server (package grpcapi)
// serves, and holds the admission control both share. Errors get their
// status codes at the RPC boundary (server/call); both APIs share one set
// of rules.
package server
