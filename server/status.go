package server

import (
	"context"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/recovery"
	"google.golang.org/grpc"

	"github.com/truckjobs/jobboard/internal/boundary"
	"github.com/truckjobs/jobboard/server/store"
)

// errorBoundary maps what the services return without a gRPC code; a
// database that cannot be reached makes a call Unavailable.
var errorBoundary = boundary.Boundary{Unavailable: store.IsUnavailable}

// ErrorBoundary is the services' error boundary, for the REST gateway: it
// calls the services in-process, past statusBoundary, and maps their
// errors through the same rule.
func ErrorBoundary() boundary.Boundary { return errorBoundary }

// internalError logs err and returns the detail-free status clients see:
// Unavailable when the database cannot be reached (the client may retry),
// Canceled when the client went away, Internal otherwise.
func internalError(ctx context.Context, err error) error {
	return errorBoundary.Unexpected(ctx, err)
}

// statusBoundary makes sure every error leaving a method carries a gRPC code:
// anything else is logged and becomes Internal, never Unknown.
func statusBoundary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	return resp, errorBoundary.Status(ctx, err)
}

// recoveryInterceptors are go-grpc-middleware's recovery, unary and
// stream, turning a panic into Internal through boundary.Panic. The line
// names the method, as the gateway's names the path.
func recoveryInterceptors() (grpc.UnaryServerInterceptor, grpc.StreamServerInterceptor) {
	onPanic := recovery.WithRecoveryHandlerContext(func(ctx context.Context, p any) error {
		if method, ok := grpc.Method(ctx); ok {
			return boundary.Panic(ctx, p, "method", method)
		}
		return boundary.Panic(ctx, p)
	})
	return recovery.UnaryServerInterceptor(onPanic), recovery.StreamServerInterceptor(onPanic)
}
