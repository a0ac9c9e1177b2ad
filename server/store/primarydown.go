package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
)

// With a read database, the lookups authentication makes (an API key's
// account, an internal caller's account) go to it while the primary cannot
// be reached, so that the reads it serves (the drivers list and detail,
// job search) keep answering through the primary's outage. Its answers are the
// primary's as of the replication lag. A revocation is a write on the
// primary, so none commits while the primary is down; one committed just
// before a crash and not yet replayed is the window of any replicated
// write.

// primaryAnswerWithin bounds how long an authentication lookup waits for
// the primary before the read database answers it. A key lookup is one
// index probe; the bound matters behind PgBouncer, which holds a query
// for a primary it cannot reach until its query_wait_timeout and ignores
// the query's cancellation meanwhile.
const primaryAnswerWithin = time.Second

// primaryCheckEvery paces the background checks of a primary known to be
// down.
const primaryCheckEvery = time.Second

// primaryCheckTimeout bounds one check, so that a check of a host that
// drops packets does not stay for the kernel's connect timeout.
const primaryCheckTimeout = 30 * time.Second

// ErrPrimaryDown means the primary did not answer a lookup moments ago and
// has not answered a check since, so the lookup was not sent to it.
// IsUnavailable reports it.
var ErrPrimaryDown = errors.New("primary database unreachable")

// primaryState remembers an outage of the primary, for authentication
// lookups only; everything else keeps trying the primary.
type primaryState struct {
	mu       sync.Mutex
	down     bool
	checking bool
	// authLookups counts the lookups the read database answered in the
	// primary's place.
	authLookups atomic.Uint64
}

// primaryIsDown reports whether the primary is known to be down; while it
// is, it starts one background check at a time.
func (s *Store) primaryIsDown() bool {
	p := &s.primary
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down && !p.checking {
		p.checking = true
		go s.checkPrimary()
	}
	return p.down
}

// checkPrimary pings the primary and ends the outage when it answers.
// Behind PgBouncer the ping waits in its queue and returns the moment a
// server (a restarted or promoted primary) takes it.
func (s *Store) checkPrimary() {
	ctx, cancel := context.WithTimeout(context.Background(), primaryCheckTimeout)
	err := s.db.PingContext(ctx)
	cancel()
	if err != nil {
		time.Sleep(primaryCheckEvery)
	}
	p := &s.primary
	p.mu.Lock()
	defer p.mu.Unlock()
	p.checking = false
	if err == nil && p.down {
		p.down = false
		slog.Info("primary database back; API keys are checked on it again")
	}
}

// primaryFailed starts an outage, logging it once.
func (s *Store) primaryFailed(err error) {
	p := &s.primary
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.down {
		p.down = true
		slog.Warn("primary database unreachable; API keys are checked on the read database until it is back, so the drivers list and detail and job search keep answering",
			"error", err)
	}
}

// authLookup runs fn, a lookup authentication makes, on the primary. With
// a read database it does not wait for a primary known to be down, nor
// longer than primaryAnswerWithin; both fail with ErrPrimaryDown, and a
// primary that cannot be reached starts an outage. The caller then asks
// the read database (replicaAuthLookup).
func authLookup[T any](ctx context.Context, s *Store, fn func(*sqlx.DB) (T, error)) (T, error) {
	if s.reads == nil {
		return fn(s.db)
	}
	var none T
	if s.primaryIsDown() {
		return none, ErrPrimaryDown
	}
	// fn may outlive the wait below (PgBouncer holds it); its answer then
	// goes nowhere.
	type answer struct {
		v   T
		err error
	}
	answered := make(chan answer, 1)
	go func() {
		v, err := fn(s.db)
		answered <- answer{v, err}
	}()
	timer := time.NewTimer(primaryAnswerWithin)
	defer timer.Stop()
	select {
	case a := <-answered:
		if IsUnavailable(a.err) && ctx.Err() == nil {
			s.primaryFailed(a.err)
		}
		return a.v, a.err
	case <-timer.C:
		err := fmt.Errorf("%w: no answer within %s", ErrPrimaryDown, primaryAnswerWithin)
		s.primaryFailed(err)
		return none, err
	case <-ctx.Done():
		return none, ctx.Err()
	}
}

// ErrNoReadDatabase: a lookup meant for the read database, without one.
var ErrNoReadDatabase = errors.New("no read database configured")

// replicaAuthLookup runs fn on the read database, for authentication while
// the primary cannot be reached.
func replicaAuthLookup[T any](s *Store, fn func(*sqlx.DB) (T, error)) (T, error) {
	var none T
	if s.reads == nil {
		return none, ErrNoReadDatabase
	}
	if err := replicaFresh(s.reads.db); err != nil {
		return none, err
	}
	v, err := fn(s.reads.db)
	if err == nil || errors.Is(err, ErrNotFound) {
		s.primary.authLookups.Add(1)
	}
	return v, err
}

// AccountIDByKeyHash returns the account owning the unrevoked key with the
// given hash, or ErrNotFound, from the primary (see authLookup).
func (s *Store) AccountIDByKeyHash(ctx context.Context, hash string) (int64, error) {
	// Every request runs this first: a prepared statement where the pool
	// reaches PostgreSQL directly (authLookup hands over s.db).
	return authLookup(ctx, s, func(*sqlx.DB) (int64, error) { return accountIDByKeyHash(ctx, s.getPrepared, hash) })
}

// ReplicaAccountIDByKeyHash is AccountIDByKeyHash answered by the read
// database, for while the primary cannot be reached.
func (s *Store) ReplicaAccountIDByKeyHash(ctx context.Context, hash string) (int64, error) {
	return replicaAuthLookup(s, func(db *sqlx.DB) (int64, error) { return accountIDByKeyHash(ctx, db.GetContext, hash) })
}

// getFunc runs a one-row query into dest: a pool's GetContext, or
// Store.getPrepared.
type getFunc func(ctx context.Context, dest any, query string, args ...any) error

func accountIDByKeyHash(ctx context.Context, get getFunc, hash string) (int64, error) {
	var id int64
	err := get(ctx, &id, `SELECT account_id FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL`, hash)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("look up api key: %w", err)
	}
	return id, nil
}

// CheckAccount returns nil when the account exists, ErrNotFound when it
// does not, from the primary (see authLookup).
func (s *Store) CheckAccount(ctx context.Context, id int64) error {
	_, err := authLookup(ctx, s, func(db *sqlx.DB) (struct{}, error) { return struct{}{}, checkAccount(ctx, db, id) })
	return err
}

// ReplicaCheckAccount is CheckAccount answered by the read database, for
// while the primary cannot be reached.
func (s *Store) ReplicaCheckAccount(ctx context.Context, id int64) error {
	_, err := replicaAuthLookup(s, func(db *sqlx.DB) (struct{}, error) { return struct{}{}, checkAccount(ctx, db, id) })
	return err
}

func checkAccount(ctx context.Context, db *sqlx.DB, id int64) error {
	var one int
	err := db.GetContext(ctx, &one, `SELECT 1 FROM accounts WHERE id = $1`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("check account %d: %w", id, err)
	}
	return nil
}

// replicaMaxAge bounds how old the read database's data may be for it to
// answer who a key belongs to: a standby whose last replayed commit is
// older may be missing any revocation since. The service's own job queue
// commits on the primary every few seconds, so a standby that still
// streams stays well within it; after a primary is lost, keys are checked
// on the standby for this long after its last commit, then refused (503).
const replicaMaxAge = 2 * time.Minute

// ErrReplicaTooOld: the read database is too far behind to check keys.
var ErrReplicaTooOld = errors.New("the read database is too far behind to check API keys")

// ErrReplicaUnanswered: the read database did not say its age within
// primaryAnswerWithin, so keys are not checked on it either.
var ErrReplicaUnanswered = errors.New("the read database did not answer in time to check API keys")

// replicaFresh refuses a standby whose last replayed commit is older than
// replicaMaxAge, or unknown; a database that is not in recovery (a
// promoted standby, or a plain database) is its own primary and fresh.
func replicaFresh(db *sqlx.DB) error { return replicaFreshWithin(db, primaryAnswerWithin) }

// replicaFreshWithin is replicaFresh, waiting for the answer no longer
// than within. A check cut by that bound is ErrReplicaUnanswered, which
// IsUnavailable reports: its own error would be the server's "canceling
// statement due to user request" (lib/pq's answer to a context that ends
// mid-statement), an internal error to the client of a busy standby.
func replicaFreshWithin(db *sqlx.DB, within time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	var fresh bool
	err := db.GetContext(ctx, &fresh, `SELECT NOT pg_is_in_recovery()
		OR coalesce(now() - pg_last_xact_replay_timestamp() < make_interval(secs => $1), false)`,
		replicaMaxAge.Seconds())
	if err != nil {
		return unansweredWithin(ctx, within, fmt.Errorf("check read database's age: %w", err))
	}
	if !fresh {
		return fmt.Errorf("%w (last replayed commit over %s ago)", ErrReplicaTooOld, replicaMaxAge)
	}
	return nil
}

// unansweredWithin is err, which a statement under ctx (bounded by within)
// failed with, as ErrReplicaUnanswered when the bound cut it, whatever err
// says: a statement under way answers the server's 57014, one not yet
// sent the context's own error. err is kept as text only: wrapped, a
// *pq.Error would stop IsUnavailable before the sentinel (it judges a
// server's error by its code alone), and a context's DeadlineExceeded
// would read as the request's own deadline at the boundary.
func unansweredWithin(ctx context.Context, within time.Duration, err error) error {
	if ctx.Err() == nil {
		return err
	}
	return fmt.Errorf("%w: no answer within %s (%v)", ErrReplicaUnanswered, within, err)
}
