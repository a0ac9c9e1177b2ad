package leads

import (
	"context"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/truckjobs/jobboard/server/store"
)

// Retention of events and delivery attempts (docs/api.md, Events feed):
// kept EventRetention, removed by a clean-up every eventCleanupEvery in
// batches of eventCleanupBatch rows.
const (
	EventRetention    = 30 * 24 * time.Hour
	eventCleanupEvery = time.Hour
	eventCleanupBatch = 1000
)

// eventCleanupArgs is the periodic queue job that removes events and
// delivery attempts past their retention.
type eventCleanupArgs struct{}

// Kind names the queue job.
func (eventCleanupArgs) Kind() string { return "event_cleanup" }

// eventCleaner works the clean-up.
type eventCleaner struct {
	river.WorkerDefaults[eventCleanupArgs]
	store *store.Store
	now   func() time.Time
}

// Work removes what is older than the retention.
func (w *eventCleaner) Work(ctx context.Context, _ *river.Job[eventCleanupArgs]) error {
	n, err := w.store.RemoveOldEvents(ctx, w.now().Add(-EventRetention), eventCleanupBatch)
	if n > 0 {
		slog.InfoContext(ctx, "removed events and delivery attempts past their retention", "rows", n,
			"retention_days", int(EventRetention/(24*time.Hour)))
	}
	return err
}

// eventCleanupJob is the clean-up as a periodic job: the queue's leader
// alone inserts it, so replicas never clean up at once; one that fails is
// not retried, the next comes within the hour.
func eventCleanupJob() *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(eventCleanupEvery),
		func() (river.JobArgs, *river.InsertOpts) {
			return eventCleanupArgs{}, &river.InsertOpts{MaxAttempts: 1}
		}, &river.PeriodicJobOpts{RunOnStart: true})
}
