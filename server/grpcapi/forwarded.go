package grpcapi

import (
	"context"

	middleware "github.com/grpc-ecosystem/go-grpc-middleware/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/truckjobs/jobboard/internal/callmeta"
	"github.com/truckjobs/jobboard/internal/forwarded"
)

// untrustedForwarding is withoutUntrustedForwarding for streams; unaryCalls
// applies it to unary calls.
func untrustedForwarding(proxies forwarded.Proxies) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		wrapped := middleware.WrapServerStream(ss)
		wrapped.WrappedContext = withoutUntrustedForwarding(ss.Context(), proxies)
		return handler(srv, wrapped)
	}
}

// withoutUntrustedForwarding drops the forwarding metadata of a gRPC call
// whose peer is not one of proxies, so that only a proxy an operator listed
// can decide the host of the links a call answers with (an import's
// links.self). REST calls reach the services in-process, past the gRPC
// interceptors, with metadata the gateway set by the same rule.
func withoutUntrustedForwarding(ctx context.Context, proxies forwarded.Proxies) context.Context {
	// Most calls carry no forwarding metadata: looking the keys up
	// costs no copy of the call's metadata, nor the peer's address.
	found := false
	for _, k := range callmeta.Forwarding {
		if len(metadata.ValueFromIncomingContext(ctx, k)) > 0 {
			found = true
		}
	}
	if !found {
		return ctx
	}
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil && proxies.Trusts(p.Addr.String()) {
		return ctx
	}
	md, _ := metadata.FromIncomingContext(ctx) // a copy of its own
	for _, k := range callmeta.Forwarding {
		md.Delete(k)
	}
	return metadata.NewIncomingContext(ctx, md)
}
