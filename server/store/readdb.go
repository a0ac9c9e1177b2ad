package store

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// readRetryAfter is how long reads go to the primary after the read
// database failed, before one read tries it again.
const readRetryAfter = 5 * time.Second

// readConnectTimeout bounds a connection to the read database when its URL
// sets none, so that a standby that does not answer costs a read a few
// seconds before it falls back, not the whole request's time.
const readConnectTimeout = "2"

// readDB is the read database (a streaming hot standby) of the drivers
// list and detail. While it cannot be reached those reads go to the
// primary: a standby down makes them no slower than without one, and never
// makes them fail.
type readDB struct {
	db *sqlx.DB

	mu      sync.Mutex
	down    bool
	retryAt time.Time
	// fallbacks counts the reads the primary served in its place.
	fallbacks atomic.Uint64
	// now is time.Now; tests move it.
	now func() time.Time
}

// ReadURL serves the drivers list and detail and job search from the
// database at read, a streaming replica of url (docs/deploy.md 3's
// JOBBOARD_READ_DATABASE_URL), with the primary taking over while it cannot
// be reached. Empty: the primary serves them. The replica is not reached at Open: a standby down at start
// leaves the service to start and read from the primary.
func ReadURL(read string) Option {
	return func(s *Store) error {
		if read == "" {
			return nil
		}
		dsn, err := withDefaultSetting(read, "connect_timeout", readConnectTimeout)
		if err != nil {
			return err
		}
		db, _, err := openPool(dsn, nil)
		if err != nil {
			return err
		}
		sizePool(db)
		s.reads = &readDB{db: db, now: time.Now}
		return nil
	}
}

// ReadDatabaseStatus is what the service shows of its read database.
type ReadDatabaseStatus struct {
	// Configured: a read database is set.
	Configured bool
	// Up: its last read succeeded (or none failed yet).
	Up bool
	// Fallbacks counts the reads the primary served in its place.
	Fallbacks uint64
	// AuthLookups counts the API key and account lookups it answered
	// because the primary could not be reached.
	AuthLookups uint64
	// PrimaryDown: authentication found the primary unreachable and no
	// check has reached it since.
	PrimaryDown bool
}

// ReadDatabase reports the state of the read database.
func (s *Store) ReadDatabase() ReadDatabaseStatus {
	r := s.reads
	if r == nil {
		return ReadDatabaseStatus{}
	}
	s.primary.mu.Lock()
	primaryDown := s.primary.down
	s.primary.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	return ReadDatabaseStatus{Configured: true, Up: !r.down, Fallbacks: r.fallbacks.Load(),
		AuthLookups: s.primary.authLookups.Load(), PrimaryDown: primaryDown}
}

// ReadReplication is where the read database stands as a standby
// (metrics.Replication says what each field means).
type ReadReplication struct {
	Standby    bool    `db:"standby"`
	LagSeconds float64 `db:"lag_seconds"`
	LagBytes   float64 `db:"lag_bytes"`
}

// ReadReplication asks the read database whether it is a standby and how
// far its replay is behind the primary, whose WAL position is read first:
// the bytes between the two, and while there are any, the age of the last
// transaction the standby replayed. Measured against the primary, a
// standby cut off from it (its WAL receiver down, the link broken) shows
// its lag growing; measured on the standby alone, WAL it never received
// would look like no lag. With nothing to replay the lag is 0, however
// long the primary has been idle. The primary unreachable is an error.
func (s *Store) ReadReplication(ctx context.Context) (ReadReplication, error) {
	var r ReadReplication
	if s.reads == nil {
		return r, errors.New("no read database")
	}
	var primaryLSN string
	if err := s.db.GetContext(ctx, &primaryLSN, `SELECT pg_current_wal_lsn()::text`); err != nil {
		return r, err
	}
	err := s.reads.db.GetContext(ctx, &r, `
		SELECT standby, CASE WHEN behind > 0 THEN coalesce(replayed_ago, 0) ELSE 0 END AS lag_seconds,
		       behind AS lag_bytes
		  FROM (SELECT pg_is_in_recovery() AS standby,
		               coalesce(greatest(pg_wal_lsn_diff($1::pg_lsn, pg_last_wal_replay_lsn()), 0), 0)::float8 AS behind,
		               extract(epoch FROM now() - pg_last_xact_replay_timestamp())::float8 AS replayed_ago) r`, primaryLSN)
	return r, err
}

// ReplicationSlot is one replication slot of the primary and the WAL it
// keeps from being removed.
type ReplicationSlot struct {
	Name          string  `db:"slot_name"`
	Active        bool    `db:"active"`
	RetainedBytes float64 `db:"retained_bytes"`
}

// PrimaryStatus is what the database the service writes to says of
// itself: whether it is in recovery (a standby, where every write fails),
// and when it is not, its replication slots.
type PrimaryStatus struct {
	InRecovery bool
	Slots      []ReplicationSlot
}

// PrimaryStatus asks the database the service writes to whether it is in
// recovery and lists its replication slots. A slot keeps every WAL
// segment its consumer has not confirmed; one whose standby is gone keeps
// them all (max_slot_wal_keep_size is -1, no limit, by default), until the
// primary's disk is full.
func (s *Store) PrimaryStatus(ctx context.Context) (PrimaryStatus, error) {
	var p PrimaryStatus
	if err := s.db.GetContext(ctx, &p.InRecovery, `SELECT pg_is_in_recovery()`); err != nil || p.InRecovery {
		// A standby's WAL position, which the slots are measured from,
		// is not pg_current_wal_lsn's to give.
		return p, err
	}
	err := s.db.SelectContext(ctx, &p.Slots, `
		SELECT slot_name, active,
		       coalesce(greatest(pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn), 0), 0)::float8 AS retained_bytes
		  FROM pg_replication_slots ORDER BY slot_name`)
	return p, err
}

// ReadDB exposes the read database's pool for its metrics; nil without one.
func (s *Store) ReadDB() *sqlx.DB {
	if s.reads == nil {
		return nil
	}
	return s.reads.db
}

// read runs fn on the read database, or on the primary when there is none,
// when the read database failed less than readRetryAfter ago, or when fn
// failed there for a reason the primary does not share (the standby is
// unreachable, or cancelled the query to replay changes).
func (s *Store) read(ctx context.Context, fn func(db *sqlx.DB) error) error {
	r := s.reads
	if r == nil {
		return fn(s.db)
	}
	if !r.try() {
		r.fallbacks.Add(1)
		return fn(s.db)
	}
	err := fn(r.db)
	switch {
	case err == nil:
		r.succeeded()
		return nil
	case ctx.Err() != nil:
		return err
	case IsUnavailable(err):
		r.failed(err)
	case !isRecoveryConflict(err):
		return err // the query's own error: the primary would answer the same
	}
	r.fallbacks.Add(1)
	return fn(s.db)
}

// try reports whether a read goes to the read database: yes while it is
// up, and once every readRetryAfter while it is down.
func (r *readDB) try() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.down {
		return true
	}
	if now := r.now(); !now.Before(r.retryAt) {
		r.retryAt = now.Add(readRetryAfter)
		return true
	}
	return false
}

func (r *readDB) failed(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.retryAt = r.now().Add(readRetryAfter)
	if !r.down {
		r.down = true
		slog.Warn("read database unreachable; the drivers list and detail and job search are read from the primary until it is back", "error", err)
	}
}

func (r *readDB) succeeded() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.down {
		r.down = false
		slog.Info("read database back; the drivers list and detail and job search are read from it again")
	}
}

// isRecoveryConflict reports whether a hot standby cancelled the query so
// as to replay changes from the primary (SQLSTATE 40001 there).
func isRecoveryConflict(err error) bool {
	var pqErr *pq.Error
	return errors.As(err, &pqErr) && pqErr.Code == "40001"
}

// withDefaultSetting is withSetting for a setting the string does not give.
func withDefaultSetting(dsn, key, value string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		if u, err := url.Parse(dsn); err == nil && u.Query().Has(key) {
			return dsn, nil
		}
	} else if strings.Contains(dsn, key+"=") || strings.Contains(dsn, key+" ") {
		return dsn, nil
	}
	return withSetting(dsn, key, value)
}
