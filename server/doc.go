// Package server holds the job board's gRPC services: the job imports and
// their queue workers, the drivers and the internal intake, the lead
// events and webhooks, and their wiring (the jobs are package jobs). It
// checks every request against the API's rules (docs/api.md), maps the
// store's errors to gRPC status codes at the RPC boundary, and
// authenticates callers. The REST gateway calls these same services
// in-process, so both APIs share one set of rules.
package server
