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
// They run ANALYZE, a sample of 30,000 rows a table, and leave VACUUM to
// autovacuum. The drivers list answers a combination of filters from an
// index that holds every column it tests (migration 0022), without the
// table, only on the pages VACUUM has marked all-visible; migration 0023
// has autovacuum come after inserts of a fiftieth of these tables rather
// than a fifth. A VACUUM of their own would read every page the load
// wrote, on the time of the command that loaded (drivers import) or of
// the fold loop; autovacuum reads them on nobody's.

// analyzeAfterAtLeast is the fewest applications written between two
// ANALYZE runs: below it, the statistics' sample would hardly change.
const analyzeAfterAtLeast = 10_000

// intakeTables are the tables an intake writes, whose statistics a bulk
// load moves.
const intakeTables = "applications, job_applications, employment_history, drivers"

// writtenSinceAnalyze counts the applications this process wrote since
// its last ANALYZE of intakeTables.
type writtenSinceAnalyze struct{ n atomic.Int64 }

// analyzeIntakeTables runs ANALYZE on intakeTables in db.
func analyzeIntakeTables(ctx context.Context, db *sqlx.DB) error {
	return refreshIntakeTables(ctx, db, "ANALYZE", "statistics refreshed")
}

// vacuumIntakeTables runs VACUUM (ANALYZE) on intakeTables in db: after a
// migration, which may rewrite applications (0022) or add indexes, every
// page is new.
func vacuumIntakeTables(ctx context.Context, db *sqlx.DB) error {
	// SKIP_LOCKED: a table autovacuum is working on is left to it, rather
	// than holding migrate for as long as autovacuum's run of a large
	// table takes.
	return refreshIntakeTables(ctx, db, "VACUUM (ANALYZE, SKIP_LOCKED)", "statistics and visibility refreshed")
}

func refreshIntakeTables(ctx context.Context, db *sqlx.DB, command, done string) error {
	started := time.Now()
	if _, err := db.ExecContext(ctx, command+" "+intakeTables); err != nil {
		return fmt.Errorf("%s %s: %w", command, intakeTables, err)
	}
	slog.InfoContext(ctx, done, "tables", intakeTables, "seconds", time.Since(started).Seconds())
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
	if err := analyzeIntakeTables(ctx, s.db); err != nil {
		s.analyzed.n.Add(written)
		slog.WarnContext(ctx, "statistics not refreshed", "error", err)
	}
}
