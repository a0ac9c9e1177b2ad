package store

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jmoiron/sqlx"
)

// Migration 0015 creates the count tables and their triggers, and lists in
// application_counts_backfill the accounts whose applications stored
// before it are not counted yet. They are counted here, after the
// migration's transaction: one account per transaction, reading the
// account's applications without locking them, so intakes go on meanwhile.

// fillAccountCountsSQL replaces the account's count rows with the counts of
// its applications, in one statement and so from one snapshot: the delta
// rows it deletes are those of the writes its count sees (committed
// before it), so those are counted once; a write committed after the
// snapshot (or still running) is not in the count and keeps its delta rows.
// Rows of writes made before the triggers existed are counted as well.
// The job titles' and statuses' counts are kept apart, by the triggers and
// fills of migrations 0018 (jobtitlebackfill.go) and 0034
// (statuscountbackfill.go), and stay.
const fillAccountCountsSQL = `
WITH listed AS (DELETE FROM application_counts_backfill WHERE account_id = $1),
deltas AS (DELETE FROM application_counts WHERE account_id = $1 AND dimension NOT IN ('job_title', 'status')),
location_deltas AS (DELETE FROM application_location_counts WHERE account_id = $1),
counted AS (
    INSERT INTO application_counts (account_id, dimension, value, n)
    SELECT a.account_id, k.dimension, k.value, count(*)
      FROM applications a, application_count_keys(a.state, a.driver_type, a.has_job_apps, a.first_name_key,
           a.last_name_key, a.experience_years, a.sent, a.endorsements) k
     WHERE a.account_id = $1
     GROUP BY 1, 2, 3)
INSERT INTO application_location_counts (account_id, latitude, longitude, n)
SELECT account_id, latitude, longitude, count(*)
  FROM applications
 WHERE account_id = $1 AND latitude IS NOT NULL AND longitude IS NOT NULL
 GROUP BY 1, 2, 3`

// fillProfileCountsSQL does the same for the account's combinations
// (migration 0022), in a statement of its own: each statement deletes the
// delta rows of the writes its own snapshot counts, so the two need not
// share one.
const fillProfileCountsSQL = `
WITH deltas AS (DELETE FROM application_profile_counts WHERE account_id = $1)
INSERT INTO application_profile_counts (account_id, state, driver_type, has_job_apps, experience_halves, endorsements, n)
SELECT account_id, state, driver_type, has_job_apps, coalesce(experience_halves, -1), endorsement_bits(endorsements), count(*)
  FROM applications
 WHERE account_id = $1
 GROUP BY 1, 2, 3, 4, 5, 6`

// fillDayCountsSQL does the same for the account's days (migration 0024).
const fillDayCountsSQL = `
WITH deltas AS (DELETE FROM application_day_counts WHERE account_id = $1)
INSERT INTO application_day_counts (account_id, day, state, driver_type, has_job_apps, n)
SELECT account_id, (sent AT TIME ZONE 'UTC')::date, state, driver_type, has_job_apps, count(*)
  FROM applications
 WHERE account_id = $1
 GROUP BY 1, 2, 3, 4, 5`

// fillLocationProfileCountsSQL does the same for the account's centroids
// by driver type and job applications (migration 0026).
const fillLocationProfileCountsSQL = `
WITH deltas AS (DELETE FROM application_location_profile_counts WHERE account_id = $1)
INSERT INTO application_location_profile_counts (account_id, latitude, longitude, driver_type, has_job_apps, n)
SELECT account_id, latitude, longitude, driver_type, has_job_apps, count(*)
  FROM applications
 WHERE account_id = $1 AND latitude IS NOT NULL AND longitude IS NOT NULL
 GROUP BY 1, 2, 3, 4, 5`

// laterCountFills are the fills of the count tables later migrations add,
// each run when its table exists: a test may stop the migrations before it.
var laterCountFills = []struct{ table, sql string }{
	{"application_profile_counts", fillProfileCountsSQL},
	{"application_day_counts", fillDayCountsSQL},
	{"application_location_profile_counts", fillLocationProfileCountsSQL},
}

// beforeCountBackfill, when a test sets it, runs before each account's
// counts are filled: writes it makes land between the triggers and the fill.
var beforeCountBackfill func(ctx context.Context, accountID int64)

// backfillApplicationCounts counts the applications of every account
// migration 0015 listed, then drops the list. Stopped part-way, it resumes
// at the next migrate with the accounts not done. Servers of this version
// start serving only after it (Migrate runs it under the migrations'
// lock), so none reads a count not filled yet.
func backfillApplicationCounts(ctx context.Context, db *sqlx.DB) error {
	listed, err := fillListedAccounts(ctx, db, "application_counts_backfill", "application counts",
		beforeCountBackfill, fillAccountCounts)
	if err != nil || !listed {
		return err
	}
	if _, err := db.ExecContext(ctx, `DROP TABLE application_counts_backfill`); err != nil {
		return fmt.Errorf("count backfill: %w", err)
	}
	return nil
}

// fillListedAccounts runs fill for each account of the table list (a
// migration's list of the accounts whose counts are to be filled), in id
// order, calling before first when a test has set it. It says whether the
// list exists: a test may migrate only part of the way. what names the
// counts in the errors and the progress lines.
func fillListedAccounts(ctx context.Context, db *sqlx.DB, list, what string,
	before func(ctx context.Context, accountID int64),
	fill func(ctx context.Context, db *sqlx.DB, accountID int64) error) (bool, error) {
	var listed bool
	if err := db.GetContext(ctx, &listed, `SELECT to_regclass($1) IS NOT NULL`, list); err != nil {
		return false, fmt.Errorf("%s backfill: %w", what, err)
	}
	if !listed {
		return false, nil
	}
	var accounts []int64
	if err := db.SelectContext(ctx, &accounts, `SELECT account_id FROM `+list+` ORDER BY account_id`); err != nil {
		return true, fmt.Errorf("%s backfill: %w", what, err)
	}
	for i, id := range accounts {
		if before != nil {
			before(ctx, id)
		}
		if err := fill(ctx, db, id); err != nil {
			return true, err
		}
		if (i+1)%1000 == 0 {
			slog.InfoContext(ctx, what+" filled", "accounts", i+1, "of", len(accounts))
		}
	}
	return true, nil
}

// fillAccountCounts fills one account's counts.
func fillAccountCounts(ctx context.Context, db *sqlx.DB, accountID int64) error {
	return underFoldLock(ctx, db, accountID, "count backfill", func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, fillAccountCountsSQL, accountID); err != nil {
			return err
		}
		for _, fill := range laterCountFills {
			var exists bool
			if err := tx.GetContext(ctx, &exists, `SELECT to_regclass($1) IS NOT NULL`, fill.table); err != nil {
				return err
			}
			if !exists {
				continue
			}
			if _, err := tx.ExecContext(ctx, fill.sql, accountID); err != nil {
				return err
			}
		}
		return nil
	})
}

// underFoldLock runs fill in a transaction of its own that first waits for
// a running fold of the account (the folds' advisory lock): a fold commits
// rows it computed from delta rows, which a fill must see to delete. what
// names the fill in its errors.
func underFoldLock(ctx context.Context, db *sqlx.DB, accountID int64, what string, fill func(*sqlx.Tx) error) error {
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s of account %d: %w", what, accountID, err)
	}
	defer tx.Rollback() //nolint:errcheck // committed below when it matters
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1, ($2::bigint & 2147483647)::int4)`,
		countCompactionLock, accountID); err != nil {
		return fmt.Errorf("%s of account %d: %w", what, accountID, err)
	}
	if err := fill(tx); err != nil {
		return fmt.Errorf("%s of account %d: %w", what, accountID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s of account %d: %w", what, accountID, err)
	}
	return nil
}
