package grpcapi

import (
	"context"
	"log/slog"

	middleware "github.com/grpc-ecosystem/go-grpc-middleware/v2"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/truckjobs/jobboard/internal/calllog"
	"github.com/truckjobs/jobboard/server/call"
)

// The gRPC access log is one calllog line per call, the counterpart of the
// REST gateway's: method and code, then duration, request id and account. REST
// requests reach the services in-process, never through these
// interceptors, so each request is logged once, by the side it came in on.
// Metadata other than x-request-id (authorization, x-account-id, ...) is
// never logged: it carries credentials.

// startCall settles the call's request id: the client's x-request-id when
// it is short printable ASCII, else a new one. The services read it from
// the call (call.RequestID), as they do for REST requests, so the call's
// metadata is neither copied nor rewritten.
func startCall(ctx context.Context) (context.Context, *calllog.Call) {
	clientID := ""
	if v := metadata.ValueFromIncomingContext(ctx, "x-request-id"); len(v) > 0 {
		clientID = v[0]
	}
	logged := calllog.Start(clientID)
	return calllog.NewContext(ctx, logged), logged
}

// endCall writes the call's calllog line: method and code, then what
// calllog adds.
func endCall(ctx context.Context, logged *calllog.Call, method string, err error) {
	code := status.Code(err)
	what := []slog.Attr{slog.String("method", method), slog.String("code", code.String())}
	if code == codes.Unauthenticated || code == codes.ResourceExhausted {
		logged.EndRefused(ctx, calllog.GRPC, code.String()+" "+method, what...)
		return
	}
	logged.End(ctx, calllog.GRPC, what...)
}

// accessLogStream gives a stream (health watches, reflection) its request
// id, echoes it in the response header metadata, and logs the stream when
// it ends; unaryCalls does the same for unary calls.
func accessLogStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	ctx, logged := startCall(ss.Context())
	_ = ss.SetHeader(metadata.Pairs("x-request-id", logged.RequestID))
	wrapped := middleware.WrapServerStream(ss)
	wrapped.WrappedContext = ctx
	err := handler(srv, wrapped)
	endCall(ctx, logged, info.FullMethod, err)
	return err
}

// noteCertificate names a caller that authenticated by certificate on the
// call's access log line and its span: the subject is who called, since no
// key or token identifies the service.
func noteCertificate(ctx context.Context, c call.Caller) {
	if c.Certificate == "" {
		return
	}
	calllog.Add(ctx, slog.String("caller", c.Certificate))
	trace.SpanFromContext(ctx).SetAttributes(attribute.String("jobboard.caller", c.Certificate))
}
