package imports

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/truckjobs/jobboard/server/jobs"

	"github.com/riverqueue/river"

	"github.com/truckjobs/jobboard/domain"
	"github.com/truckjobs/jobboard/internal/metrics"
	"github.com/truckjobs/jobboard/server/store"
)

// An import the queue will not run again is completed with every job
// failed (docs/api.md, Job imports): by its worker when the last attempt fails,
// or else by the sweep, which finds the imports the worker never saw end
// (a stuck job rescued after its last attempt is discarded without
// running; a job row deleted by hand).

// giveUpTimeout bounds completing an import as failed. It runs in a
// context of its own: the attempt's may be the one that ran out of time.
const giveUpTimeout = 30 * time.Second

// DefaultSweepImportsEvery is how often the sweep looks for imports the
// queue gave up on.
const DefaultSweepImportsEvery = time.Minute

// sweepBatch is the most imports one sweep completes; the next takes the rest.
const sweepBatch = 100

// NotProcessed starts the one error message of an import completed as failed.
const NotProcessed = "the import could not be processed and none of its jobs was saved: "

// giveUp completes the import of job as failed, with its callback and
// event, and marks the queue job done, in one transaction. An import
// already complete is left as it is; one that no longer exists is
// store.ErrNotFound.
func (w *importWorker) giveUp(ctx context.Context, job *river.Job[importArgs], cause error) error {
	reason := fmt.Sprintf("its last attempt (%d of %d) failed with an internal error", job.Attempt, job.MaxAttempts)
	switch {
	case errors.Is(cause, jobs.ErrUnreadablePayload):
		reason = "its stored jobs could not be read"
	case errors.Is(ctx.Err(), context.DeadlineExceeded) && w.timeout > 0:
		reason = fmt.Sprintf("its last attempt (%d of %d) ran longer than the %s allowed", job.Attempt, job.MaxAttempts, w.timeout)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), giveUpTimeout)
	defer cancel()
	return w.store.InTx(ctx, func(tx *store.Tx) error {
		imp, payload, err := tx.LockImportWithPayload(ctx, job.Args.ImportID)
		if err != nil {
			return err
		}
		if imp.Status != domain.ImportComplete {
			err := w.complete(ctx, tx, store.QueueFromContext(ctx), imp, failedResults(payload, NotProcessed+reason))
			if err != nil {
				return err
			}
		}
		return store.CompleteQueueJob(ctx, tx, job)
	})
}

// failedResults builds the results of an import none of whose jobs was
// processed: every job failed, one error entry without a reference
// saying why.
func failedResults(payload store.ImportPayload, message string) *store.ImportResults {
	n := jobs.StoredJobCount(payload)
	return &store.ImportResults{Failed: n, Processed: n, Errors: []store.ImportError{{Messages: []string{message}}}}
}

// importSweepArgs is the periodic queue job that completes the imports the
// queue gave up on.
type importSweepArgs struct{}

// Kind names the queue job.
func (importSweepArgs) Kind() string { return "job_import_sweep" }

// importSweeper completes stranded imports: still pending or running, but
// with no queue job that may run them.
type importSweeper struct {
	river.WorkerDefaults[importSweepArgs]
	store *store.Store
	// queue inserts the callbacks; set once the client exists.
	queue *store.Queue
	importCompleter
	metrics *metrics.Metrics
}

// Work runs one sweep.
func (w *importSweeper) Work(ctx context.Context, _ *river.Job[importSweepArgs]) error {
	_, err := w.sweep(ctx)
	return err
}

// sweep completes up to sweepBatch stranded imports and returns how many
// it completed. Each is completed in its own transaction, which checks
// again under the import's row lock that it is neither complete nor held
// by a live queue job: sweeps running at once complete an import once.
func (w *importSweeper) sweep(ctx context.Context) (int, error) {
	stranded, err := w.store.StrandedImports(ctx, importArgs{}.Kind(), sweepBatch)
	if err != nil {
		return 0, err
	}
	done := 0
	for _, s := range stranded {
		reason := "its queue job no longer exists"
		if s.State != nil && s.Attempts != nil {
			reason = fmt.Sprintf("the queue stopped trying after %d attempts (its job was %s)", *s.Attempts, *s.State)
		}
		failed, err := w.fail(ctx, s.ID, reason)
		if errors.Is(err, store.ErrNotFound) {
			continue // deleted with its account meanwhile
		}
		if err != nil {
			return done, fmt.Errorf("sweep job import %s: %w", s.ID, err)
		}
		if failed {
			done++
			w.metrics.ImportSwept()
			slog.ErrorContext(ctx, "job import left unfinished by the queue; completed with every job failed",
				"id", s.ID, "reason", reason)
		}
	}
	return done, nil
}

// fail completes a stranded import as failed, with its callback and event,
// in one transaction that checks again, under the import's row lock, that
// it is neither complete nor held by a live queue job (a sweep running at
// the same time may have completed it, the queue may have taken it up).
func (w *importSweeper) fail(ctx context.Context, id, reason string) (failed bool, err error) {
	err = w.store.InTx(ctx, func(tx *store.Tx) error {
		failed = false
		imp, payload, err := tx.LockImportWithPayload(ctx, id)
		if err != nil || imp.Status == domain.ImportComplete {
			return err
		}
		live, err := tx.ImportQueueJobLive(ctx, id, importArgs{}.Kind())
		if err != nil || live {
			return err
		}
		if err := w.complete(ctx, tx, w.queue, imp, failedResults(payload, NotProcessed+reason)); err != nil {
			return err
		}
		failed = true
		return nil
	})
	return failed, err
}
