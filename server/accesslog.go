package server

import (
	"context"
	"log/slog"
	"time"

	middleware "github.com/grpc-ecosystem/go-grpc-middleware/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/truckjobs/jobboard/internal/requestid"
)

// The gRPC access log is one JSON line per call, the counterpart of the
// REST gateway's: method, code, duration, account and request id. REST
// requests reach the services in-process, never through these
// interceptors, so each request is logged once, by the side it came in on.
// Metadata other than x-request-id (authorization, x-account-id, ...) is
// never logged: it carries credentials.

// callInfo is filled in as a call goes through the interceptors, for its
// access log line.
type callInfo struct {
	accountID int64
}

type callInfoKey struct{}

// noteCallAccount records the account the authenticator found; the access
// log interceptor, which runs outside the authenticator, reads it at the end.
func noteCallAccount(ctx context.Context) {
	ci, ok := ctx.Value(callInfoKey{}).(*callInfo)
	if !ok {
		return
	}
	if id, ok := AccountOf(ctx); ok {
		ci.accountID = id
	}
}

// startCall settles the call's request id: the client's x-request-id when
// it is short printable ASCII, else a new one. The id replaces the
// metadata value, so the services read it from x-request-id as they do for
// REST requests, whose id the gateway passes the same way.
func startCall(ctx context.Context) (context.Context, string, *callInfo) {
	md, _ := metadata.FromIncomingContext(ctx)
	id := requestid.FromClient(first(md, "x-request-id"))
	md = md.Copy()
	md.Set("x-request-id", id)
	ci := &callInfo{}
	return metadata.NewIncomingContext(context.WithValue(ctx, callInfoKey{}, ci), md), id, ci
}

func logCall(ctx context.Context, method, id string, ci *callInfo, err error, started time.Time) {
	attrs := []any{"method", method, "code", status.Code(err).String(),
		"duration_ms", float64(time.Since(started).Microseconds()) / 1000, "request_id", id}
	if ci.accountID != 0 {
		attrs = append(attrs, "account_id", ci.accountID)
	}
	slog.InfoContext(ctx, "rpc", attrs...)
}

// accessLogUnary gives a unary call its request id, echoes it in the
// response header metadata, and logs the call when it ends.
func accessLogUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	started := time.Now()
	ctx, id, ci := startCall(ctx)
	_ = grpc.SetHeader(ctx, metadata.Pairs("x-request-id", id))
	resp, err := handler(ctx, req)
	logCall(ctx, info.FullMethod, id, ci, err, started)
	return resp, err
}

// accessLogStream is accessLogUnary for streams (health watches, reflection).
func accessLogStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	started := time.Now()
	ctx, id, ci := startCall(ss.Context())
	_ = ss.SetHeader(metadata.Pairs("x-request-id", id))
	wrapped := middleware.WrapServerStream(ss)
	wrapped.WrappedContext = ctx
	err := handler(srv, wrapped)
	logCall(ctx, info.FullMethod, id, ci, err, started)
	return err
}

// requestIDOf is the request id a service call carries, empty when it has
// none (a service called directly, as tests do).
func requestIDOf(ctx context.Context) string {
	if id := first(metadataOf(ctx), "x-request-id"); requestid.Valid(id) {
		return id
	}
	return ""
}
