package store

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// Migration 0018 lists in job_title_counts_backfill the accounts whose job
// applications stored before it are not counted in job_title_applicants
// yet; the triggers leave those accounts to this fill. Each account is
// filled in a transaction of its own, so only that account's writes of
// job applications wait, and only for its count.

// backfillCounts fills the count tables of migrations 0015, 0018, 0034
// and 0038 for the accounts they listed, after the migrations'
// transactions.
func backfillCounts(ctx context.Context, db *sqlx.DB) error {
	if err := backfillApplicationCounts(ctx, db); err != nil {
		return err
	}
	if err := backfillJobTitleCounts(ctx, db); err != nil {
		return err
	}
	return backfillStatusCounts(ctx, db)
}

// fillJobTitleCountsSQL counts the account's applicants of each title from
// its job applications: one row per (title, driver) pair, with the
// applicant's profile (migration 0027), the pairs of each title in
// application_counts, and of each title and profile in
// job_title_profile_counts. It runs after the account's row of the list
// is deleted, in a snapshot taken after every writer that skipped the
// account has committed (see the migrations), and before any writer
// counting on top of it has written a pair.
const fillJobTitleCountsSQL = `
WITH pairs AS (
    INSERT INTO job_title_applicants (account_id, job_title_lower, driver_id, n, state, driver_type, has_job_apps)
    SELECT j.account_id, j.job_title_lower, j.driver_id, count(*), a.state, a.driver_type, a.has_job_apps
      FROM job_applications j
      JOIN applications a ON a.account_id = j.account_id AND a.driver_id = j.driver_id
     WHERE j.account_id = $1
     GROUP BY 1, 2, 3, 5, 6, 7
    RETURNING job_title_lower, state, driver_type, has_job_apps),
counted AS (
    INSERT INTO application_counts (account_id, dimension, value, n)
    SELECT $1, 'job_title', job_title_lower, count(*) FROM pairs GROUP BY job_title_lower)
INSERT INTO job_title_profile_counts (account_id, job_title_lower, state, driver_type, has_job_apps, n)
SELECT $1, job_title_lower, state, driver_type, has_job_apps, count(*) FROM pairs GROUP BY 2, 3, 4, 5`

// beforeJobTitleBackfill, when a test sets it, runs before each account's
// title counts are filled.
var beforeJobTitleBackfill func(ctx context.Context, accountID int64)

// backfillJobTitleCounts fills the title counts of every account migration
// 0018 listed. Stopped part-way, it resumes at the next migrate with the
// accounts not done.
func backfillJobTitleCounts(ctx context.Context, db *sqlx.DB) error {
	_, err := fillListedAccounts(ctx, db, "job_title_counts_backfill", "job title counts",
		beforeJobTitleBackfill, fillJobTitleCounts)
	return err
}

// fillJobTitleCounts fills one account's title counts. Deleting the
// account's row of the list first waits for the writers that left their
// changes to this fill (they hold a key share lock on it until they
// commit); the count, a statement of its own, then sees what they wrote.
func fillJobTitleCounts(ctx context.Context, db *sqlx.DB, accountID int64) error {
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("job title count backfill of account %d: %w", accountID, err)
	}
	defer tx.Rollback() //nolint:errcheck // committed below when it matters
	res, err := tx.ExecContext(ctx, `DELETE FROM job_title_counts_backfill WHERE account_id = $1`, accountID)
	if err != nil {
		return fmt.Errorf("job title count backfill of account %d: %w", accountID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("job title count backfill of account %d: %w", accountID, err)
	} else if n == 0 {
		return nil // filled meanwhile by another migrate
	}
	if _, err := tx.ExecContext(ctx, fillJobTitleCountsSQL, accountID); err != nil {
		return fmt.Errorf("job title count backfill of account %d: %w", accountID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("job title count backfill of account %d: %w", accountID, err)
	}
	return nil
}
