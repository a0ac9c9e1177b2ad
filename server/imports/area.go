package imports

import (
	"context"
	"net/http"
	"time"

	"github.com/riverqueue/river"
	"google.golang.org/protobuf/proto"

	"github.com/truckjobs/jobboard/internal/metrics"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/jobs"
	"github.com/truckjobs/jobboard/server/leads"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/webhook"
)

// Config is what the imports' service and workers need.
type Config struct {
	Store *store.Store
	Jobs  *jobs.Service
	// Outbox writes each completed import's event.
	Outbox *leads.Outbox
	Links  call.Links
	// AllowPrivateCallbacks lifts the public-address rule on callback URLs
	// (development, tests).
	AllowPrivateCallbacks bool
	// Attempts is how many times the queue tries an import; 0 means
	// DefaultImportAttempts.
	Attempts int
	// Timeout is how long one attempt may run.
	Timeout time.Duration
	// SweepEvery is how often the leader looks for imports the queue gave
	// up on; 0 means DefaultSweepImportsEvery.
	SweepEvery time.Duration
	// Retry, Client and Render send the completion callbacks.
	Retry  webhook.RetryPolicy
	Client *http.Client
	Render func(proto.Message) ([]byte, error)
	// Metrics may be nil.
	Metrics *metrics.Metrics
}

// Area is the imports wired: the service, and the queue's workers that run
// the imports, send their callbacks and sweep the ones given up on.
type Area struct {
	Service *JobImportService

	worker     *importWorker
	callbacks  *callbackWorker
	sweeper    *importSweeper
	sweepEvery time.Duration
}

// New wires the area over cfg.Store. Its service queues nothing until
// UseQueue gives it the queue.
func New(cfg Config) *Area {
	attempts := cfg.Attempts
	if attempts <= 0 {
		attempts = DefaultImportAttempts
	}
	sweepEvery := cfg.SweepEvery
	if sweepEvery <= 0 {
		sweepEvery = DefaultSweepImportsEvery
	}
	completer := importCompleter{outbox: cfg.Outbox, callbackAttempts: cfg.Retry.MaxAttempts()}
	return &Area{
		Service: &JobImportService{store: cfg.Store, importAttempts: attempts, links: cfg.Links,
			allowPrivateCallbacks: cfg.AllowPrivateCallbacks, tokens: cfg.Jobs.Tokens()},
		worker: &importWorker{store: cfg.Store, jobs: cfg.Jobs, importCompleter: completer,
			timeout: cfg.Timeout, metrics: cfg.Metrics},
		callbacks: &callbackWorker{RetryPolicy: cfg.Retry, store: cfg.Store, client: cfg.Client,
			render: cfg.Render, metrics: cfg.Metrics},
		sweeper:    &importSweeper{store: cfg.Store, importCompleter: completer, metrics: cfg.Metrics},
		sweepEvery: sweepEvery,
	}
}

// AddWorkers registers the import, callback and sweep workers.
func (a *Area) AddWorkers(workers *river.Workers) {
	river.AddWorker(workers, a.worker)
	river.AddWorker(workers, a.callbacks)
	river.AddWorker(workers, a.sweeper)
}

// PeriodicJobs are the area's jobs the queue's leader inserts: the sweep,
// once a period; a sweep that fails is not retried, the next one comes
// soon.
func (a *Area) PeriodicJobs() []*river.PeriodicJob {
	return []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(a.sweepEvery),
		func() (river.JobArgs, *river.InsertOpts) {
			return importSweepArgs{}, &river.InsertOpts{MaxAttempts: 1}
		}, &river.PeriodicJobOpts{RunOnStart: true})}
}

// UseQueue gives the service and the sweeper the queue imports and
// callbacks go through: the queue's client is made after its workers.
func (a *Area) UseQueue(q *store.Queue) {
	a.Service.queue = q
	a.sweeper.queue = q
}

// Kinds name the imports' and the callbacks' queue jobs, for the queue's
// metrics.
func Kinds() []string { return []string{importArgs{}.Kind(), callbackArgs{}.Kind()} }

// Sweep completes, now, the imports the queue gave up on without their
// worker seeing it, as the leader's periodic job does; it says how many.
func (a *Area) Sweep(ctx context.Context) (int, error) { return a.sweeper.sweep(ctx) }
