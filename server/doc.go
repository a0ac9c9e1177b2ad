// Package server holds the job board's gRPC services: the job imports and
// their queue workers, the lead events and webhooks, the gRPC adapters,
// and the wiring of every area (the jobs and the drivers are packages of
// their own). It checks every request against the API's rules
// (docs/api.md), maps the store's errors to gRPC status codes at the RPC
// boundary, and authenticates callers. The REST gateway calls these same
// services in-process, so both APIs share one set of rules.
package server
