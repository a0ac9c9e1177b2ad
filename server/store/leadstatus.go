package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/lib/pq"

	"github.com/truckjobs/jobboard/domain"
)

// StatusHistoryKept is how many earlier statuses a driver keeps in an
// account (docs/api.md, Lead status); older ones are dropped as new ones
// come.
const StatusHistoryKept = 50

// DriverStatus is the lead status of one of an account's drivers, with the
// statuses the driver had there before.
type DriverStatus struct {
	DriverID int64
	domain.StatusChange
	// History are the earlier statuses, newest first: at most
	// StatusHistoryKept.
	History []StatusEntry
}

// StatusEntry is an earlier status of a driver.
type StatusEntry struct {
	Status    domain.LeadStatus
	Reason    domain.RejectionReason
	ChangedAt time.Time
}

// driverStatusQuery reads a driver's status (kind 0) and its history
// (kind 1) in one statement, so both come from one snapshot. A status
// never set by the employer is the new of the driver's applications,
// dated by the row's sent.
const driverStatusQuery = `
	SELECT 0 AS kind, status, coalesce(status_reason, '') AS reason, coalesce(status_note, '') AS note,
	       coalesce(status_changed_at, sent) AS changed_at, 0::bigint AS id
	  FROM applications WHERE account_id = $1 AND driver_id = $2
	UNION ALL
	(SELECT 1, status, coalesce(reason, ''), '', changed_at, id
	   FROM driver_status_history WHERE account_id = $1 AND driver_id = $2
	  ORDER BY changed_at DESC, id DESC LIMIT $3)`

// statusRow is a row of driverStatusQuery.
type statusRow struct {
	Kind      int       `db:"kind"`
	Status    string    `db:"status"`
	Reason    string    `db:"reason"`
	Note      string    `db:"note"`
	ChangedAt time.Time `db:"changed_at"`
	ID        int64     `db:"id"`
}

// DriverStatus returns the status of the account's driver driverID, or
// ErrNotFound when the driver never applied to the account.
func (s *Store) DriverStatus(ctx context.Context, accountID, driverID int64) (DriverStatus, error) {
	var rows []statusRow
	if err := s.db.SelectContext(ctx, &rows, driverStatusQuery, accountID, driverID, StatusHistoryKept); err != nil {
		return DriverStatus{}, fmt.Errorf("read driver status: %w", err)
	}
	// UNION ALL keeps no order of its own: the status first, then the
	// history newest first.
	slices.SortFunc(rows, func(a, b statusRow) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), b.ChangedAt.Compare(a.ChangedAt), cmp.Compare(b.ID, a.ID))
	})
	if len(rows) == 0 || rows[0].Kind != 0 {
		return DriverStatus{}, ErrNotFound
	}
	st := DriverStatus{DriverID: driverID, StatusChange: domain.StatusChange{Status: domain.LeadStatus(rows[0].Status),
		Reason: domain.RejectionReason(rows[0].Reason), Note: rows[0].Note, ChangedAt: rows[0].ChangedAt.UTC()}}
	for _, h := range rows[1:] {
		st.History = append(st.History, StatusEntry{Status: domain.LeadStatus(h.Status),
			Reason: domain.RejectionReason(h.Reason), ChangedAt: h.ChangedAt.UTC()})
	}
	return st, nil
}

// StatusUpdate is a change to the status of one of an account's drivers.
type StatusUpdate struct {
	DriverID int64
	domain.StatusChange
}

// StatusOutcome is what SetDriverStatuses did with one update.
type StatusOutcome int

// The outcomes of a status update.
const (
	// StatusApplied: the status changed; the one before went to the history.
	StatusApplied StatusOutcome = iota + 1
	// StatusUnchanged: the stored status, reason and note were those sent.
	StatusUnchanged
	// StatusStale: the update's time was older than the stored status's,
	// which stays: a system replaying its changes out of order converges.
	StatusStale
	// StatusNoDriver: the driver never applied to the account.
	StatusNoDriver
)

// StatusResult is the outcome of one update, with the status stored after
// it and, when it applied, the status it replaced.
type StatusResult struct {
	Outcome  StatusOutcome
	Stored   domain.StatusChange
	Previous domain.LeadStatus
}

// SetDriverStatuses applies updates to the account's drivers, each naming
// a different driver, in two statements whatever their number: the drivers'
// rows are locked and read, then the changes are written with the history
// they make. It returns each update's outcome, in the order given.
func (t *Tx) SetDriverStatuses(ctx context.Context, accountID int64, updates []StatusUpdate) ([]StatusResult, error) {
	ids := make([]int64, len(updates))
	for i, u := range updates {
		ids[i] = u.DriverID
	}
	current, err := t.lockStatuses(ctx, accountID, ids, "")
	if err != nil {
		return nil, err
	}
	results := make([]StatusResult, len(updates))
	var apply, retime []StatusUpdate
	for i, u := range updates {
		c, found := current[u.DriverID]
		switch {
		case !found:
			results[i] = StatusResult{Outcome: StatusNoDriver}
		case c.set && u.ChangedAt.Before(c.ChangedAt):
			results[i] = StatusResult{Outcome: StatusStale, Stored: c.StatusChange}
		case u.SameAs(c.StatusChange):
			// Said again later, the status is as new as the latest saying
			// of it: replays of reviewing at 1, contacted at 2 and
			// reviewing at 3, in the order 1, 3, 2, must end reviewing.
			stored := c.StatusChange
			if u.ChangedAt.After(c.ChangedAt) {
				stored.ChangedAt = u.ChangedAt
				retime = append(retime, StatusUpdate{DriverID: u.DriverID, StatusChange: stored})
			}
			results[i] = StatusResult{Outcome: StatusUnchanged, Stored: stored}
		default:
			results[i] = StatusResult{Outcome: StatusApplied, Stored: u.StatusChange, Previous: c.Status}
			apply = append(apply, u)
		}
	}
	return results, t.applyStatuses(ctx, accountID, apply, retime)
}

// storedStatus is a driver's status as lockStatuses read it.
type storedStatus struct {
	domain.StatusChange
	// set says that the employer or a new application after withdrawn
	// set the status at ChangedAt. Unset, it is the new of the driver's
	// applications, dated by the newest: no change is older than that,
	// or an employer's first change, made between two applications,
	// would be refused as stale.
	set bool
}

// lockStatuses locks the account's rows of the drivers ids and reads their
// statuses, those of status only unless it is "".
func (t *Tx) lockStatuses(ctx context.Context, accountID int64, ids []int64, status domain.LeadStatus) (map[int64]storedStatus, error) {
	var rows []struct {
		DriverID  int64     `db:"driver_id"`
		Status    string    `db:"status"`
		Reason    string    `db:"reason"`
		Note      string    `db:"note"`
		ChangedAt time.Time `db:"changed_at"`
		Set       bool      `db:"set"`
	}
	// In the order of the primary key, as every writer of these rows
	// locks them, so that two batches of the same drivers do not deadlock.
	if err := t.tx.SelectContext(ctx, &rows, `
		SELECT driver_id, status, coalesce(status_reason, '') AS reason, coalesce(status_note, '') AS note,
		       coalesce(status_changed_at, sent) AS changed_at, status_changed_at IS NOT NULL AS set
		  FROM applications WHERE account_id = $1 AND driver_id = ANY ($2::bigint[]) AND ($3 = '' OR status = $3)
		 ORDER BY driver_id FOR UPDATE`, accountID, pq.Array(ids), string(status)); err != nil {
		return nil, fmt.Errorf("lock driver statuses: %w", err)
	}
	current := make(map[int64]storedStatus, len(rows))
	for _, r := range rows {
		current[r.DriverID] = storedStatus{StatusChange: domain.StatusChange{Status: domain.LeadStatus(r.Status),
			Reason: domain.RejectionReason(r.Reason), Note: r.Note, ChangedAt: r.ChangedAt.UTC()}, set: r.Set}
	}
	return current, nil
}

// applyStatusesSQL writes statuses, each driver once. A change (moved)
// moves the status it replaces into the history, which it first trims to
// one less than it keeps; a status said again later (not moved) only takes
// the later time. Every part reads the rows as they were before the
// statement, so the history gets the replaced status and the trim does not
// see the entry being added. The entries to trim are found once and
// deleted by their place (ctid): joined to the history instead, right
// after a bulk load whose statistics were not taken yet, the planner read
// the account's every entry and, for each, ranked the batch's entries
// again (seconds a batch). The rows of applications are named by the id
// array as well as joined to u: the planner then reads them from the
// primary key, a probe a driver, rather than hashing the account's every
// row (10,000 read for a batch of 1,000) or, with statistics not yet
// taken after a bulk load, scanning them once for each driver of the
// batch (3 to 80 s a batch of 1,000 right after demo seed's 10,000).
const applyStatusesSQL = `
	WITH u AS (
		SELECT * FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $8::boolean[])
		    AS u(driver_id, status, reason, note, changed_at, moved)),
	trimmed AS (
		DELETE FROM driver_status_history
		 WHERE ctid = ANY (ARRAY(
			SELECT ctid FROM (
				SELECT ctid, row_number() OVER (PARTITION BY driver_id ORDER BY changed_at DESC, id DESC) AS n
				  FROM driver_status_history
				 WHERE account_id = $1 AND driver_id = ANY (ARRAY(SELECT driver_id FROM u WHERE moved))) r
			 WHERE r.n >= $7))),
	replaced AS (
		INSERT INTO driver_status_history (account_id, driver_id, status, reason, changed_at)
		SELECT a.account_id, a.driver_id, a.status, a.status_reason, coalesce(a.status_changed_at, a.sent)
		  FROM applications a JOIN u ON a.driver_id = u.driver_id
		 WHERE a.account_id = $1 AND a.driver_id = ANY ($2::bigint[]) AND u.moved)
	UPDATE applications a
	   SET status = u.status, status_reason = nullif(u.reason, ''), status_note = nullif(u.note, ''),
	       status_changed_at = u.changed_at
	  FROM u WHERE a.account_id = $1 AND a.driver_id = ANY ($2::bigint[]) AND a.driver_id = u.driver_id`

// applyStatuses writes changes and retimed statuses (applyStatusesSQL),
// whose rows the transaction has locked, in one statement.
func (t *Tx) applyStatuses(ctx context.Context, accountID int64, changes, retimed []StatusUpdate) error {
	updates := append(slices.Clip(changes), retimed...)
	if len(updates) == 0 {
		return nil
	}
	n := len(updates)
	ids, statuses, reasons, notes, times := make([]int64, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	moved := make([]bool, n)
	for i, u := range updates {
		ids[i], statuses[i], reasons[i], notes[i] = u.DriverID, string(u.Status), string(u.Reason), u.Note
		times[i] = u.ChangedAt.UTC().Format(time.RFC3339Nano)
		moved[i] = i < len(changes)
	}
	if _, err := t.tx.ExecContext(ctx, applyStatusesSQL, accountID, pq.Array(ids), stringArray(statuses),
		stringArray(reasons), stringArray(notes), stringArray(times), StatusHistoryKept, boolArray(moved)); err != nil {
		return fmt.Errorf("set driver statuses: %w", err)
	}
	// The statuses' counts (migration 0034) took rows of their own.
	t.compact = append(t.compact, accountID)
	return nil
}

// StatusChanged is a change SetDriverStatuses or ResetWithdrawn made: the
// status now, and the one it replaced.
type StatusChanged struct {
	DriverID int64
	domain.StatusChange
	Previous domain.LeadStatus
}

// ResetWithdrawn turns the status of those of the account's drivers ids
// that have withdrawn into new, dated by the database's clock (or just
// after the withdrawal, when that is not earlier): a new
// application from a driver who withdrew is a new lead. It returns the
// changes, by driver id. The clock is read only when some driver had
// withdrawn, so an intake of drivers who did not runs one statement here.
func (t *Tx) ResetWithdrawn(ctx context.Context, accountID int64, ids []int64) ([]StatusChanged, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	withdrawn, err := t.lockStatuses(ctx, accountID, ids, domain.LeadWithdrawn)
	if err != nil || len(withdrawn) == 0 {
		return nil, err
	}
	now, err := t.Now(ctx)
	if err != nil {
		return nil, err
	}
	updates := make([]StatusUpdate, 0, len(withdrawn))
	for id, w := range withdrawn {
		// Always after the withdrawal (which may be a few minutes ahead of
		// this clock): at or before it, a replay of the withdrawal would
		// not be stale and would undo the reset.
		at := now.UTC().Truncate(time.Microsecond)
		if !w.ChangedAt.Before(at) {
			at = w.ChangedAt.Add(time.Microsecond)
		}
		updates = append(updates, StatusUpdate{DriverID: id, StatusChange: domain.StatusChange{Status: domain.LeadNew, ChangedAt: at}})
	}
	slices.SortFunc(updates, func(a, b StatusUpdate) int { return cmp.Compare(a.DriverID, b.DriverID) })
	if err := t.applyStatuses(ctx, accountID, updates, nil); err != nil {
		return nil, err
	}
	changes := make([]StatusChanged, len(updates))
	for i, u := range updates {
		changes[i] = StatusChanged{DriverID: u.DriverID, StatusChange: u.StatusChange, Previous: domain.LeadWithdrawn}
	}
	return changes, nil
}

// DriversByEmail returns the account's drivers whose case-folded e-mail
// (FoldCase) is among keys, by key, read from the e-mail index.
func (t *Tx) DriversByEmail(ctx context.Context, accountID int64, keys []string) (map[string]int64, error) {
	out := map[string]int64{}
	if len(keys) == 0 {
		return out, nil
	}
	var rows []struct {
		DriverID int64  `db:"driver_id"`
		Key      string `db:"email_key"`
	}
	if err := t.tx.SelectContext(ctx, &rows, `SELECT driver_id, email_key FROM applications
		WHERE account_id = $1 AND email_key = ANY ($2::text[])`, accountID, stringArray(keys)); err != nil {
		return nil, fmt.Errorf("find drivers by e-mail: %w", err)
	}
	for _, r := range rows {
		out[r.Key] = r.DriverID
	}
	return out, nil
}
