package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/cmd/jobboard/demo"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// TestBulkWritesRefreshStatistics: the intake's writes and seeds analyze
// the tables once they reach 10,000 applications since the last ANALYZE,
// not before.
func TestBulkWritesRefreshStatistics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.Store(t)
	a := storetest.NewAccount(t, s, "A").AccountID
	// Autovacuum, not the store, marks the new pages all-visible, soon
	// after a bulk load (migration 0023).
	for _, table := range []string{"applications", "job_applications", "employment_history", "drivers"} {
		var options []string
		if err := s.DB().SelectContext(ctx, &options, `SELECT unnest(reloptions) FROM pg_class WHERE oid = $1::regclass`, table); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(options, "autovacuum_vacuum_insert_scale_factor=0.02") {
			t.Errorf("%s: storage parameters %q, want autovacuum_vacuum_insert_scale_factor=0.02", table, options)
		}
	}
	// Only the store's own ANALYZE counts here, not autovacuum's.
	for _, table := range []string{"applications", "job_applications", "employment_history", "drivers"} {
		if _, err := s.DB().ExecContext(ctx, `ALTER TABLE `+table+` SET (autovacuum_enabled = false)`); err != nil {
			t.Fatal(err)
		}
	}
	analyses := func() (n int64) {
		t.Helper()
		if err := s.DB().GetContext(ctx, &n, `SELECT analyze_count FROM pg_stat_user_tables WHERE relname = 'applications'`); err != nil {
			t.Fatal(err)
		}
		return n
	}
	save := func(n int, tag string) {
		t.Helper()
		apps := demo.Applications(a, n, 1, time.Now(), nil, tag)
		if err := s.InRetriedTx(ctx, "test", func(tx *store.Tx) error {
			_, err := tx.SaveApplications(ctx, apps)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		s.FoldWrittenCounts(ctx)
	}
	save(9_999, "a.")
	if n := analyses(); n != 0 {
		t.Fatalf("after 9,999 applications: analyzed %d times, want 0", n)
	}
	save(1, "b.")
	if n := analyses(); n != 1 {
		t.Fatalf("after 10,000 applications: analyzed %d times, want 1", n)
	}
	save(10, "c.")
	if n := analyses(); n != 1 {
		t.Fatalf("10 applications after the ANALYZE: analyzed %d times, want still 1", n)
	}
	// A seed counts as the intake does.
	if err := s.SeedApplications(ctx, a, demo.Applications(a, 150, 2, time.Now(), nil, "seed.")); err != nil {
		t.Fatal(err)
	}
	if n := analyses(); n != 1 {
		t.Fatalf("after a seed of 150: analyzed %d times, want still 1", n)
	}
	if err := s.SeedApplications(ctx, a, demo.Applications(a, 10_000, 3, time.Now(), nil, "seed2.")); err != nil {
		t.Fatal(err)
	}
	if n := analyses(); n != 2 {
		t.Fatalf("after a seed of 10,000: analyzed %d times, want 2", n)
	}
}
