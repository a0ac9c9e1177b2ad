package store

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// Migrations 0034 and 0038 list the accounts whose applications were
// stored before their triggers counted the statuses (0034, in
// application_counts) and the statuses with their profiles (0038, in
// application_status_profile_counts). Each account is counted here in a
// transaction of its own, reading the account's applications without
// locking them, as the fills of migration 0015 are (countbackfill.go).

// fillStatusCountsSQL replaces the account's status rows of
// application_counts with the count of each status, in one statement and
// so from one snapshot: the delta rows it deletes are those of the writes
// its count sees, and a write committed after the snapshot keeps its own.
const fillStatusCountsSQL = `
WITH listed AS (DELETE FROM application_status_counts_backfill WHERE account_id = $1),
deltas AS (DELETE FROM application_counts WHERE account_id = $1 AND dimension = 'status')
INSERT INTO application_counts (account_id, dimension, value, n)
SELECT account_id, 'status', status, count(*)
  FROM applications
 WHERE account_id = $1
 GROUP BY 1, 3`

// fillStatusProfileCountsSQL does the same for the account's rows of
// application_status_profile_counts.
const fillStatusProfileCountsSQL = `
WITH listed AS (DELETE FROM application_status_profile_counts_backfill WHERE account_id = $1),
deltas AS (DELETE FROM application_status_profile_counts WHERE account_id = $1)
INSERT INTO application_status_profile_counts (account_id, status, state, driver_type, has_job_apps, n)
SELECT account_id, status, state, driver_type, has_job_apps, count(*)
  FROM applications
 WHERE account_id = $1
 GROUP BY 1, 2, 3, 4, 5`

// beforeStatusCountBackfill, when a test sets it, runs before each
// account's status counts (of either migration) are filled.
var beforeStatusCountBackfill func(ctx context.Context, accountID int64)

// backfillStatusCounts counts the statuses of every account migrations
// 0034 and 0038 listed, then drops each list. Stopped part-way, it resumes
// at the next migrate with the accounts not done.
func backfillStatusCounts(ctx context.Context, db *sqlx.DB) error {
	for _, fill := range []struct{ list, what, sql string }{
		{"application_status_counts_backfill", "status counts", fillStatusCountsSQL},
		{"application_status_profile_counts_backfill", "status profile counts", fillStatusProfileCountsSQL},
	} {
		listed, err := fillListedAccounts(ctx, db, fill.list, fill.what, beforeStatusCountBackfill,
			func(ctx context.Context, db *sqlx.DB, accountID int64) error {
				return underFoldLock(ctx, db, accountID, fill.what+" backfill", func(tx *sqlx.Tx) error {
					_, err := tx.ExecContext(ctx, fill.sql, accountID)
					return err
				})
			})
		if err != nil {
			return err
		}
		if !listed {
			continue
		}
		if _, err := db.ExecContext(ctx, `DROP TABLE `+fill.list); err != nil {
			return fmt.Errorf("%s backfill: %w", fill.what, err)
		}
	}
	return nil
}
