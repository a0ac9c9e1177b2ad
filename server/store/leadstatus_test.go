package store_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/cmd/jobboard/demo"
	"github.com/truckjobs/jobboard/domain"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// setStatuses applies updates in a transaction of their own.
func setStatuses(t *testing.T, s *store.Store, account int64, updates ...store.StatusUpdate) []store.StatusResult {
	t.Helper()
	var results []store.StatusResult
	err := s.InRetriedTx(context.Background(), "set statuses", func(tx *store.Tx) error {
		var err error
		results, err = tx.SetDriverStatuses(context.Background(), account, updates)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return results
}

// statusOf is the driver's status, which must exist.
func statusOf(t *testing.T, s *store.Store, account, driver int64) store.DriverStatus {
	t.Helper()
	st, err := s.DriverStatus(context.Background(), account, driver)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// oneDriver stores one application of a demo driver to account and
// returns the driver's id.
func oneDriver(t *testing.T, s *store.Store, account int64, seed uint64, tag string) int64 {
	t.Helper()
	ctx := context.Background()
	if err := saveApplications(ctx, s, demo.Applications(account, 1, seed, time.Now().Add(-time.Hour), nil, tag)); err != nil {
		t.Fatal(err)
	}
	var driver int64
	if err := s.DB().GetContext(ctx, &driver, `SELECT driver_id FROM applications WHERE account_id = $1`, account); err != nil {
		t.Fatal(err)
	}
	return driver
}

func update(driver int64, status domain.LeadStatus, reason domain.RejectionReason, note string, at time.Time) store.StatusUpdate {
	return store.StatusUpdate{DriverID: driver, StatusChange: domain.StatusChange{Status: status, Reason: reason, Note: note, ChangedAt: at}}
}

// TestDriverStatusRules: a first application's driver is new, dated by its
// application; a change applies and moves the status it replaces to the
// history, newest first; the same status, reason and note is unchanged; an
// older change is stale and changes nothing; another account's driver does
// not exist for the account.
func TestDriverStatusRules(t *testing.T) {
	ctx := context.Background()
	s := storetest.Store(t)
	a, b := storetest.NewAccount(t, s, "A").AccountID, storetest.NewAccount(t, s, "B").AccountID
	t0 := time.Now().UTC().Truncate(time.Microsecond)
	apps := demo.Applications(a, 2, 1, t0, nil, "s.")
	if err := saveApplications(ctx, s, apps); err != nil {
		t.Fatal(err)
	}
	var driver int64
	if err := s.DB().GetContext(ctx, &driver, `SELECT driver_id FROM applications WHERE account_id = $1 ORDER BY driver_id LIMIT 1`, a); err != nil {
		t.Fatal(err)
	}
	first := statusOf(t, s, a, driver)
	if first.Status != domain.LeadNew || first.Reason != "" || first.Note != "" || len(first.History) != 0 {
		t.Fatalf("first application's status %+v, want new with no history", first)
	}

	t1, t2 := first.ChangedAt.Add(time.Hour), first.ChangedAt.Add(2*time.Hour)
	steps := []struct {
		name string
		u    store.StatusUpdate
		want store.StatusOutcome
	}{
		{"reviewing", update(driver, domain.LeadReviewing, "", "called twice", t1), store.StatusApplied},
		{"the same again, later", update(driver, domain.LeadReviewing, "", "called twice", t2), store.StatusUnchanged},
		{"rejected", update(driver, domain.LeadRejected, "psp", "", t2), store.StatusApplied},
		{"an older change", update(driver, domain.LeadHired, "", "", t1), store.StatusStale},
	}
	for _, step := range steps {
		got := setStatuses(t, s, a, step.u)
		if got[0].Outcome != step.want {
			t.Fatalf("%s: outcome %d, want %d", step.name, got[0].Outcome, step.want)
		}
	}
	got := statusOf(t, s, a, driver)
	want := domain.StatusChange{Status: domain.LeadRejected, Reason: "psp", ChangedAt: t2}
	if got.StatusChange != want {
		t.Errorf("status %+v, want %+v", got.StatusChange, want)
	}
	// reviewing said again at t2 took that time.
	wantHistory := []store.StatusEntry{{Status: domain.LeadReviewing, ChangedAt: t2}, {Status: domain.LeadNew, ChangedAt: first.ChangedAt}}
	if len(got.History) != 2 || got.History[0] != wantHistory[0] || got.History[1] != wantHistory[1] {
		t.Errorf("history %+v, want %+v", got.History, wantHistory)
	}

	if _, err := s.DriverStatus(ctx, b, driver); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another account's driver: %v, want ErrNotFound", err)
	}
	if r := setStatuses(t, s, b, update(driver, domain.LeadHired, "", "", t2)); r[0].Outcome != store.StatusNoDriver {
		t.Errorf("another account's driver set: outcome %d, want StatusNoDriver", r[0].Outcome)
	}
	if got := statusOf(t, s, a, driver); got.Status != domain.LeadRejected {
		t.Errorf("after another account's update: %s", got.Status)
	}
}

// TestDriverStatusHistoryKept: the history keeps the newest
// StatusHistoryKept statuses.
func TestDriverStatusHistoryKept(t *testing.T) {
	ctx := context.Background()
	s := storetest.Store(t)
	a := storetest.NewAccount(t, s, "A").AccountID
	driver := oneDriver(t, s, a, 2, "h.")
	base := time.Now().UTC().Add(time.Hour).Truncate(time.Microsecond)
	statuses := []domain.LeadStatus{domain.LeadReviewing, domain.LeadContacted, domain.LeadInterviewing}
	const changes = store.StatusHistoryKept + 12
	for i := range changes {
		setStatuses(t, s, a, update(driver, statuses[i%len(statuses)], "", "", base.Add(time.Duration(i)*time.Minute)))
	}
	got := statusOf(t, s, a, driver)
	if len(got.History) != store.StatusHistoryKept {
		t.Fatalf("%d earlier statuses kept, want %d", len(got.History), store.StatusHistoryKept)
	}
	for k, h := range got.History {
		i := changes - 2 - k // the status before the current one first
		if h.Status != statuses[i%len(statuses)] || !h.ChangedAt.Equal(base.Add(time.Duration(i)*time.Minute)) {
			t.Fatalf("history[%d] = %+v, want change %d", k, h, i)
		}
	}
	var stored int
	if err := s.DB().GetContext(ctx, &stored, `SELECT count(*) FROM driver_status_history WHERE account_id = $1`, a); err != nil {
		t.Fatal(err)
	}
	if stored != store.StatusHistoryKept {
		t.Errorf("%d history rows stored, want %d", stored, store.StatusHistoryKept)
	}
}

// TestDriverStatusReplaysConverge: the same changes applied in any order,
// one call each, leave the newest.
func TestDriverStatusReplaysConverge(t *testing.T) {
	s := storetest.Store(t)
	a := storetest.NewAccount(t, s, "A").AccountID
	driver := oneDriver(t, s, a, 3, "r.")
	base := time.Now().UTC().Add(time.Hour).Truncate(time.Microsecond)
	changes := []store.StatusUpdate{
		update(driver, domain.LeadContacted, "", "", base),
		update(driver, domain.LeadInterviewing, "", "Tuesday", base.Add(time.Minute)),
		update(driver, domain.LeadOffered, "", "", base.Add(2*time.Minute)),
		update(driver, domain.LeadRejected, "position_filled", "", base.Add(3*time.Minute)),
	}
	newest := changes[len(changes)-1].StatusChange
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 10 {
		order := r.Perm(len(changes))
		for _, i := range order {
			setStatuses(t, s, a, changes[i])
		}
		if got := statusOf(t, s, a, driver); got.StatusChange != newest {
			t.Fatalf("round %d (order %v): %+v, want %+v", round, order, got.StatusChange, newest)
		}
	}
}

// TestWithdrawnDriverAppliesAgain: a new application from a driver who
// withdrew sets the status to new, with withdrawn first in the history; the
// same application sent again (a retried call) does not.
func TestWithdrawnDriverAppliesAgain(t *testing.T) {
	ctx := context.Background()
	s := storetest.Store(t)
	a := storetest.NewAccount(t, s, "A").AccountID
	apps := demo.Applications(a, 1, 4, time.Now().Add(-time.Hour), nil, "w.")
	if err := saveApplications(ctx, s, apps); err != nil {
		t.Fatal(err)
	}
	var driver int64
	if err := s.DB().GetContext(ctx, &driver, `SELECT driver_id FROM applications WHERE account_id = $1`, a); err != nil {
		t.Fatal(err)
	}
	withdrew := time.Now().UTC().Add(-time.Minute).Truncate(time.Microsecond)
	setStatuses(t, s, a, update(driver, domain.LeadWithdrawn, "", "took another offer", withdrew))

	// The intake's steps: the applications, then the drivers received
	// who had withdrawn.
	save := func(apps []store.Application) []store.StatusChanged {
		var changes []store.StatusChanged
		if err := s.InRetriedTx(ctx, "save", func(tx *store.Tx) error {
			saved, err := tx.SaveApplications(ctx, apps)
			if err == nil {
				changes, err = tx.ResetWithdrawn(ctx, a, saved.ReceivedIDs)
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return changes
	}
	if changes := save(apps); len(changes) != 0 {
		t.Errorf("the same application again changed %+v", changes)
	}
	if got := statusOf(t, s, a, driver); got.Status != domain.LeadWithdrawn {
		t.Fatalf("after the same application again: %s, want withdrawn", got.Status)
	}

	changes := save(changed(apps, 30*time.Minute, 1))
	if len(changes) != 1 || changes[0].DriverID != driver || changes[0].Status != domain.LeadNew ||
		changes[0].Previous != domain.LeadWithdrawn || !changes[0].ChangedAt.After(withdrew) {
		t.Fatalf("changes %+v, want driver %d withdrawn to new after %s", changes, driver, withdrew)
	}
	got := statusOf(t, s, a, driver)
	if got.StatusChange != changes[0].StatusChange {
		t.Errorf("status %+v, want %+v", got.StatusChange, changes[0].StatusChange)
	}
	if len(got.History) == 0 || got.History[0] != (store.StatusEntry{Status: domain.LeadWithdrawn, ChangedAt: withdrew}) {
		t.Errorf("history %+v, want withdrawn at %s first", got.History, withdrew)
	}
}

// TestDriverStatusSaidAgainConverges: a status said again later takes the
// later time, so replays of reviewing, contacted and reviewing again end
// reviewing in every order.
func TestDriverStatusSaidAgainConverges(t *testing.T) {
	s := storetest.Store(t)
	a := storetest.NewAccount(t, s, "A").AccountID
	base := time.Now().UTC().Add(time.Hour).Truncate(time.Microsecond)
	changes := func(driver int64) []store.StatusUpdate {
		return []store.StatusUpdate{
			update(driver, domain.LeadReviewing, "", "", base),
			update(driver, domain.LeadContacted, "", "", base.Add(time.Minute)),
			update(driver, domain.LeadReviewing, "", "", base.Add(2*time.Minute)),
		}
	}
	for k, order := range [][]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}} {
		driver := oneDriver(t, s, a, uint64(200+k), fmt.Sprintf("again%d.", k))
		for _, i := range order {
			setStatuses(t, s, a, changes(driver)[i])
		}
		got := statusOf(t, s, a, driver)
		if got.Status != domain.LeadReviewing || !got.ChangedAt.Equal(base.Add(2*time.Minute)) {
			t.Errorf("order %v: %+v, want reviewing at %s", order, got.StatusChange, base.Add(2*time.Minute))
		}
	}
}

// TestDriverStatusFirstChangeNeverStale: the new of a driver's
// applications is shown dated by the newest one, yet an employer's first
// change dated before that application still applies.
func TestDriverStatusFirstChangeNeverStale(t *testing.T) {
	ctx := context.Background()
	s := storetest.Store(t)
	a := storetest.NewAccount(t, s, "A").AccountID
	first := demo.Applications(a, 1, 9, time.Now().Add(-48*time.Hour), nil, "first.")
	if err := saveApplications(ctx, s, first); err != nil {
		t.Fatal(err)
	}
	later := changed(first, 24*time.Hour, 1)
	if err := saveApplications(ctx, s, later); err != nil {
		t.Fatal(err)
	}
	var driver int64
	if err := s.DB().GetContext(ctx, &driver, `SELECT driver_id FROM applications WHERE account_id = $1`, a); err != nil {
		t.Fatal(err)
	}
	between := later[0].Sent.Add(-time.Hour).UTC().Truncate(time.Microsecond)
	if r := setStatuses(t, s, a, update(driver, domain.LeadContacted, "", "", between)); r[0].Outcome != store.StatusApplied {
		t.Fatalf("a first change before the newest application: outcome %d, want applied", r[0].Outcome)
	}
	if r := setStatuses(t, s, a, update(driver, domain.LeadHired, "", "", between.Add(-time.Minute))); r[0].Outcome != store.StatusStale {
		t.Errorf("a change older than the employer's: outcome %d, want stale", r[0].Outcome)
	}
}

// TestWithdrawalAheadOfTheClock: a withdrawal dated a few minutes ahead,
// then a new application: the new status is not dated before the
// withdrawal, so a replay of the withdrawal is stale.
func TestWithdrawalAheadOfTheClock(t *testing.T) {
	ctx := context.Background()
	s := storetest.Store(t)
	a := storetest.NewAccount(t, s, "A").AccountID
	apps := demo.Applications(a, 1, 11, time.Now().Add(-time.Hour), nil, "ahead.")
	if err := saveApplications(ctx, s, apps); err != nil {
		t.Fatal(err)
	}
	var driver int64
	if err := s.DB().GetContext(ctx, &driver, `SELECT driver_id FROM applications WHERE account_id = $1`, a); err != nil {
		t.Fatal(err)
	}
	ahead := time.Now().UTC().Add(3 * time.Minute).Truncate(time.Microsecond)
	withdrawal := update(driver, domain.LeadWithdrawn, "", "", ahead)
	setStatuses(t, s, a, withdrawal)
	var changes []store.StatusChanged
	if err := s.InRetriedTx(ctx, "save", func(tx *store.Tx) error {
		saved, err := tx.SaveApplications(ctx, changed(apps, time.Minute, 1))
		if err == nil {
			changes, err = tx.ResetWithdrawn(ctx, a, saved.ReceivedIDs)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(changes) != 1 || changes[0].ChangedAt.Before(ahead) {
		t.Fatalf("reset %+v, want one dated no earlier than %s", changes, ahead)
	}
	if r := setStatuses(t, s, a, withdrawal); r[0].Outcome == store.StatusApplied {
		t.Errorf("the withdrawal replayed undid the new application's reset")
	}
}

// TestStatusChangesFolded: a change of status notes its account for the
// fold of the counts, as a write of applications does, so an account that
// only syncs statuses does not pile up count rows its list then sums.
func TestStatusChangesFolded(t *testing.T) {
	ctx := context.Background()
	s := storetest.Store(t)
	acct := storetest.NewAccount(t, s, "A").AccountID
	if err := saveApplications(ctx, s, demo.Applications(acct, 20, 3, time.Now().Add(-time.Hour), nil, "fold.")); err != nil {
		t.Fatal(err)
	}
	s.FoldWrittenCounts(ctx)
	var ids []int64
	if err := s.DB().SelectContext(ctx, &ids, `SELECT driver_id FROM applications WHERE account_id = $1 ORDER BY driver_id`, acct); err != nil {
		t.Fatal(err)
	}
	for i, st := range []domain.LeadStatus{domain.LeadReviewing, domain.LeadContacted, domain.LeadHired} {
		at := time.Now().UTC().Truncate(time.Microsecond).Add(time.Duration(i-5) * time.Minute)
		setStatuses(t, s, acct, update(ids[i], st, "", "", at), update(ids[i+5], st, "", "", at))
	}
	var rows int
	if err := s.DB().GetContext(ctx, &rows, `SELECT count(*) FROM application_counts
		WHERE account_id = $1 AND dimension = 'status'`, acct); err != nil || rows <= 4 {
		t.Fatalf("%d status count rows before the fold (%v): the changes should have added some", rows, err)
	}
	s.FoldWrittenCounts(ctx)
	if unfolded := unfoldedValues(t, s, acct); unfolded != 0 {
		t.Errorf("%d values still have several count rows after the fold", unfolded)
	}
}
