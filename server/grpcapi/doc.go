// Package grpcapi is the gRPC adapter: the server (New) with its
// interceptors and tap handle, and one adapter per service from the
// natural messages of jobboard.v2 to the areas. Callers are authenticated
// from the call's headers before its message is read; each method's
// request limit and who may call it come from its (jobboard.v2.facts).
package grpcapi
