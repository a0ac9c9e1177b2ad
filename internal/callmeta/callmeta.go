// Package callmeta names the gRPC metadata the REST gateway hands to the
// services it calls in-process, which gRPC clients send themselves. Both
// sides use these names, so a key cannot be renamed on one side only.
package callmeta

const (
	// IdempotencyKey carries an import's Idempotency-Key header.
	IdempotencyKey = "idempotency-key"
	// ForwardedHost and ForwardedProto carry the host and scheme a client
	// called, for links: the gateway sets them to what it decided (its own
	// host, or what a trusted proxy said); from a gRPC peer that is not a
	// trusted proxy they are dropped.
	ForwardedHost  = "x-forwarded-host"
	ForwardedProto = "x-forwarded-proto"
)

// Forwarding lists the keys that say where a client called.
var Forwarding = []string{ForwardedHost, ForwardedProto}
