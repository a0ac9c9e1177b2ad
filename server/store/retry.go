package store

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// deadlockAttempts is how many times a write transaction rolled back by a
// deadlock is run. PostgreSQL aborts only one transaction of the cycle and
// the others go on, so the second run usually finds the way clear; a third
// covers a cycle with yet another writer.
const deadlockAttempts = 3

// deadlockBackoff is the mean wait before the second run, doubled for each
// run after it. The detector has already waited deadlock_timeout (1 s by
// default) before aborting, so the wait only keeps two victims from
// meeting again in step.
const deadlockBackoff = 10 * time.Millisecond

// inRetriedTx is inTx for write transactions that may take part in a lock
// cycle with other writers (the intake's job applications against a rename
// of their job, whose trigger rewrites them, each locking rows the other
// wants): a transaction PostgreSQL rolls back for a deadlock is run again
// from the start in a new transaction, so the client never sees an error
// that running again clears. fn may run several times: whatever it keeps
// outside the transaction must be set afresh by each run.
//
// Serialization failures (40001) are not retried: every write transaction
// runs at READ COMMITTED, where the primary never raises them.
func (s *Store) inRetriedTx(ctx context.Context, op string, fn func(tx *sqlx.Tx) error) error {
	return retryDeadlocks(ctx, op, deadlockAttempts, func() error { return s.inTx(ctx, fn) })
}

// retryDeadlocks runs run up to attempts times while it fails with a
// deadlock, waiting a short jittered backoff between runs. A context ended
// while waiting stops the retries, returning the deadlock with the
// context's error.
func retryDeadlocks(ctx context.Context, op string, attempts int, run func() error) error {
	wait := deadlockBackoff
	for attempt := 1; ; attempt++ {
		err := run()
		if err == nil || attempt >= attempts || !isDeadlock(err) {
			return err
		}
		slog.WarnContext(ctx, "transaction rolled back by a deadlock; running it again",
			"op", op, "attempt", attempt, "error", err)
		t := time.NewTimer(wait/2 + rand.N(wait))
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		case <-t.C:
		}
		wait *= 2
	}
}

// isDeadlock reports whether err is PostgreSQL aborting a transaction to
// break a deadlock (SQLSTATE 40P01): nothing is wrong with the
// transaction, and run again it may well succeed.
func isDeadlock(err error) bool {
	var pqErr *pq.Error
	return errors.As(err, &pqErr) && pqErr.Code == "40P01"
}
