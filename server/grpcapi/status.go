package grpcapi

import (
	"context"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/recovery"
	"google.golang.org/grpc"

	"github.com/truckjobs/jobboard/internal/boundary"
)

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
