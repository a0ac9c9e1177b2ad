package store

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// prepared keeps the statements of the hottest reads prepared, when the
// pool reaches PostgreSQL directly (Route). An unprepared query is parsed
// and planned on every run; for a one-row lookup that is most of its cost.
// database/sql prepares each statement again on every connection that runs
// it, including new connections after the database restarts; a connection
// that turns out not to be direct runs it unnamed (noNamedStatements).
type prepared struct {
	on    bool
	mu    sync.Mutex
	stmts map[string]*sqlx.Stmt
}

// getPrepared runs a one-row query into dest, as a prepared statement when
// the pool reaches PostgreSQL directly, else as any other query. When
// the statement no longer fits the table (a migration changed a column
// under a running server: "cached plan must not change result type"), it is
// dropped, to be prepared afresh next time, and this call runs unprepared.
func (s *Store) getPrepared(ctx context.Context, dest any, query string, args ...any) error {
	return s.onPrepared(ctx, query,
		func(st *sqlx.Stmt) error { return st.GetContext(ctx, dest, args...) },
		func() error { return s.db.GetContext(ctx, dest, query, args...) })
}

// scanPrepared is getPrepared scanning the row's columns into dest in
// order, for the hottest read: sqlx's mapping of columns to struct fields
// by reflection costs more than the rest of the row's decoding.
func (s *Store) scanPrepared(ctx context.Context, dest []any, query string, args ...any) error {
	return s.onPrepared(ctx, query,
		func(st *sqlx.Stmt) error { return st.QueryRowContext(ctx, args...).Scan(dest...) },
		func() error { return s.db.QueryRowContext(ctx, query, args...).Scan(dest...) })
}

// onPrepared runs query with prepared when statements are kept, with
// unprepared otherwise and after dropping a statement that no longer fits.
func (s *Store) onPrepared(ctx context.Context, query string, prepared func(*sqlx.Stmt) error, unprepared func() error) error {
	if !s.prepared.on {
		return unprepared()
	}
	st, err := s.stmt(ctx, query)
	if err != nil {
		return err
	}
	err = prepared(st)
	if err == nil {
		return nil // errors.As below would allocate its target on every read
	}
	var pqErr *pq.Error
	if errors.As(err, &pqErr) && pqErr.Code == "0A000" {
		s.forget(query, st)
		return unprepared()
	}
	return err
}

// stmt returns query prepared on the pool, preparing it on first use. The
// preparation (a round trip) runs outside the lock, so a slow or absent
// database holds up only the callers that need it, each within its context.
func (s *Store) stmt(ctx context.Context, query string) (*sqlx.Stmt, error) {
	s.prepared.mu.Lock()
	st, ok := s.prepared.stmts[query]
	s.prepared.mu.Unlock()
	if ok {
		return st, nil
	}
	st, err := s.db.PreparexContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	s.prepared.mu.Lock()
	defer s.prepared.mu.Unlock()
	if existing, ok := s.prepared.stmts[query]; ok {
		_ = st.Close() // another caller prepared it first
		return existing, nil
	}
	if s.prepared.stmts == nil {
		s.prepared.stmts = map[string]*sqlx.Stmt{}
	}
	s.prepared.stmts[query] = st
	return st, nil
}

// forget drops a statement that no longer fits its tables.
func (s *Store) forget(query string, st *sqlx.Stmt) {
	s.prepared.mu.Lock()
	defer s.prepared.mu.Unlock()
	if s.prepared.stmts[query] == st {
		delete(s.prepared.stmts, query)
		_ = st.Close()
	}
}

// closePrepared releases the statements before the pool closes.
func (s *Store) closePrepared() {
	s.prepared.mu.Lock()
	defer s.prepared.mu.Unlock()
	for _, st := range s.prepared.stmts {
		_ = st.Close()
	}
	s.prepared.stmts = nil
}
