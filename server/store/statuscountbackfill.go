package store

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// Migration 0034 lists in application_status_counts_backfill the accounts
// whose applications were stored before its triggers counted their
// statuses. Each is counted here in a transaction of its own, reading the
// account's applications without locking them, as the fills of migration
// 0015 are (countbackfill.go).

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

// beforeStatusCountBackfill, when a test sets it, runs before each
// account's status counts are filled.
var beforeStatusCountBackfill func(ctx context.Context, accountID int64)

// backfillStatusCounts counts the statuses of every account migration 0034
// listed, then drops the list. Stopped part-way, it resumes at the next
// migrate with the accounts not done.
func backfillStatusCounts(ctx context.Context, db *sqlx.DB) error {
	listed, err := fillListedAccounts(ctx, db, "application_status_counts_backfill", "status counts",
		beforeStatusCountBackfill, fillStatusCounts)
	if err != nil || !listed {
		return err
	}
	if _, err := db.ExecContext(ctx, `DROP TABLE application_status_counts_backfill`); err != nil {
		return fmt.Errorf("status count backfill: %w", err)
	}
	return nil
}

// fillStatusCounts fills one account's status counts.
func fillStatusCounts(ctx context.Context, db *sqlx.DB, accountID int64) error {
	return underFoldLock(ctx, db, accountID, "status count backfill", func(tx *sqlx.Tx) error {
		_, err := tx.ExecContext(ctx, fillStatusCountsSQL, accountID)
		return err
	})
}
