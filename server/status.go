package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/recovery"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/truckjobs/jobboard/server/store"
)

// internalError logs err and returns the detail-free status clients see:
// Unavailable when the database cannot be reached (the client may retry),
// Canceled when the client went away, Internal otherwise.
func internalError(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, "the request was cancelled")
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, "the request took too long")
	case store.IsUnavailable(err):
		slog.WarnContext(ctx, "database unavailable", "error", err)
		return status.Error(codes.Unavailable, "the database is unavailable; retry shortly")
	}
	slog.ErrorContext(ctx, "internal error", "error", err)
	return status.Error(codes.Internal, "internal error")
}

// RecoverPanic turns a panic into an Internal status and a log line with the
// stack, so a client never sees a dropped connection.
func RecoverPanic(ctx context.Context, p any) error {
	slog.ErrorContext(ctx, "panic", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
	return status.Error(codes.Internal, "internal error")
}

// statusBoundary makes sure every error leaving a method carries a gRPC code:
// anything else is logged and becomes Internal, never Unknown.
func statusBoundary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	if err == nil {
		return resp, nil
	}
	if _, ok := status.FromError(err); ok {
		return resp, err
	}
	return nil, internalError(ctx, err)
}

// recoveryInterceptor is go-grpc-middleware's recovery with RecoverPanic.
func recoveryInterceptor() grpc.UnaryServerInterceptor {
	return recovery.UnaryServerInterceptor(recovery.WithRecoveryHandlerContext(func(ctx context.Context, p any) error {
		return RecoverPanic(ctx, p)
	}))
}
