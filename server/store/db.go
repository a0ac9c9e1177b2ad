// Package store keeps the service's data in PostgreSQL through sqlx and lib/pq.
// It speaks plain SQL and its own row types; it never sees protobuf messages.
package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
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
	db       *sqlx.DB
	prepared prepared
	// url is kept for connections outside the pool (WatchKeyChanges).
	url string
}

// Open connects to the database at url and checks that it answers.
func Open(ctx context.Context, url string) (*Store, error) {
	pool, err := tracing.OpenSQL("postgres", url)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	db := sqlx.NewDb(pool, "postgres")
	// Enough connections for both cores' worth of concurrent requests plus
	// background work, few enough to leave room for other replicas.
	db.SetMaxOpenConns(20)
	db.SetMaxIdleConns(20)
	db.SetConnMaxIdleTime(5 * time.Minute)
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pingCtx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	return &Store{db: db, url: url}, nil
}

// Close releases the connection pool.
func (s *Store) Close() error {
	s.closePrepared()
	return s.db.Close()
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
	var pqErr *pq.Error
	if errors.As(err, &pqErr) {
		// Class 08 is connection exceptions; 57P01-57P03 are shutdowns and
		// a server that cannot accept connections yet.
		return pqErr.Code.Class() == "08" || pqErr.Code == "57P01" || pqErr.Code == "57P02" || pqErr.Code == "57P03"
	}
	var opErr *net.OpError
	return errors.Is(err, driver.ErrBadConn) || errors.As(err, &opErr)
}
