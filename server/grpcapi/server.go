package grpcapi

import (
	"context"
	"strings"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/tap"

	"github.com/truckjobs/jobboard/internal/calllog"
	"github.com/truckjobs/jobboard/internal/forwarded"
	"github.com/truckjobs/jobboard/internal/metrics"
	"github.com/truckjobs/jobboard/internal/rpcfacts"
	"github.com/truckjobs/jobboard/server/auth"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/descriptors"
	"github.com/truckjobs/jobboard/server/drivers"
	"github.com/truckjobs/jobboard/server/imports"
	"github.com/truckjobs/jobboard/server/jobs"
	"github.com/truckjobs/jobboard/server/leads"
	"github.com/truckjobs/jobboard/server/search"
)

// Config is what the gRPC server serves and how.
type Config struct {
	Auth     *auth.Authenticator
	Jobs     *jobs.Service
	Drivers  *drivers.Service
	Intake   *drivers.IntakeService
	Search   *search.Service
	Imports  *imports.JobImportService
	Webhooks *leads.WebhookService
	Events   *leads.EventService
	Health   *health.Server
	// Metrics is nil when the process keeps none.
	Metrics *metrics.Metrics
	// TrustedProxies may say, in metadata, which host a client called.
	TrustedProxies forwarded.Proxies
	// Admit takes a place of the admission control for a call holding a
	// message of size() (server.Services.Admit); nil admits every call.
	Admit func(ctx context.Context, size func() int64) (release func(), err error)
}

// New returns a gRPC server with every service, health and
// reflection registered. Callers are authenticated by a tap handle, from
// the call's headers, before its request message is read (health and
// reflection are open, as probes and grpcurl expect). Interceptors then run
// outermost first: the call gets its request id and access log line, then
// its metrics (both see the final code), panics become Internal, every
// error gets a code, the caller the tap found is required, and the call
// waits for a place of the admission control (Admit). Unary calls take
// these steps in one interceptor, unaryCalls; streams in a chain.
func New(s Config, opts ...grpc.ServerOption) *grpc.Server {
	admit := s.Admit
	if admit == nil {
		admit = func(context.Context, func() int64) (func(), error) { return func() {}, nil }
	}
	unary := &unaryCalls{admit: admit, proxies: s.TrustedProxies}
	stream := []grpc.StreamServerInterceptor{anonymousStream, untrustedForwarding(s.TrustedProxies), accessLogStream}
	if m := s.Metrics.GRPC(); m != nil {
		unary.metrics = m.UnaryServerInterceptor()
		stream = append(stream, m.StreamServerInterceptor())
	}
	stream = append(stream, recoveryStream(), requireCallerStream)
	// The tap handle runs for any path a client sends; it authenticates
	// only the methods served, filled in below before the server serves.
	known := map[string]bool{}
	health, reflection := newHealthCalls(), newReflectionStreams()
	// Each method's own limit is checked before decoding (requestLimit);
	// opts may still set another.
	opts = append([]grpc.ServerOption{grpc.MaxRecvMsgSize(maxRequestLimit), grpc.NumStreamWorkers(grpcStreamWorkers)}, opts...)
	srv := grpc.NewServer(append(opts,
		grpc.InTapHandle(func(ctx context.Context, info *tap.Info) (context.Context, error) {
			if !known[info.FullMethodName] {
				return ctx, nil // grpc-go answers Unimplemented for unknown methods, unread
			}
			if !methodNeedsAuth(info.FullMethodName) {
				calls := health
				if strings.HasPrefix(info.FullMethodName, "/grpc.reflection.") {
					calls = reflection
				}
				return calls.admit(ctx, auth.AddressKey(s.callingClient(ctx, info)))
			}
			return s.authenticateTap(ctx, info)
		}),
		grpc.ForceServerCodecV2(requestCodec{}),
		grpc.UnaryInterceptor(unary.intercept), grpc.ChainStreamInterceptor(stream...))...)
	// The gRPC API is package jobboard.v2; the REST package's services are
	// the core behind it and are never registered here.
	registerDecoding(srv, &jobboardv2.JobService_ServiceDesc, &grpcJobs{core: s.Jobs}, requestLimit)
	registerDecoding(srv, &jobboardv2.DriverService_ServiceDesc, &grpcDrivers{core: s.Drivers}, requestLimit)
	registerDecoding(srv, &jobboardv2.DriverIntakeService_ServiceDesc, s.Intake, requestLimit)
	registerDecoding(srv, &jobboardv2.JobSearchService_ServiceDesc, &grpcSearch{core: s.Search}, requestLimit)
	registerDecoding(srv, &jobboardv2.JobImportService_ServiceDesc, &grpcImports{core: s.Imports}, requestLimit)
	registerDecoding(srv, &jobboardv2.WebhookService_ServiceDesc, &grpcWebhooks{core: s.Webhooks}, requestLimit)
	registerDecoding(srv, &jobboardv2.EventService_ServiceDesc, &grpcEvents{core: s.Events}, requestLimit)
	healthpb.RegisterHealthServer(srv, s.Health)
	// Reflection answers from descriptors with comments, so grpcurl
	// describe shows the API documentation.
	descriptors.RegisterReflection(srv)
	if m := s.Metrics.GRPC(); m != nil {
		m.InitializeMetrics(srv)
	}
	for name, info := range srv.GetServiceInfo() {
		for _, m := range info.Methods {
			known["/"+name+"/"+m.Name] = true
		}
	}
	return srv
}

// grpcStreamWorkers are goroutines kept to run calls. By default grpc-go
// starts a goroutine a call, whose stack then grows through the interceptor
// chain and the database driver by copying (a tenth of the server's CPU
// for GetJob under load, bench scenario 2); a worker keeps its grown stack
// from call to call. A call arriving while every worker is busy gets a
// goroutine of its own as before, so the number only needs to cover the
// usual concurrency: a few times the database pool.
const grpcStreamWorkers = 64

// tapLookupTimeout bounds a key lookup made by the tap handle.
const tapLookupTimeout = 5 * time.Second

// authenticateTap authenticates a call from its headers before grpc-go
// reads its request message, so a client without valid credentials cannot
// make the server read, buffer or decode a message (up to maxRequestLimit)
// first. The status it returns reaches the client as it is, details
// included.
//
// grpc-go runs it on the connection's reader goroutine, holding the
// transport's lock: while it waits, no other frame of that connection is
// read. A database lookup there is acceptable because it is rare: keys in
// use are remembered (server/keycache, kept honest by the key watch),
// wrong keys are answered from the set of every key in use while the watch
// runs, and remembered as wrong for a minute otherwise, and a lookup is
// bounded by tapLookupTimeout. What blocks is the one client's own
// connection.
func (s Config) authenticateTap(ctx context.Context, info *tap.Info) (context.Context, error) {
	started := time.Now()
	client := func() string { return s.callingClient(ctx, info) }
	lookupCtx := withLazyDeadline(ctx, started.Add(tapLookupTimeout))
	defer lookupCtx.stop()
	caller, err := s.Auth.AuthenticateGRPCPeer(lookupCtx, info.FullMethodName, info.Header, client)
	if err != nil {
		// The interceptors never see this call: it gets its access log
		// line and its metrics here, in the same form.
		logged := calllog.StartedAt(call.FirstValue(info.Header, "x-request-id"), started)
		endCall(ctx, logged, info.FullMethodName, err)
		if m := s.Metrics.GRPC(); m != nil {
			_, _ = m.UnaryServerInterceptor()(ctx, nil, &grpc.UnaryServerInfo{FullMethod: info.FullMethodName},
				func(context.Context, any) (any, error) { return nil, err })
		}
		return nil, err
	}
	return call.WithCaller(ctx, caller), nil
}

// requireCallerStream lets through streams the tap handle authenticated,
// and notes their account for the access log (unaryCalls does the same
// for unary calls).
func requireCallerStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if err := requireCaller(ss.Context(), info.FullMethod); err != nil {
		return err
	}
	return handler(srv, ss)
}

func requireCaller(ctx context.Context, method string) error {
	if !methodNeedsAuth(method) {
		return nil
	}
	// A server built without the tap handle would serve unscoped calls:
	// refuse them instead.
	c, ok := call.CallerIn(ctx)
	if !ok {
		return auth.ErrBadCredentials
	}
	// The tap handle found the caller before this call's log line began.
	calllog.NoteAccount(ctx, c.AccountID)
	noteCertificate(ctx, c)
	return nil
}

// callingClient is the address a call comes from: its peer's, or the one
// a trusted proxy forwards for; "" when unknown.
func (s Config) callingClient(ctx context.Context, info *tap.Info) string {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return ""
	}
	return s.TrustedProxies.Client(p.Addr.String(), strings.Join(info.Header.Get("x-forwarded-for"), ","))
}

// methodNeedsAuth says whether a call must carry credentials: not for an
// rpc whose (jobboard.v2.facts) say CALLER_ANONYMOUS, nor for gRPC's own
// health checks and reflection, whose protos are gRPC's and carry no facts,
// so the server declares them here; every other method needs them.
func methodNeedsAuth(fullMethod string) bool {
	if m, ok := rpcfacts.Of(fullMethod); ok {
		return m.Caller != jobboardv2.Caller_CALLER_ANONYMOUS
	}
	return !strings.HasPrefix(fullMethod, "/grpc.health.v1.") && !strings.HasPrefix(fullMethod, "/grpc.reflection.")
}
