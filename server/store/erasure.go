package store

import (
	"context"
	"fmt"
)

// Erased is what an erasure removed, counted for its log line (which
// holds no personal data).
type Erased struct {
	JobApplications, Statuses, Events int64
	// Person says whether the driver's row went too: no other account
	// holds an application from that e-mail.
	Person bool
}

// eraseDriverSQL removes what the account holds about one driver: its
// events about the driver, then its row of the driver, whose employment
// history, job applications and earlier statuses go with it (their
// foreign keys cascade) and whose counts the triggers of applications take
// back; then the person's row, when no other account has one. Deliveries of
// the removed events not yet sent find no event and are cancelled.
const eraseDriverSQL = `
	WITH app AS (
		DELETE FROM applications WHERE account_id = $1 AND driver_id = $2 RETURNING driver_id),
	events AS (
		DELETE FROM events WHERE account_id = $1 AND driver_id = $2 AND EXISTS (SELECT 1 FROM app) RETURNING 1),
	counted AS (
		SELECT (SELECT count(*) FROM job_applications WHERE account_id = $1 AND driver_id = $2) AS job_applications,
		       (SELECT count(*) FROM driver_status_history WHERE account_id = $1 AND driver_id = $2) AS statuses)
	SELECT (SELECT count(*) FROM app) AS found, (SELECT count(*) FROM events) AS events,
	       counted.job_applications, counted.statuses FROM counted`

// EraseDriver removes everything the account holds about the driver, or
// answers ErrNotFound when it holds nothing (never applied, or erased
// already). Other accounts keep theirs.
func (t *Tx) EraseDriver(ctx context.Context, accountID, driverID int64) (Erased, error) {
	// The person's row first, FOR UPDATE, as the intake takes it (FOR KEY
	// SHARE) before the rows of applications: an intake of the same person
	// waits for the erasure or the erasure for it, never each for the
	// other, and the check below that no other account holds the person
	// runs after any intake that got there first has committed. Checked in
	// the statement that deletes, an application another account's intake
	// committed while the delete waited was not seen, and the person's
	// deletion cascaded to it.
	var locked []int64
	if err := t.tx.SelectContext(ctx, &locked, `SELECT id FROM drivers WHERE id = $1 FOR UPDATE`, driverID); err != nil {
		return Erased{}, fmt.Errorf("erase driver %d: %w", driverID, err)
	}
	if len(locked) == 0 {
		return Erased{}, ErrNotFound
	}
	var r struct {
		Found           int64 `db:"found"`
		Events          int64 `db:"events"`
		JobApplications int64 `db:"job_applications"`
		Statuses        int64 `db:"statuses"`
	}
	if err := t.tx.GetContext(ctx, &r, eraseDriverSQL, accountID, driverID); err != nil {
		return Erased{}, fmt.Errorf("erase driver %d: %w", driverID, err)
	}
	if r.Found == 0 {
		return Erased{}, ErrNotFound
	}
	// The person's row holds the e-mail: it goes when this was its last
	// account. An intake waiting for the lock then finds no person and adds
	// it again.
	res, err := t.tx.ExecContext(ctx, `DELETE FROM drivers d WHERE d.id = $1
		AND NOT EXISTS (SELECT 1 FROM applications a WHERE a.driver_id = d.id)`, driverID)
	if err != nil {
		return Erased{}, fmt.Errorf("erase driver %d: %w", driverID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return Erased{}, fmt.Errorf("erase driver %d: %w", driverID, err)
	}
	t.compact = append(t.compact, accountID)
	return Erased{JobApplications: r.JobApplications, Statuses: r.Statuses, Events: r.Events, Person: n == 1}, nil
}
