package store_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/truckjobs/jobboard/internal/logtest"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// TestRetriedTxDeadlock: two transactions each lock one of two rows, wait
// until the other holds its row, then lock the other's: PostgreSQL aborts
// one of them for the deadlock, and it is run again, so both commit, each
// once; the run again is logged with the operation's name.
func TestRetriedTxDeadlock(t *testing.T) {
	ctx := context.Background()
	s := storetest.Store(t)
	logs := logtest.Capture(t)
	if _, err := s.DB().ExecContext(ctx, `CREATE TABLE lock_pair (id int PRIMARY KEY, n int NOT NULL);
		INSERT INTO lock_pair VALUES (1, 0), (2, 0)`); err != nil {
		t.Fatal(err)
	}
	var runs atomic.Int64
	var bothHolding sync.WaitGroup
	bothHolding.Add(2)
	bump := func(tx *sqlx.Tx, id int) error {
		_, err := tx.ExecContext(ctx, `UPDATE lock_pair SET n = n + 1 WHERE id = $1`, id)
		return err
	}
	lockBoth := func(first, second int) error {
		firstRun := true
		return s.InRetriedSQLTx(ctx, "lock both", func(tx *sqlx.Tx) error {
			runs.Add(1)
			if err := bump(tx, first); err != nil {
				return err
			}
			if firstRun { // a run again must not wait for a partner gone
				firstRun = false
				bothHolding.Done()
				bothHolding.Wait()
			}
			return bump(tx, second)
		})
	}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, order := range [][2]int{{1, 2}, {2, 1}} {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = lockBoth(order[0], order[1]) }()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if n := runs.Load(); n != 3 {
		t.Errorf("%d runs, want 3: both, and the one aborted for the deadlock again", n)
	}
	var counts []int
	if err := s.DB().SelectContext(ctx, &counts, `SELECT n FROM lock_pair ORDER BY id`); err != nil {
		t.Fatal(err)
	}
	if len(counts) != 2 || counts[0] != 2 || counts[1] != 2 {
		t.Errorf("rows bumped %v times, want [2 2]: each transaction committed once", counts)
	}
	if n := strings.Count(logs.String(), `"op":"lock both"`); n != 1 {
		t.Errorf("%d lines name the operation run again, want 1:\n%s", n, logs)
	}
}

// TestRetriedTxOtherError: a transaction failing for another reason than a
// deadlock is rolled back and its error returned after one run.
func TestRetriedTxOtherError(t *testing.T) {
	ctx := context.Background()
	s := storetest.Store(t)
	if _, err := s.DB().ExecContext(ctx, `CREATE TABLE once (id int PRIMARY KEY); INSERT INTO once VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	runs := 0
	err := s.InRetriedSQLTx(ctx, "insert twice", func(tx *sqlx.Tx) error {
		runs++
		if _, err := tx.ExecContext(ctx, `INSERT INTO once VALUES (2)`); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO once VALUES (1)`)
		return err
	})
	var pqErr *pq.Error
	if !errors.As(err, &pqErr) || pqErr.Code != "23505" {
		t.Errorf("returned %v, want the unique violation", err)
	}
	if runs != 1 {
		t.Errorf("%d runs, want 1", runs)
	}
	var n int
	if err := s.DB().GetContext(ctx, &n, `SELECT count(*) FROM once`); err != nil || n != 1 {
		t.Errorf("%d rows (%v), want the one there before: the transaction rolled back", n, err)
	}
}
