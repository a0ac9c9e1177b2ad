package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/cmd/jobboard/demo"
	"github.com/truckjobs/jobboard/domain"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// rowsOfDriver counts, in every table with a driver_id column (and an
// account_id, when it has one), the rows of the driver in the account.
func rowsOfDriver(t *testing.T, s *store.Store, account, driver int64) map[string]int {
	t.Helper()
	ctx := context.Background()
	var tables []struct {
		Name       string `db:"table_name"`
		HasAccount bool   `db:"has_account"`
	}
	if err := s.DB().SelectContext(ctx, &tables, `
		SELECT c.table_name, EXISTS (SELECT 1 FROM information_schema.columns a
		        WHERE a.table_schema = c.table_schema AND a.table_name = c.table_name AND a.column_name = 'account_id') AS has_account
		  FROM information_schema.columns c JOIN information_schema.tables t USING (table_schema, table_name)
		 WHERE c.table_schema = current_schema() AND c.column_name = 'driver_id' AND t.table_type = 'BASE TABLE'
		 ORDER BY 1`); err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, tb := range tables {
		q := fmt.Sprintf(`SELECT count(*) FROM %s WHERE driver_id = $1`, tb.Name)
		args := []any{driver}
		if tb.HasAccount {
			q += ` AND account_id = $2`
			args = append(args, account)
		}
		var n int
		if err := s.DB().GetContext(ctx, &n, q, args...); err != nil {
			t.Fatal(err)
		}
		out[tb.Name] = n
	}
	return out
}

// TestEraseDriver: an erasure leaves no row of the driver in any table
// that names drivers, for that account, with its events; the other
// account's rows of the same person stay, and so does the person; a
// second erasure is ErrNotFound; once the last account erases the person,
// its row goes too.
func TestEraseDriver(t *testing.T) {
	ctx := context.Background()
	s := storetest.Store(t)
	a, b := storetest.NewAccount(t, s, "A").AccountID, storetest.NewAccount(t, s, "B").AccountID
	for _, acct := range []int64{a, b} {
		if _, err := s.UpsertJobs(ctx, acct, []store.JobFields{job("J1"), job("J2")}, store.UpsertOptions{MaxActive: 10, Today: day1}); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().UTC()
	apps := demo.Applications(a, 3, 7, now.Add(-time.Hour), []string{"J1", "J2"}, "erase.")
	for i := range apps { // every table that names drivers gets rows
		apps[i].JobApps = []store.JobApplicationInput{{Reference: "J1", CreatedAt: now}, {Reference: "J2", CreatedAt: now}}
		apps[i].Employment = []store.Employment{{Company: "Acme", State: "TX", Phone: "2125550100", StartDate: "2020-01-01"}}
	}
	// The same three people apply to B.
	toB := make([]store.Application, len(apps))
	for i, app := range apps {
		app.AccountID = b
		toB[i] = app
	}
	if err := saveApplications(ctx, s, append(apps, toB...)); err != nil {
		t.Fatal(err)
	}
	var driver int64
	if err := s.DB().GetContext(ctx, &driver, `SELECT driver_id FROM applications WHERE account_id = $1 ORDER BY driver_id LIMIT 1`, a); err != nil {
		t.Fatal(err)
	}
	// A status with history, and events about the driver in both accounts.
	for _, acct := range []int64{a, b} {
		setStatuses(t, s, acct, update(driver, domain.LeadContacted, "", "a note", now), update(driver+1, domain.LeadHired, "", "", now))
		setStatuses(t, s, acct, update(driver, domain.LeadRejected, "psp", "", now.Add(time.Minute)))
		storetest.InsertEvents(t, s, acct, []store.NewEvent{
			{Type: domain.EventApplicationReceived, Data: []byte(fmt.Sprintf(`{"id":%d}`, driver)), DriverID: driver},
			{Type: domain.EventStatusChanged, Data: []byte(fmt.Sprintf(`{"driverId":%d}`, driver)), DriverID: driver},
			{Type: domain.EventApplicationReceived, Data: []byte(fmt.Sprintf(`{"id":%d}`, driver+1)), DriverID: driver + 1},
		})
	}
	before := rowsOfDriver(t, s, a, driver)
	for _, table := range []string{"applications", "driver_status_history", "employment_history", "events", "job_applications", "job_title_applicants"} {
		if before[table] == 0 {
			t.Fatalf("the fixture has no row of the driver in %s: %v", table, before)
		}
	}
	bBefore := rowsOfDriver(t, s, b, driver)
	var erased store.Erased
	if err := s.InTx(ctx, func(tx *store.Tx) error {
		var err error
		erased, err = tx.EraseDriver(ctx, a, driver)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if erased.Events != 2 || erased.Statuses != 2 || erased.JobApplications == 0 || erased.Person {
		t.Errorf("erased %+v, want 2 events, 2 earlier statuses, its job applications, not the person", erased)
	}
	for table, n := range rowsOfDriver(t, s, a, driver) {
		if n != 0 && table != "drivers" {
			t.Errorf("%s still holds %d rows of the driver in A", table, n)
		}
	}
	if got := rowsOfDriver(t, s, b, driver); fmt.Sprint(got) != fmt.Sprint(bBefore) {
		t.Errorf("B's rows of the driver: %v, before %v", got, bBefore)
	}
	if other := rowsOfDriver(t, s, a, driver+1); other["applications"] != 1 || other["events"] != 1 {
		t.Errorf("A's other driver: %v", other)
	}
	if _, err := s.DriverStatus(ctx, a, driver); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("status after the erasure: %v", err)
	}
	err := s.InTx(ctx, func(tx *store.Tx) error { _, err := tx.EraseDriver(ctx, a, driver); return err })
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a second erasure: %v, want ErrNotFound", err)
	}
	checkCountsExact(t, s, a)
	// B, the person's last account, erases it too: the person goes.
	if err := s.InTx(ctx, func(tx *store.Tx) error {
		var err error
		erased, err = tx.EraseDriver(ctx, b, driver)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var people int
	if err := s.DB().GetContext(ctx, &people, `SELECT count(*) FROM drivers WHERE id = $1`, driver); err != nil {
		t.Fatal(err)
	}
	if !erased.Person || people != 0 {
		t.Errorf("after the last account's erasure: person erased %v, %d rows", erased.Person, people)
	}
	checkCountsExact(t, s, b)
}

// TestEraseDriverRacingIntake: an erasure in one account while another
// account takes an application from the same person never removes that
// application (the person's row goes only when no account holds one).
func TestEraseDriverRacingIntake(t *testing.T) {
	ctx := context.Background()
	s := storetest.Store(t)
	a, b := storetest.NewAccount(t, s, "A").AccountID, storetest.NewAccount(t, s, "B").AccountID
	for round := range 8 {
		app := demo.Applications(a, 1, uint64(100+round), time.Now().Add(-time.Hour), nil, fmt.Sprintf("race%d.", round))[0]
		if err := saveApplications(ctx, s, []store.Application{app}); err != nil {
			t.Fatal(err)
		}
		var driver int64
		if err := s.DB().GetContext(ctx, &driver, `SELECT driver_id FROM applications WHERE account_id = $1 AND email_key = $2`,
			a, store.FoldCase(app.Profile.Email)); err != nil {
			t.Fatal(err)
		}
		toB := app
		toB.AccountID = b
		errs := make(chan error, 2)
		go func() {
			errs <- s.InRetriedTx(ctx, "erase", func(tx *store.Tx) error { _, err := tx.EraseDriver(ctx, a, driver); return err })
		}()
		go func() { errs <- saveApplications(ctx, s, []store.Application{toB}) }()
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		var inB int
		if err := s.DB().GetContext(ctx, &inB, `SELECT count(*) FROM applications WHERE account_id = $1 AND email_key = $2`,
			b, store.FoldCase(app.Profile.Email)); err != nil {
			t.Fatal(err)
		}
		if inB != 1 {
			t.Fatalf("round %d: B holds %d applications of the person after A's erasure raced B's intake, want 1", round, inB)
		}
	}
}
