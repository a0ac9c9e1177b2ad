// Package server wires the job board's areas (jobs, drivers, imports,
// leads) into the Services the REST gateway and the gRPC server call, and
// holds the gRPC server: its adapters from the natural messages to the
// areas, its interceptors and authentication. Errors get their status
// codes at the RPC boundary (server/call); both APIs share one set of rules.
package server
