package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/truckjobs/jobboard/server/drivers"
	"github.com/truckjobs/jobboard/server/imports"
	"github.com/truckjobs/jobboard/server/leads"

	"github.com/truckjobs/jobboard/server/jobs"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/tap"
	"google.golang.org/protobuf/proto"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/internal/calllog"
	"github.com/truckjobs/jobboard/internal/forwarded"
	"github.com/truckjobs/jobboard/internal/metrics"
	"github.com/truckjobs/jobboard/internal/rpcfacts"
	"github.com/truckjobs/jobboard/internal/tracing/queuetrace"
	"github.com/truckjobs/jobboard/server/admission"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/descriptors"
	"github.com/truckjobs/jobboard/server/pagetoken"
	"github.com/truckjobs/jobboard/server/ratelimit"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/webhook"
)

// Services are the implementations behind both the gRPC server and the
// in-process REST gateway.
type Services struct {
	Auth    *Authenticator
	Jobs    *jobs.Service
	Drivers *drivers.Service
	Intake  *drivers.IntakeService
	Imports *imports.JobImportService
	// Webhooks and Events are the account's lead events (docs/api.md,
	// Events and webhooks).
	Webhooks *leads.WebhookService
	Events   *leads.EventService
	// Outbox writes the events of what the services store.
	Outbox *leads.Outbox
	Health *health.Server
	// Queue runs imports. It inserts from any process; it works jobs only
	// once Start is called (serve does, tests may not).
	Queue *store.Queue
	// imports is the imports' area, for its sweep.
	imports *imports.Area
	// metrics is nil when the process exposes none.
	metrics *metrics.Metrics
	// trustedProxies may say, in metadata, which host a gRPC client called.
	trustedProxies forwarded.Proxies
	// admission bounds the API calls worked at once (Admit); nil admits all.
	admission *admission.Limiter
}

// Config is what the services need from the outside.
type Config struct {
	InternalToken string
	// PublicURL is the absolute base of links; empty means the request's host.
	PublicURL string
	// RESTPort is the port the REST API listens on. Without PublicURL, a link
	// answered to a gRPC call points at the host the caller dialled, on this
	// port: the gRPC port serves no REST.
	RESTPort string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// ImportWorkers is how many imports this process works at once; 0 means 2.
	ImportWorkers int
	// RescueStuckImportsAfter is how long an import may run before another
	// replica may take it over (its worker presumably died); 0 means 10 minutes.
	RescueStuckImportsAfter time.Duration
	// ImportTimeout is how long one attempt at an import may run before it
	// is cancelled and rolled back; 0 means 90% of RescueStuckImportsAfter,
	// and it must stay below that, or a slow import would run twice.
	ImportTimeout time.Duration
	// ImportAttempts is how many times the queue tries an import before it
	// is completed with every job failed; 0 means DefaultImportAttempts.
	ImportAttempts int
	// SweepImportsEvery is how often the queue's leader looks for imports
	// the queue gave up on without their worker seeing it; 0 means
	// DefaultSweepImportsEvery.
	SweepImportsEvery time.Duration
	// AllowPrivateCallbacks lets callbacks go to loopback and private
	// addresses: for development and tests only.
	AllowPrivateCallbacks bool
	// CallbackRetrySchedule is the wait before each retry; nil means
	// webhook.DefaultRetrySchedule.
	CallbackRetrySchedule []time.Duration
	// CallbackTimeout bounds one attempt; 0 means webhook.DefaultTimeout.
	CallbackTimeout time.Duration
	// WebhookWorkers is how many webhook deliveries this process sends at
	// once; 0 means leads.DefaultWebhookWorkers. One account has at most
	// half of them, one endpoint at most 4. Deliveries follow the
	// callbacks' schedule, timeout and address rule.
	WebhookWorkers int
	// SendNoDeliveries makes this process queue webhook deliveries (its
	// outbox still writes them) but send none: another process on the same
	// database, with workers, sends them (JOBBOARD_WEBHOOK_WORKERS=0).
	SendNoDeliveries bool
	// WebhookDisableAfter is how long every attempt to an endpoint may fail
	// before it is disabled; 0 means leads.DefaultWebhookDisableAfter.
	WebhookDisableAfter time.Duration
	// RenderCallback writes a callback body, the JSON the REST API gives for
	// retrieving the import. It is required for callbacks to be sent.
	RenderCallback func(proto.Message) ([]byte, error)
	// RateLimit is the requests a second each account (all its keys
	// together) may make on average, RateBurst how many at once;
	// RateLimit <= 0 means no limit.
	RateLimit float64
	RateBurst int
	// AuthFailureLimit is the failed authentications (missing or wrong key)
	// a second each client address may make on average, AuthFailureBurst
	// how many at once; AuthFailureLimit <= 0 means no limit.
	AuthFailureLimit float64
	AuthFailureBurst int
	// Metrics receives the gRPC, import, callback, queue and database pool
	// metrics; nil means none are kept.
	Metrics *metrics.Metrics
	// TrustedProxies are the gRPC peers whose x-forwarded-host and
	// x-forwarded-proto metadata count; the zero value trusts nobody.
	TrustedProxies forwarded.Proxies
	// Admission bounds the REST and gRPC API requests worked at once
	// (Services.Admit); the zero value turns admission control off.
	Admission admission.Settings
}

// NewServices wires the services over st.
func NewServices(st *store.Store, cfg Config) (*Services, error) {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	s := &Services{
		Auth:    newAuthenticator(st, cfg.InternalToken),
		Jobs:    jobs.New(st, now),
		Drivers: drivers.New(st),
		Health:  health.NewServer(),
		metrics: cfg.Metrics,

		trustedProxies: cfg.TrustedProxies,
	}
	err := s.readPageTokenKey(st)
	if err != nil {
		return nil, err
	}
	s.Auth.limiter = ratelimit.New(cfg.RateLimit, cfg.RateBurst)
	if s.admission, err = newAdmission(cfg.Admission, cfg.Metrics); err != nil {
		return nil, err
	}
	s.Auth.failures = ratelimit.New(cfg.AuthFailureLimit, cfg.AuthFailureBurst)
	if cfg.RenderCallback == nil {
		return nil, errors.New("services: RenderCallback is required")
	}
	links := call.Links{PublicURL: cfg.PublicURL, RESTPort: cfg.RESTPort}
	retry := webhook.NewRetryPolicy(cfg.CallbackTimeout, cfg.CallbackRetrySchedule)
	client := webhook.NewClient(retry.Timeout, cfg.AllowPrivateCallbacks)
	leadsArea := leads.New(leads.Config{Store: st, Links: links, Retry: retry, Client: client,
		Render: cfg.RenderCallback, AllowPrivate: cfg.AllowPrivateCallbacks,
		DisableAfter: cfg.WebhookDisableAfter, Workers: cfg.WebhookWorkers, Metrics: cfg.Metrics})
	importTimeout, err := cfg.importTimeout()
	if err != nil {
		return nil, err
	}
	importsArea := imports.New(imports.Config{Store: st, Jobs: s.Jobs, Outbox: leadsArea.Outbox, Links: links,
		AllowPrivateCallbacks: cfg.AllowPrivateCallbacks, Attempts: cfg.ImportAttempts, Timeout: importTimeout,
		SweepEvery: cfg.SweepImportsEvery, Retry: retry, Client: client, Render: cfg.RenderCallback, Metrics: cfg.Metrics})
	if s.Queue, err = newQueue(st, cfg, importTimeout, importsArea, leadsArea); err != nil {
		return nil, err
	}
	s.imports = importsArea
	s.Imports, s.Webhooks, s.Events, s.Outbox = importsArea.Service, leadsArea.Webhooks, leadsArea.Events, leadsArea.Outbox
	s.Intake = drivers.NewIntake(st, s.Outbox)
	if err := cfg.Metrics.WatchDB(st.DB().DB); err != nil {
		return nil, err
	}
	if err := cfg.Metrics.DatabaseRoute(st.Route().Direct); err != nil {
		return nil, err
	}
	if read := st.ReadDB(); read != nil {
		status := func() metrics.ReadDBStatus {
			r := st.ReadDatabase()
			return metrics.ReadDBStatus{Up: r.Up, Fallbacks: r.Fallbacks, AuthLookups: r.AuthLookups}
		}
		if err := cfg.Metrics.WatchReadDB(read.DB, status); err != nil {
			return nil, err
		}
	}
	if err := cfg.Metrics.WatchQueue(queueDepth(st), append(imports.Kinds(), leads.DeliveryKind())...); err != nil {
		return nil, err
	}
	return s, nil
}

// SweepImports completes, now, the imports the queue gave up on without
// their worker seeing it, as the queue's leader does every
// SweepImportsEvery; it says how many.
func (s *Services) SweepImports(ctx context.Context) (int, error) { return s.imports.Sweep(ctx) }

// readPageTokenKey gives the lists the database's page token key.
func (s *Services) readPageTokenKey(st *store.Store) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	key, err := st.PageTokenKey(ctx)
	if err != nil {
		return err
	}
	s.Jobs.UseTokens(pagetoken.New(key))
	s.Drivers.UseTokens(s.Jobs.Tokens())
	return nil
}

// importTimeout is how long one attempt at an import may run: cfg's, or
// 90% of the time after which stuck imports are rescued, and never as long,
// or a slow import would run twice.
func (cfg Config) importTimeout() (time.Duration, error) {
	rescue := cfg.rescueAfter()
	timeout := cfg.ImportTimeout
	if timeout <= 0 {
		timeout = rescue - rescue/10
	}
	if timeout >= rescue {
		return 0, fmt.Errorf("job queue: the import timeout %s must be shorter than the %s after which stuck imports are rescued", timeout, rescue)
	}
	return timeout, nil
}

// rescueAfter is how long an import may run before another replica may
// take it over.
func (cfg Config) rescueAfter() time.Duration {
	if cfg.RescueStuckImportsAfter <= 0 {
		return 10 * time.Minute
	}
	return cfg.RescueStuckImportsAfter
}

// newQueue makes the job queue with the workers and periodic jobs of the
// imports (imports, their callbacks, the sweep of imports the queue gave
// up on) and of the lead events (deliveries, the clean-up of old events),
// and hands it to both areas.
func newQueue(st *store.Store, cfg Config, jobTimeout time.Duration, importsArea *imports.Area, leadsArea *leads.Area) (*store.Queue, error) {
	workers := river.NewWorkers()
	importsArea.AddWorkers(workers)
	leadsArea.AddWorkers(workers)
	queue, err := river.NewClient(riverdatabasesql.New(st.DB().DB), &river.Config{
		Queues:  cfg.queues(),
		Workers: workers,
		// Polling keeps the queue on plain database/sql (no LISTEN); a
		// short interval keeps the wait between POST and processing small.
		PollOnly:          true,
		FetchPollInterval: queuePollInterval,
		// A busy queue fetches again this soon after a fetch that filled
		// its workers: River's 100 ms would cap deliveries at ten times the
		// workers a second however fast the receivers answer.
		FetchCooldown:        queueFetchCooldown,
		JobTimeout:           jobTimeout,
		RescueStuckJobsAfter: cfg.rescueAfter(),
		PeriodicJobs:         append(importsArea.PeriodicJobs(), leadsArea.PeriodicJobs()...),
		Logger:               newQueueLogger(slog.Default().Handler(), queuePollInterval),
		Middleware:           queuetrace.Middleware(),
	})
	if err != nil {
		return nil, fmt.Errorf("job queue: %w", err)
	}
	importsArea.UseQueue(queue)
	leadsArea.UseQueue(queue)
	return queue, nil
}

// queues are the queues this process works: imports in their own (and in
// River's default queue, where earlier versions queued them), callbacks in
// the default queue, and deliveries in their own unless the process sends
// none. The delivery worker stays registered either way, so the
// outbox can still insert deliveries for other processes to send.
func (cfg Config) queues() map[string]river.QueueConfig {
	n := cfg.ImportWorkers
	if n <= 0 {
		n = 2
	}
	queues := map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: n},
		imports.Queue: {MaxWorkers: n, FetchPollInterval: importPollInterval}}
	if cfg.SendNoDeliveries {
		return queues
	}
	queues[leads.DeliveryQueue] = river.QueueConfig{MaxWorkers: leads.DeliveryWorkers(cfg.WebhookWorkers)}
	return queues
}

// queuePollInterval is how often the queue looks for new work: the longest
// an import waits between being accepted and being started on an idle server.
const queuePollInterval = 200 * time.Millisecond

// importPollInterval is how often the imports' queue looks for new work.
// Every import waited half of queuePollInterval on average before it
// started, about a tenth of a 10,000-job import's time; a fetch from the
// queue's index costs little next to an import.
const importPollInterval = 50 * time.Millisecond

// queueFetchCooldown is the least time between two fetches of a busy queue.
const queueFetchCooldown = 10 * time.Millisecond

// NewGRPCServer returns a gRPC server with every service, health and
// reflection registered. Callers are authenticated by a tap handle, from
// the call's headers, before its request message is read (health and
// reflection are open, as probes and grpcurl expect). Interceptors then run
// outermost first: the call gets its request id and access log line, then
// its metrics (both see the final code), panics become Internal, every
// error gets a code, the caller the tap found is required, and the call
// waits for a place of the admission control (Admit). Unary calls take
// these steps in one interceptor, unaryCalls; streams in a chain.
func (s *Services) NewGRPCServer(opts ...grpc.ServerOption) *grpc.Server {
	unary := &unaryCalls{services: s, proxies: s.trustedProxies}
	stream := []grpc.StreamServerInterceptor{anonymousStream, untrustedForwarding(s.trustedProxies), accessLogStream}
	if m := s.metrics.GRPC(); m != nil {
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
				return calls.admit(ctx, addressKey(s.callingClient(ctx, info)))
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
	registerDecoding(srv, &jobboardv2.JobImportService_ServiceDesc, &grpcImports{core: s.Imports}, requestLimit)
	registerDecoding(srv, &jobboardv2.WebhookService_ServiceDesc, &grpcWebhooks{core: s.Webhooks}, requestLimit)
	registerDecoding(srv, &jobboardv2.EventService_ServiceDesc, &grpcEvents{core: s.Events}, requestLimit)
	healthpb.RegisterHealthServer(srv, s.Health)
	// Reflection answers from descriptors with comments, so grpcurl
	// describe shows the API documentation.
	descriptors.RegisterReflection(srv)
	if m := s.metrics.GRPC(); m != nil {
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
func (s *Services) authenticateTap(ctx context.Context, info *tap.Info) (context.Context, error) {
	started := time.Now()
	client := func() string { return s.callingClient(ctx, info) }
	lookupCtx := withLazyDeadline(ctx, started.Add(tapLookupTimeout))
	defer lookupCtx.stop()
	caller, err := s.Auth.AuthenticateGRPCPeer(lookupCtx, info.FullMethodName, info.Header, client)
	if err != nil {
		// The interceptors never see this call: it gets its access log
		// line and its metrics here, in the same form.
		logged := calllog.StartedAt(first(info.Header, "x-request-id"), started)
		endCall(ctx, logged, info.FullMethodName, err)
		if m := s.metrics.GRPC(); m != nil {
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
		return errBadCredentials
	}
	// The tap handle found the caller before this call's log line began.
	calllog.NoteAccount(ctx, c.AccountID)
	noteCertificate(ctx, c)
	return nil
}

// queueDepth reads the queue's depth for the metrics scrape.
func queueDepth(st *store.Store) metrics.QueueDepthFunc {
	return func(ctx context.Context) ([]metrics.QueueJobs, error) {
		rows, err := st.QueueDepth(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]metrics.QueueJobs, len(rows))
		for i, r := range rows {
			out[i] = metrics.QueueJobs{Kind: r.Kind, State: r.State, Count: r.Count}
		}
		return out, nil
	}
}

// callingClient is the address a call comes from: its peer's, or the one
// a trusted proxy forwards for; "" when unknown.
func (s *Services) callingClient(ctx context.Context, info *tap.Info) string {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return ""
	}
	return s.trustedProxies.Client(p.Addr.String(), strings.Join(info.Header.Get("x-forwarded-for"), ","))
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
