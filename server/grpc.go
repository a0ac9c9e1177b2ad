package server

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/auth"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/selector"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/proto"

	jobboardv2 "jobboard/gen/jobboard/v2"
	"jobboard/internal/metrics"
	"jobboard/server/descriptors"
	"jobboard/server/ratelimit"
	"jobboard/server/store"
	"jobboard/server/webhook"
)

// Services are the implementations behind both the gRPC server and the
// in-process REST gateway.
type Services struct {
	Auth    *Authenticator
	Jobs    *JobService
	Drivers *DriverService
	Intake  *DriverIntakeService
	Imports *JobImportService
	Health  *health.Server
	// Queue runs imports. It inserts from any process; it works jobs only
	// once Start is called (serve does, tests may not).
	Queue *river.Client[*sql.Tx]
	// sweeper completes the imports the queue gave up on.
	sweeper *importSweeper
	// metrics is nil when the process exposes none.
	metrics *metrics.Metrics
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
	// DefaultCallbackRetrySchedule.
	CallbackRetrySchedule []time.Duration
	// CallbackTimeout bounds one attempt; 0 means DefaultCallbackTimeout.
	CallbackTimeout time.Duration
	// RenderCallback writes a callback body, the JSON the REST API gives for
	// retrieving the import. It is required for callbacks to be sent.
	RenderCallback func(proto.Message) ([]byte, error)
	// RateLimit is the requests a second each API key may make on average,
	// RateBurst how many at once; RateLimit <= 0 means no limit.
	RateLimit float64
	RateBurst int
	// Metrics receives the gRPC, import, callback, queue and database pool
	// metrics; nil means none are kept.
	Metrics *metrics.Metrics
}

// NewServices wires the services over st.
func NewServices(st *store.Store, cfg Config) (*Services, error) {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	s := &Services{
		Auth:    NewAuthenticator(st, cfg.InternalToken),
		Jobs:    NewJobService(st, now),
		Drivers: NewDriverService(st),
		Intake:  NewDriverIntakeService(st),
		Health:  health.NewServer(),
		metrics: cfg.Metrics,
	}
	s.Auth.limiter = ratelimit.New(cfg.RateLimit, cfg.RateBurst)
	schedule := cfg.CallbackRetrySchedule
	if len(schedule) == 0 {
		schedule = DefaultCallbackRetrySchedule
	}
	timeout := cfg.CallbackTimeout
	if timeout <= 0 {
		timeout = DefaultCallbackTimeout
	}
	if cfg.RenderCallback == nil {
		return nil, errors.New("job queue: RenderCallback is required")
	}
	callbacks := &callbackWorker{store: st, client: webhook.NewClient(timeout, cfg.AllowPrivateCallbacks),
		timeout: timeout, schedule: schedule, render: cfg.RenderCallback, metrics: cfg.Metrics}
	rescue := cfg.RescueStuckImportsAfter
	if rescue <= 0 {
		rescue = 10 * time.Minute
	}
	// An import still running past its timeout is cancelled and rolled
	// back; rescue must come later, or a slow import would run twice.
	jobTimeout := cfg.ImportTimeout
	if jobTimeout <= 0 {
		jobTimeout = rescue - rescue/10
	}
	if jobTimeout >= rescue {
		return nil, fmt.Errorf("job queue: the import timeout %s must be shorter than the %s after which stuck imports are rescued", jobTimeout, rescue)
	}
	sweeper := &importSweeper{store: st, callbackAttempts: callbacks.maxAttempts(), metrics: cfg.Metrics}
	workers := river.NewWorkers()
	river.AddWorker(workers, &importWorker{store: st, jobs: s.Jobs, callbackAttempts: callbacks.maxAttempts(),
		timeout: jobTimeout, metrics: cfg.Metrics})
	river.AddWorker(workers, callbacks)
	river.AddWorker(workers, sweeper)
	sweepEvery := cfg.SweepImportsEvery
	if sweepEvery <= 0 {
		sweepEvery = DefaultSweepImportsEvery
	}
	maxWorkers := cfg.ImportWorkers
	if maxWorkers <= 0 {
		maxWorkers = 2
	}
	queue, err := river.NewClient(riverdatabasesql.New(st.DB().DB), &river.Config{
		Queues:  map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: maxWorkers}},
		Workers: workers,
		// Polling keeps the queue on plain database/sql (no LISTEN); a
		// short interval keeps the wait between POST and processing small.
		PollOnly:             true,
		FetchPollInterval:    200 * time.Millisecond,
		JobTimeout:           jobTimeout,
		RescueStuckJobsAfter: rescue,
		// Only the leader queues the sweep, once a period; a sweep that
		// fails is not retried: the next one comes soon.
		PeriodicJobs: []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(sweepEvery),
			func() (river.JobArgs, *river.InsertOpts) {
				return ImportSweepArgs{}, &river.InsertOpts{MaxAttempts: 1}
			}, &river.PeriodicJobOpts{RunOnStart: true})},
		Logger: slog.Default(),
	})
	if err != nil {
		return nil, fmt.Errorf("job queue: %w", err)
	}
	s.Queue = queue
	sweeper.queue = queue
	s.sweeper = sweeper
	if err := cfg.Metrics.WatchDB(st.DB().DB); err != nil {
		return nil, err
	}
	if err := cfg.Metrics.WatchQueue(queueDepth(st), ImportArgs{}.Kind(), CallbackArgs{}.Kind()); err != nil {
		return nil, err
	}
	attempts := cfg.ImportAttempts
	if attempts <= 0 {
		attempts = DefaultImportAttempts
	}
	s.Imports = &JobImportService{store: st, queue: queue, importAttempts: attempts, publicURL: cfg.PublicURL, restPort: cfg.RESTPort, allowPrivateCallbacks: cfg.AllowPrivateCallbacks}
	return s, nil
}

// NewGRPCServer returns a gRPC server with every service, health and
// reflection registered. Interceptors run outermost first: the call gets
// its request id and access log line, then its metrics (both see the final
// code), panics become Internal, every error gets a code, then the caller
// is authenticated (health and reflection are open, as probes and grpcurl
// expect).
func (s *Services) NewGRPCServer(opts ...grpc.ServerOption) *grpc.Server {
	authenticate := func(ctx context.Context) (context.Context, error) {
		ctx, err := s.Auth.AuthenticateGRPC(ctx)
		if err == nil {
			noteCallAccount(ctx)
		}
		return ctx, err
	}
	unary := []grpc.UnaryServerInterceptor{accessLogUnary}
	stream := []grpc.StreamServerInterceptor{accessLogStream}
	if m := s.metrics.GRPC(); m != nil {
		unary = append(unary, m.UnaryServerInterceptor())
		stream = append(stream, m.StreamServerInterceptor())
	}
	unary = append(unary,
		recoveryInterceptor(),
		statusBoundary,
		selector.UnaryServerInterceptor(auth.UnaryServerInterceptor(authenticate), needsAuth),
	)
	stream = append(stream,
		selector.StreamServerInterceptor(auth.StreamServerInterceptor(authenticate), needsAuth),
	)
	srv := grpc.NewServer(append(opts, grpc.ChainUnaryInterceptor(unary...), grpc.ChainStreamInterceptor(stream...))...)
	jobboardv2.RegisterJobServiceServer(srv, s.Jobs)
	jobboardv2.RegisterDriverServiceServer(srv, s.Drivers)
	jobboardv2.RegisterDriverIntakeServiceServer(srv, s.Intake)
	jobboardv2.RegisterJobImportServiceServer(srv, s.Imports)
	healthpb.RegisterHealthServer(srv, s.Health)
	// Reflection answers from descriptors with comments, so grpcurl
	// describe shows the API documentation.
	descriptors.RegisterReflection(srv)
	if m := s.metrics.GRPC(); m != nil {
		m.InitializeMetrics(srv)
	}
	return srv
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

// needsAuth exempts health checks and reflection from authentication.
var needsAuth = selector.MatchFunc(func(_ context.Context, c interceptors.CallMeta) bool {
	return !strings.HasPrefix(c.FullMethod(), "/grpc.health.v1.") && !strings.HasPrefix(c.FullMethod(), "/grpc.reflection.")
})
