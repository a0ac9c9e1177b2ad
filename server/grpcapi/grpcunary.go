package grpcapi

import (
	"context"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/truckjobs/jobboard/internal/forwarded"
	"github.com/truckjobs/jobboard/server/call"
)

// unaryCalls is the gRPC server's one unary interceptor. grpc-go chains
// interceptors through a closure made for each layer of each call; doing
// the service's own steps in sequence, in one function, leaves a cheap
// call like GetJob only the closure handed to the metrics interceptor,
// which the service does not own. In order, outermost first:
//
//   - a health check or reflection call gives back its anonymous place,
//     its message having been read (anonymousCalls);
//   - forwarding metadata of an untrusted peer is dropped
//     (withoutUntrustedForwarding);
//   - the call gets its request id, echoed in its header metadata, and its
//     access log line when it ends;
//   - the metrics, which like the log line see the final code;
//   - a panic becomes Internal, every error gets a code (call.Boundary);
//   - the caller the tap handle found is required (requireCaller);
//   - the call waits for a place of the admission control (admitted).
type unaryCalls struct {
	// admit takes a place of the admission control (Config.Admit).
	admit   func(ctx context.Context, size func() int64) (release func(), err error)
	proxies forwarded.Proxies
	// metrics is grpc-prometheus's interceptor; nil when the process
	// keeps no metrics.
	metrics grpc.UnaryServerInterceptor
}

func (u *unaryCalls) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if !methodNeedsAuth(info.FullMethod) {
		releaseAnonymous(ctx)
	}
	ctx = withoutUntrustedForwarding(ctx, u.proxies)
	ctx, logged := startCall(ctx)
	// A map of our own: metadata.Pairs would lower-case the key each call.
	_ = grpc.SetHeader(ctx, metadata.MD{"x-request-id": {logged.RequestID}})
	var resp any
	var err error
	if u.metrics == nil {
		resp, err = u.guarded(ctx, req, info, handler)
	} else {
		resp, err = u.metrics(ctx, req, info, func(ctx context.Context, req any) (any, error) {
			return u.guarded(ctx, req, info, handler)
		})
	}
	if passedHealthCheck(info.FullMethod, resp, err) {
		logged.EndUnlogged()
		return resp, err
	}
	endCall(ctx, logged, info.FullMethod, err)
	return resp, err
}

// passedHealthCheck: a health check answered SERVING, which leaves no
// access log line (calllog's EndUnlogged); NOT_SERVING and errors do.
func passedHealthCheck(method string, resp any, err error) bool {
	r, ok := resp.(*healthpb.HealthCheckResponse)
	return err == nil && ok && method == healthpb.Health_Check_FullMethodName &&
		r.GetStatus() == healthpb.HealthCheckResponse_SERVING
}

// guarded runs the call inside the recovery and the error boundary, once
// its caller is known and it holds an admission place.
func (u *unaryCalls) guarded(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (_ any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = panicStatus(ctx, p, info.FullMethod)
		}
	}()
	resp, err := u.admitted(ctx, req, info, handler)
	return resp, call.Boundary.Status(ctx, err)
}

// admitted requires the call's caller, then holds a place of the
// admission control for the length of the call; health checks and
// reflection pass without one. A call that waits counts its decoded
// message against the bytes the waiting calls may hold.
func (u *unaryCalls) admitted(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if err := requireCaller(ctx, info.FullMethod); err != nil {
		return nil, err
	}
	if !methodNeedsAuth(info.FullMethod) {
		return handler(ctx, req)
	}
	var size func() int64
	if msg, ok := req.(proto.Message); ok {
		size = func() int64 { return int64(proto.Size(msg)) }
	}
	release, err := u.admit(ctx, size)
	if err != nil {
		return nil, err
	}
	defer release()
	return handler(ctx, req)
}
