package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/truckjobs/jobboard/server/auth"
	"github.com/truckjobs/jobboard/server/drivers"
	"github.com/truckjobs/jobboard/server/grpcapi"
	"github.com/truckjobs/jobboard/server/imports"
	"github.com/truckjobs/jobboard/server/leads"
	"github.com/truckjobs/jobboard/server/search"

	"github.com/truckjobs/jobboard/server/jobs"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	"google.golang.org/protobuf/proto"

	"github.com/truckjobs/jobboard/internal/forwarded"
	"github.com/truckjobs/jobboard/internal/metrics"
	"github.com/truckjobs/jobboard/internal/tracing/queuetrace"
	"github.com/truckjobs/jobboard/server/admission"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/pagetoken"
	"github.com/truckjobs/jobboard/server/ratelimit"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/webhook"
)

// Services are the implementations behind both the gRPC server and the
// in-process REST gateway.
type Services struct {
	Auth    *auth.Authenticator
	Jobs    *jobs.Service
	Drivers *drivers.Service
	Intake  *drivers.IntakeService
	// Search is the job search of the board's own services.
	Search  *search.Service
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
	// InternalTokenPrevious is the internal token being rotated out: it is
	// accepted too until it is unset, so the internal services can move
	// to InternalToken one at a time.
	InternalTokenPrevious string
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
		Auth: auth.New(st, []string{cfg.InternalToken, cfg.InternalTokenPrevious}, ratelimit.New(cfg.RateLimit, cfg.RateBurst),
			ratelimit.New(cfg.AuthFailureLimit, cfg.AuthFailureBurst)),
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
	if s.admission, err = newAdmission(cfg.Admission, cfg.Metrics); err != nil {
		return nil, err
	}
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
	s.Drivers.UseEvents(s.Outbox)
	s.Search = search.New(st, s.Jobs.Tokens(), cfg.Now)
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
		if err := cfg.Metrics.WatchReplication(readReplication(st)); err != nil {
			return nil, err
		}
	}
	if err := cfg.Metrics.WatchQueue(queueDepth(st), append(imports.Kinds(), leads.DeliveryKind())...); err != nil {
		return nil, err
	}
	if err := cfg.Metrics.WatchPrimary(primaryStatus(st)); err != nil {
		return nil, err
	}
	if err := cfg.Metrics.WatchKeys(s.Auth.Keys().Watching); err != nil {
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

// queueDepth reads the queue's depth for the metrics scrape.
func queueDepth(st *store.Store) metrics.QueueDepthFunc {
	return func(ctx context.Context) ([]metrics.QueueJobs, error) {
		rows, err := st.QueueDepth(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]metrics.QueueJobs, len(rows))
		for i, r := range rows {
			out[i] = metrics.QueueJobs{Kind: r.Kind, State: r.State, Count: r.Count,
				Oldest: time.Duration(r.OldestSeconds * float64(time.Second))}
		}
		return out, nil
	}
}

// readReplication reads where the read database stands for the metrics
// scrape.
func readReplication(st *store.Store) func(ctx context.Context) (metrics.Replication, error) {
	return func(ctx context.Context) (metrics.Replication, error) {
		r, err := st.ReadReplication(ctx)
		return metrics.Replication{Standby: r.Standby, LagSeconds: r.LagSeconds, LagBytes: r.LagBytes}, err
	}
}

// primaryStatus reads what the database the service writes to says of
// itself for the metrics scrape.
func primaryStatus(st *store.Store) func(ctx context.Context) (metrics.Primary, error) {
	return func(ctx context.Context) (metrics.Primary, error) {
		p, err := st.PrimaryStatus(ctx)
		out := metrics.Primary{InRecovery: p.InRecovery, Slots: make([]metrics.ReplicationSlot, len(p.Slots))}
		for i, s := range p.Slots {
			out.Slots[i] = metrics.ReplicationSlot{Name: s.Name, Active: s.Active, RetainedBytes: s.RetainedBytes}
		}
		return out, err
	}
}

// NewGRPCServer returns the gRPC server of every service (grpcapi.New).
func (s *Services) NewGRPCServer(opts ...grpc.ServerOption) *grpc.Server {
	return grpcapi.New(grpcapi.Config{Auth: s.Auth, Jobs: s.Jobs, Drivers: s.Drivers, Intake: s.Intake,
		Search: s.Search, Imports: s.Imports, Webhooks: s.Webhooks, Events: s.Events, Health: s.Health, Metrics: s.metrics,
		TrustedProxies: s.trustedProxies, Admit: s.admit}, opts...)
}
