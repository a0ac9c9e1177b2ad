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
// calls the services in-process, past unaryCalls, and maps their
// errors through the same rule.
func ErrorBoundary() boundary.Boundary { return errorBoundary }

// internalError logs err and returns the detail-free status clients see:
// Unavailable when the database cannot be reached (the client may retry),
// Canceled when the client went away, Internal otherwise.
func internalError(ctx context.Context, err error) error {
	return errorBoundary.Unexpected(ctx, err)
}

// recoveryStream is go-grpc-middleware's recovery for streams, turning a
// panic into Internal (panicStatus); unary calls recover in unaryCalls.
func recoveryStream() grpc.StreamServerInterceptor {
	return recovery.StreamServerInterceptor(recovery.WithRecoveryHandlerContext(func(ctx context.Context, p any) error {
		method, _ := grpc.Method(ctx)
		return panicStatus(ctx, p, method)
	}))
}

// panicStatus logs a method's panic through boundary.Panic and returns
// Internal. The line names the method, as the gateway's names the path.
func panicStatus(ctx context.Context, p any, method string) error {
	if method == "" {
		return boundary.Panic(ctx, p)
	}
	return boundary.Panic(ctx, p, "method", method)
}
