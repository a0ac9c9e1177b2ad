package metrics

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// scrapeReadTimeout bounds a database read a scrape runs, so a slow
// database delays a scrape by little and never piles up scrapes: well
// under the shortest scrape timeout a deployment would set (the
// topology's is 2 s). A pooler that holds a query while it cannot reach
// the primary would otherwise hold the scrape too, and the scrape would
// fail as a whole, the gauges that say the database is down with it.
const scrapeReadTimeout = time.Second

// scrapeRead is a value read from the database when scraped rather than
// kept up to date: only the database knows it (the queue every replica
// shares, where the read database stands). The answer is kept for
// cacheFor, so scrapes in a loop (the endpoint is open) cost the database
// one query per interval, not one each; concurrent scrapes wait for the
// one read. A read that fails leaves the last answer in place, with the
// time it was read; the first failure of a spell is logged, naming what
// (the queue depth, the read database's replication), and so is the
// first success after it.
type scrapeRead[T any] struct {
	what     string
	read     func(ctx context.Context) (T, error)
	cacheFor time.Duration

	mu      sync.Mutex
	value   T
	tried   time.Time // the last read, whatever its outcome
	readAt  time.Time // the last read that succeeded; zero before one
	lastErr error
}

// get returns the last value read, the time it was read and the error of
// the last try, reading again when the last try is older than cacheFor.
func (r *scrapeRead[T]) get() (T, time.Time, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.tried.IsZero() && time.Since(r.tried) < r.cacheFor {
		return r.value, r.readAt, r.lastErr
	}
	ctx, cancel := context.WithTimeout(context.Background(), scrapeReadTimeout)
	defer cancel()
	v, err := r.read(ctx)
	switch {
	case err != nil && (r.lastErr == nil || r.tried.IsZero()):
		slog.Warn("metrics: read failed; the last values read stay until a read succeeds", "what", r.what, "error", err.Error())
	case err == nil && r.lastErr != nil:
		slog.Info("metrics: read succeeded again", "what", r.what)
	}
	r.tried, r.lastErr = time.Now(), err
	if err == nil {
		r.value, r.readAt = v, r.tried
	}
	return r.value, r.readAt, r.lastErr
}
