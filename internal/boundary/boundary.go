// Package boundary turns what escapes a call without a client meaning (a
// panic, an error that carries no gRPC code) into the status its client
// sees, and logs it once with what an operator needs. The gRPC interceptors
// and the REST gateway, which calls the services in-process past those
// interceptors, both go through it, so a failure looks and logs the same
// whichever side it came in on.
package boundary

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// InternalMessage is the whole message of the Internal status clients get:
// the cause is in the log, never in the answer.
const InternalMessage = "internal error"

// Boundary maps errors that carry no gRPC code. The zero value knows no
// dependency that can be unavailable.
type Boundary struct {
	// Unavailable reports whether an error means a dependency (the
	// database) could not be reached, so the client may retry; nil: never.
	Unavailable func(error) bool
}

// Status returns err as it is when it carries a gRPC code (nil included),
// else Unexpected(ctx, err): a client never sees Unknown.
func (b Boundary) Status(ctx context.Context, err error) error {
	if _, ok := status.FromError(err); ok {
		return err
	}
	return b.Unexpected(ctx, err)
}

// Unexpected logs err and returns the detail-free status clients see:
// Canceled when the client went away, DeadlineExceeded when its time ran
// out, Unavailable when a dependency could not be reached (the client may
// retry), Internal otherwise.
//
// A request whose own context has ended failed because it ended, whatever
// err says: lib/pq answers a statement cut by its context with the
// server's "canceling statement due to user request" (57014), not with the
// context's error, which would otherwise read as an internal error.
func (b Boundary) Unexpected(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(ctx.Err(), context.Canceled):
		return status.Error(codes.Canceled, "the request was cancelled")
	case errors.Is(err, context.DeadlineExceeded), errors.Is(ctx.Err(), context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, "the request took too long")
	case b.Unavailable != nil && b.Unavailable(err):
		slog.WarnContext(ctx, "database unavailable", "error", err)
		return status.Error(codes.Unavailable, "the database is unavailable; retry shortly")
	}
	slog.ErrorContext(ctx, "internal error", "error", err)
	return status.Error(codes.Internal, InternalMessage)
}

// Panic turns a recovered panic value into an Internal status and a log
// line with the value and the stack, so a client never sees a dropped
// connection. where are key-value pairs that place the panic (the REST
// path), logged between the value and the stack.
func Panic(ctx context.Context, p any, where ...any) error {
	attrs := append([]any{"panic", fmt.Sprint(p)}, where...)
	attrs = append(attrs, "stack", string(debug.Stack()))
	slog.ErrorContext(ctx, "panic", attrs...)
	return status.Error(codes.Internal, InternalMessage)
}
