package leads

import (
	"net/http"
	"time"

	"github.com/riverqueue/river"
	"google.golang.org/protobuf/proto"

	"github.com/truckjobs/jobboard/internal/metrics"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/webhook"
)

// Config is what the lead events' services and workers need.
type Config struct {
	Store *store.Store
	Links call.Links
	// Retry is the deliveries' schedule and timeout, the callbacks'.
	Retry  webhook.RetryPolicy
	Client *http.Client
	// Render writes an event's data and a delivery's body as the REST API
	// shows the object (gateway/render.JSON).
	Render func(proto.Message) ([]byte, error)
	// AllowPrivate lifts the public-address rule on endpoint URLs
	// (JOBBOARD_CALLBACK_ALLOW_PRIVATE).
	AllowPrivate bool
	// DisableAfter is how long every attempt to an endpoint may fail before
	// it is disabled; 0 means DefaultWebhookDisableAfter.
	DisableAfter time.Duration
	// Workers is how many deliveries this process sends at once; 0 means
	// DefaultWebhookWorkers.
	Workers int
	// Metrics may be nil.
	Metrics *metrics.Metrics
}

// Area is the lead events wired: the webhook endpoints and the feed, the
// outbox every area writes its events through, and the queue's workers
// that deliver them and remove them past their retention.
type Area struct {
	Webhooks *WebhookService
	Events   *EventService
	Outbox   *Outbox

	deliveries *deliveryWorker
	cleaner    *eventCleaner
}

// New wires the area over cfg.Store. Its services queue nothing until
// UseQueue gives them the queue.
func New(cfg Config) *Area {
	disableAfter := cfg.DisableAfter
	if disableAfter <= 0 {
		disableAfter = DefaultWebhookDisableAfter
	}
	return &Area{
		Webhooks: &WebhookService{store: cfg.Store, links: cfg.Links, allowPrivate: cfg.AllowPrivate},
		Events:   &EventService{store: cfg.Store, links: cfg.Links},
		Outbox:   &Outbox{render: cfg.Render},
		deliveries: &deliveryWorker{RetryPolicy: cfg.Retry, store: cfg.Store, client: cfg.Client, render: cfg.Render,
			disableAfter: disableAfter, shares: newDeliveryShares(DeliveryWorkers(cfg.Workers), time.Now), metrics: cfg.Metrics},
		cleaner: &eventCleaner{store: cfg.Store, now: time.Now},
	}
}

// DeliveryWorkers is the deliveries a process sends at once when it is
// configured with n: n, or DefaultWebhookWorkers for 0.
func DeliveryWorkers(n int) int {
	if n <= 0 {
		return DefaultWebhookWorkers
	}
	return n
}

// AddWorkers registers the delivery and clean-up workers.
func (a *Area) AddWorkers(workers *river.Workers) {
	river.AddWorker(workers, a.deliveries)
	river.AddWorker(workers, a.cleaner)
}

// PeriodicJobs are the area's jobs the queue's leader inserts.
func (a *Area) PeriodicJobs() []*river.PeriodicJob { return []*river.PeriodicJob{eventCleanupJob()} }

// UseQueue gives the outbox and the webhook actions the queue their
// deliveries go through: the queue's client is made after its workers.
func (a *Area) UseQueue(q *store.Queue) {
	a.Outbox.queue = q
	a.Webhooks.queue = q
}

// DeliveryKind names the delivery's queue job, for the queue's metrics.
func DeliveryKind() string { return deliveryArgs{}.Kind() }
