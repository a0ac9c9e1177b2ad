package store

import (
	"context"
	"fmt"
	"sync"

	"github.com/jmoiron/sqlx"
)

// prepared keeps the statements of the hottest reads prepared. An
// unprepared query with parameters costs two round trips with lib/pq (parse,
// then bind and execute); a prepared one costs one. database/sql prepares
// each statement again on every connection that runs it, including new
// connections after the database restarts.
type prepared struct {
	mu    sync.Mutex
	stmts map[string]*sqlx.Stmt
}

// stmt returns query prepared on the pool, preparing it on first use.
func (s *Store) stmt(ctx context.Context, query string) (*sqlx.Stmt, error) {
	s.prepared.mu.Lock()
	defer s.prepared.mu.Unlock()
	if st, ok := s.prepared.stmts[query]; ok {
		return st, nil
	}
	st, err := s.db.PreparexContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	if s.prepared.stmts == nil {
		s.prepared.stmts = map[string]*sqlx.Stmt{}
	}
	s.prepared.stmts[query] = st
	return st, nil
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
