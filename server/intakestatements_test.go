package server

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/domain"
	"github.com/truckjobs/jobboard/internal/sqlcount"
	"github.com/truckjobs/jobboard/server/drivers"
	"github.com/truckjobs/jobboard/server/intake"
	"github.com/truckjobs/jobboard/server/jobs"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// TestIntakeStatementsDoNotGrowWithTheBatch: an intake call sends the
// database the same statements for one application as for a thousand
// (counted at the driver: each one a round trip), new drivers or known
// ones, every application with an employment entry, a job application and
// its event's delivery to a subscribed endpoint. A batch naming one driver
// twice takes one more round of the batch's writes.
func TestIntakeStatementsDoNotGrowWithTheBatch(t *testing.T) {
	ctx := context.Background()
	// River notifies the queue's listeners of new jobs at most once an
	// interval, so whether a call sends that NOTIFY depends on the time
	// since the last one: it is the queue's statement, left out.
	counter := sqlcount.Counter{Skip: func(query string) bool { return strings.Contains(query, "name: PGNotifyMany") }}
	st, err := store.Open(ctx, storetest.URL(t), store.Connector(counter.Wrap))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	acct := storetest.NewAccount(t, st, "A")
	var posted []store.JobFields
	for i := range 3 {
		posted = append(posted, store.JobFields{ReferenceNumber: fmt.Sprintf("J%d", i), Title: "Driver", State: "TX",
			DriverType: "Company Driver", FreightType: "Box", Description: "d"})
	}
	if _, err := st.UpsertJobs(ctx, acct.AccountID, posted, store.UpsertOptions{MaxActive: jobs.MaxActiveJobs, Today: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateWebhookEndpoint(ctx, acct.AccountID, store.NewWebhookEndpoint{URL: "https://hooks.example.com/in",
		Events: []string{string(domain.EventApplicationReceived)}, Secret: "whsec_" + fmt.Sprint(time.Now().UnixNano())}); err != nil {
		t.Fatal(err)
	}
	ob := testOutbox(t, st)
	batch := func(n int, tag string) []*intake.Application {
		apps := make([]*intake.Application, n)
		for i := range apps {
			a := applicant("Ann", fmt.Sprintf("Lee%s%d", tag, i), "TX", "75001", "Company Driver", "2", "2026-01-05T10:00:00Z")
			a.EmploymentHistory = []intake.Employment{{Company: "Acme", State: "TX", Phone: "2125550100", StartDate: "2020-01-01"}}
			a.JobApplications = []intake.JobApplication{{Reference: fmt.Sprintf("J%d", i%3)}}
			apps[i] = a
		}
		return apps
	}
	statements := func(apps []*intake.Application) int64 {
		t.Helper()
		before := counter.Count()
		if _, err := drivers.ImportApplications(ctx, st, ob, acct.AccountID, apps); err != nil {
			t.Fatal(err)
		}
		return counter.Count() - before
	}
	one := statements(batch(1, "one"))
	tests := []struct {
		name string
		apps []*intake.Application
		want int64
	}{
		{"ten new", batch(10, "ten"), one},
		{"a thousand new", batch(1000, "thousand"), one},
		// Repeats have no events: fewer statements.
		{"the thousand sent again", batch(1000, "thousand"), -1},
		{"the thousand changed", func() []*intake.Application {
			apps := batch(1000, "thousand")
			for _, a := range apps {
				a.Sent = "2026-01-06T10:00:00Z"
			}
			return apps
		}(), one},
		{"a thousand naming one driver twice", append(batch(999, "twice"), batch(1, "twice")...), 0},
	}
	for _, tt := range tests {
		got := statements(tt.apps)
		switch {
		case tt.want == -1 && got > one:
			t.Errorf("%s: %d statements, one application %d", tt.name, got, one)
		case tt.want > 0 && got != tt.want:
			t.Errorf("%s: %d statements, one application %d", tt.name, got, one)
		case tt.want == 0 && got != one+4:
			t.Errorf("%s: %d statements, want one application's %d and a round's 4", tt.name, got, one)
		}
	}
	// The account; the jobs' lookup; the drivers, applications, employment
	// history (delete, insert) and job applications; the check for
	// withdrawn drivers; the event's driver (three reads), endpoints,
	// delivery and event.
	if one != 14 {
		t.Errorf("one application: %d statements, want 14", one)
	}
	// Drivers who withdrew and apply again are new again: the clock, the
	// statuses' write and their events (the endpoints, which take only
	// applications here, and the events), whatever their number.
	if _, err := st.DB().ExecContext(ctx, `UPDATE applications SET status = 'withdrawn', status_changed_at = now() - interval '1 day'
		WHERE account_id = $1`, acct.AccountID); err != nil {
		t.Fatal(err)
	}
	again := batch(1000, "thousand")
	for _, a := range again {
		a.Sent = "2026-01-07T10:00:00Z"
	}
	if got := statements(again); got != one+4 {
		t.Errorf("a thousand who withdrew applying again: %d statements, want one application's %d and 4", got, one)
	}
	var renewed int
	if err := st.DB().GetContext(ctx, &renewed, `SELECT count(*) FROM applications WHERE account_id = $1 AND status = 'new'`, acct.AccountID); err != nil {
		t.Fatal(err)
	}
	if renewed != 1000 {
		t.Errorf("%d drivers new again, want 1000", renewed)
	}
	t.Logf("one application: %d statements", one)
}
