// Package store keeps the service's data in PostgreSQL through sqlx and lib/pq.
// It speaks plain SQL and its own row types; it never sees protobuf messages.
package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/truckjobs/jobboard/internal/tracing"
)

// ErrNotFound means the record does not exist for the caller; callers
// match it with errors.Is.
var ErrNotFound = errors.New("not found")

// Store is the service's database.
type Store struct {
	db *sqlx.DB
	// route is how the pool's first connection reached the server; the
	// hottest reads are prepared only when it is direct.
	route    Route
	prepared prepared
	// sessionURL is for connections that keep session state, which a
	// pooler in transaction mode would not carry from one transaction to
	// the next: LISTEN (WatchKeyChanges, RevokeAPIKey) and the migrations'
	// advisory lock.
	sessionURL string
	// reads serves the drivers list and detail and job search; nil without a
	// read database.
	reads *readDB
	// primary remembers an outage of the primary, for authentication.
	primary primaryState
	// compactions paces the folding of application_counts' rows.
	compactions compactions
	// analyzed paces the ANALYZE after bulk writes (AnalyzeAfterBulkWrites).
	analyzed writtenSinceAnalyze
	// wrapConnector, when set, wraps the primary pool's connector.
	wrapConnector func(driver.Connector) driver.Connector
	// zips keeps the ZIP centroids read so far (ZipCentroid).
	zips sync.Map
}

// Option sets one of the optional databases of Open.
type Option func(*Store) error

// DirectURL is the database for session state (docs/deploy.md 3's
// JOBBOARD_DATABASE_DIRECT_URL), when url goes through a pooler in
// transaction mode; without it, url serves those too.
func DirectURL(direct string) Option {
	return func(s *Store) error {
		if direct != "" {
			s.sessionURL = direct
		}
		return nil
	}
}

// Connector wraps the primary pool's connector in wrap: instrumentation
// below database/sql, such as a test counting the statements of a call
// (internal/sqlcount).
func Connector(wrap func(driver.Connector) driver.Connector) Option {
	return func(s *Store) error {
		s.wrapConnector = wrap
		return nil
	}
}

// Open connects to the database at url, which may be PgBouncer in
// transaction pooling mode, and checks that it answers.
func Open(ctx context.Context, url string, opts ...Option) (*Store, error) {
	s := &Store{sessionURL: url}
	for _, o := range opts {
		if err := o(s); err != nil {
			s.closeReads()
			return nil, err
		}
	}
	db, conns, err := openPool(url, s.wrapConnector)
	if err != nil {
		s.closeReads()
		return nil, err
	}
	sizePool(db)
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pingCtx); err != nil {
		db.Close()
		s.closeReads()
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	s.db = db
	s.route, _ = conns.Route()
	s.prepared.on = s.route.Direct
	return s, nil
}

// openPool opens a connection pool on url. Each query with parameters goes
// out in one batch ending in one Sync (lib/pq's binary_parameters): by
// default lib/pq parses in one round trip and binds in a second, and
// PgBouncer in transaction mode may run the second on another server
// connection, where the unnamed statement does not exist. The price is
// that []byte arguments go in binary format: right for bytea, text and
// json, wrong for jsonb, so none is passed to a jsonb parameter. Each
// connection is checked for a pooler or relay in between (checkedConnector).
func openPool(url string, wrap func(driver.Connector) driver.Connector) (*sqlx.DB, *checkedConnector, error) {
	dsn, err := withSetting(url, "binary_parameters", "yes")
	if err != nil {
		return nil, nil, err
	}
	conns, err := newCheckedConnector(dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("open database: %w", err)
	}
	var c driver.Connector = conns
	if wrap != nil {
		c = wrap(conns)
	}
	return sqlx.NewDb(tracing.OpenDB(c), "postgres"), conns, nil
}

// Route is how the pool's first connection reached the database, which
// decided whether the hottest reads run as prepared statements.
func (s *Store) Route() Route { return s.route }

// sizePool gives a pool enough connections for both cores' worth of
// concurrent requests plus background work, few enough to leave room for
// other replicas.
func sizePool(db *sqlx.DB) {
	db.SetMaxOpenConns(20)
	db.SetMaxIdleConns(20)
	db.SetConnMaxIdleTime(5 * time.Minute)
}

// Close releases the connection pools.
func (s *Store) Close() error {
	s.closePrepared()
	s.closeReads()
	return s.db.Close()
}

func (s *Store) closeReads() {
	if s.reads != nil {
		_ = s.reads.db.Close()
	}
}

// DB exposes the pool for components that manage their own SQL (the job
// queue, readiness checks).
func (s *Store) DB() *sqlx.DB { return s.db }

// inTx runs fn in a transaction, rolling back when fn fails or panics and
// returning the commit error otherwise (a swallowed commit error would report
// success for work that was never saved).
func (s *Store) inTx(ctx context.Context, fn func(tx *sqlx.Tx) error) (err error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback()
			panic(p)
		}
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if err = fn(tx); err != nil {
		return err
	}
	if err = tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// IsUnavailable reports whether err means the database could not be reached
// (connection refused or lost, server shutting down or starting) rather than
// a statement failing: the caller may retry later.
func IsUnavailable(err error) bool {
	if err == nil {
		return false // most calls, and errors.As would allocate its targets
	}
	var pqErr *pq.Error
	if errors.As(err, &pqErr) {
		// Class 08 is connection exceptions; 57P01-57P03 are shutdowns and
		// a server that cannot accept connections yet.
		return pqErr.Code.Class() == "08" || pqErr.Code == "57P01" || pqErr.Code == "57P02" || pqErr.Code == "57P03"
	}
	var opErr *net.OpError
	return errors.Is(err, driver.ErrBadConn) || errors.As(err, &opErr) || errors.Is(err, ErrPrimaryDown) ||
		errors.Is(err, ErrReplicaTooOld) || errors.Is(err, ErrReplicaUnanswered)
}
