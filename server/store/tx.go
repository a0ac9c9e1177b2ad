package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
)

// Tx is one transaction. Its methods are the statements the service's use
// cases run, so a use case reads top-down as one function:
//
//	err := st.InTx(ctx, func(tx *store.Tx) error {
//		imp, err := tx.LockImport(ctx, id)
//		...
//		return tx.CompleteImport(ctx, imp)
//	})
//
// The store never calls back into the services: what a use case writes in
// the transaction besides its own rows (queue jobs, events) it writes
// itself, through SQL for the queue and Tx's methods for the rest.
type Tx struct {
	tx *sqlx.Tx
	// compact are the accounts whose counts this transaction moved; their
	// compaction is noted once it commits.
	compact []int64
	// applicationsWritten counts the applications it saved, for the
	// ANALYZE after bulk writes.
	applicationsWritten int64
}

// InTx runs fn in a transaction, committed when fn returns nil and rolled
// back when it fails or panics (the panic goes on). A commit error is
// returned, never swallowed.
func (s *Store) InTx(ctx context.Context, fn func(tx *Tx) error) error {
	var t *Tx
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		t = &Tx{tx: tx}
		return fn(t)
	})
	s.committed(t, err)
	return err
}

// InRetriedTx is InTx run again from the start, in a new transaction, when
// PostgreSQL breaks a deadlock by rolling it back (inRetriedTx): fn must
// keep nothing outside the transaction from one run to the next. op names
// the work in the log line of a retry.
func (s *Store) InRetriedTx(ctx context.Context, op string, fn func(tx *Tx) error) error {
	var t *Tx
	err := s.inRetriedTx(ctx, op, func(tx *sqlx.Tx) error {
		t = &Tx{tx: tx}
		return fn(t)
	})
	s.committed(t, err)
	return err
}

// committed notes, after a transaction committed, the compaction of the
// counts it moved.
func (s *Store) committed(t *Tx, err error) {
	if err == nil && t != nil && len(t.compact) > 0 {
		s.compactions.note(t.compact...)
		s.analyzed.n.Add(t.applicationsWritten)
	}
}

// SQL is the transaction for the job queue (River's InsertTx and
// JobCompleteTx), whose rows are written in the same transaction as the
// use case's.
func (t *Tx) SQL() *sql.Tx { return t.tx.Tx }

// Now is the database's clock now, not the transaction's start: what a
// use case dates at the end of a long transaction (an import's completion)
// is not dated before the work it reports.
func (t *Tx) Now(ctx context.Context) (time.Time, error) {
	var now time.Time
	if err := t.tx.GetContext(ctx, &now, `SELECT clock_timestamp()`); err != nil {
		return time.Time{}, fmt.Errorf("read the clock: %w", err)
	}
	return now, nil
}

// Queue is the job queue's client. Its jobs are rows of this database,
// written in a Tx with the use case's own rows: InsertTx(ctx, tx.SQL(), ...).
type Queue = river.Client[*sql.Tx]

// QueueFromContext is the queue of the job a worker is working.
func QueueFromContext(ctx context.Context) *Queue { return river.ClientFromContext[*sql.Tx](ctx) }

// CompleteQueueJob marks the job a worker is working done in tx, so that
// it is done exactly when the job's work commits.
func CompleteQueueJob[T river.JobArgs](ctx context.Context, tx *Tx, job *river.Job[T]) error {
	_, err := river.JobCompleteTx[*riverdatabasesql.Driver](ctx, tx.SQL(), job)
	return err
}
