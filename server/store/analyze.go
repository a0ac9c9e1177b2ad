package store

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
)

// A bulk load leaves the planner's statistics describing the tables as
// they were: a million applications written to one account in a few
// minutes are, to the planner, an account it has never seen, until
// autovacuum gets to them. Plans made from those statistics read the
// wrong index (the drivers list's first_name filter took 96-321 ms right
// after such a load, 2-5 ms after ANALYZE). So the writers that load in
// bulk analyze what they wrote themselves, once the applications this
// process wrote since its last ANALYZE are a tenth of the table or more
// (at least analyzeAfterAtLeast): the intake off the requests, in the
// count folding loop; demo seed at the end of each seed.
//
// They run VACUUM (ANALYZE) rather than ANALYZE alone: the drivers list
// answers a combination of filters from an index that holds every column
// they test (migration 0022), without the table, only on the pages VACUUM
// has marked all-visible; on pages written since, each index entry costs a
// read of the table as well. VACUUM reads only the pages written since
// its last run.

// analyzeAfterAtLeast is the fewest applications written between two
// ANALYZE runs: below it, the statistics' sample would hardly change.
const analyzeAfterAtLeast = 10_000

// intakeTables are the tables an intake writes, whose statistics a bulk
// load moves.
const intakeTables = "applications, job_applications, employment_history, drivers"

// writtenSinceAnalyze counts the applications this process wrote since
// its last ANALYZE of intakeTables.
type writtenSinceAnalyze struct{ n atomic.Int64 }

// vacuumIntakeTables runs VACUUM (ANALYZE) on intakeTables in db.
func vacuumIntakeTables(ctx context.Context, db *sqlx.DB) error {
	started := time.Now()
	// SKIP_LOCKED: a table autovacuum is working on is left to it, rather
	// than holding a command's exit or the fold loop for as long as
	// autovacuum's run of a large table takes.
	if _, err := db.ExecContext(ctx, `VACUUM (ANALYZE, SKIP_LOCKED) `+intakeTables); err != nil {
		return fmt.Errorf("vacuum and analyze %s: %w", intakeTables, err)
	}
	slog.InfoContext(ctx, "statistics and visibility refreshed", "tables", intakeTables,
		"seconds", time.Since(started).Seconds())
	return nil
}

// AnalyzeAfterBulkWrites refreshes the statistics of intakeTables when the
// applications this process wrote since the last refresh are at least a
// tenth of the table's rows and at least analyzeAfterAtLeast. A failure
// leaves them for the next round (or autovacuum), so it is logged, not
// returned.
func (s *Store) AnalyzeAfterBulkWrites(ctx context.Context) {
	written := s.analyzed.n.Load()
	if written < analyzeAfterAtLeast {
		return
	}
	var rows float64 // -1 for a table never analyzed
	if err := s.db.GetContext(ctx, &rows, `SELECT reltuples FROM pg_class WHERE oid = 'applications'::regclass`); err != nil {
		slog.WarnContext(ctx, "statistics not refreshed", "error", err)
		return
	}
	if float64(written) < rows/10 {
		return
	}
	s.analyzed.n.Add(-written)
	if err := vacuumIntakeTables(ctx, s.db); err != nil {
		s.analyzed.n.Add(written)
		slog.WarnContext(ctx, "statistics not refreshed", "error", err)
	}
}
