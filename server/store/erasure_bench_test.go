package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/cmd/jobboard/demo"
	"github.com/truckjobs/jobboard/domain"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// BenchmarkEraseDriver erases a driver with 10 job applications, an
// employment entry, 4 earlier statuses and 50 events, in an account of
// 2,000 other drivers and 20,000 events about them: the erasure's
// transaction, as DELETE /api/v2.0/drivers/{id} runs it (issue target:
// under 20 ms).
func BenchmarkEraseDriver(b *testing.B) {
	ctx := context.Background()
	s := storetest.Store(b)
	a := storetest.NewAccount(b, s, "bench").AccountID
	refs := make([]string, 10)
	jobs := make([]store.JobFields, 10)
	for i := range refs {
		refs[i] = fmt.Sprintf("J%d", i)
		jobs[i] = job(refs[i])
	}
	if _, err := s.UpsertJobs(ctx, a, jobs, store.UpsertOptions{MaxActive: 100, Today: day1}); err != nil {
		b.Fatal(err)
	}
	now := time.Now().UTC()
	if err := saveInBatches(ctx, s, demo.Applications(a, 2000, 1, now, refs, "bg."), 500); err != nil {
		b.Fatal(err)
	}
	var others []int64
	if err := s.DB().SelectContext(ctx, &others, `SELECT driver_id FROM applications WHERE account_id = $1`, a); err != nil {
		b.Fatal(err)
	}
	for chunk := range 20 {
		events := make([]store.NewEvent, 1000)
		for i := range events {
			d := others[(chunk*1000+i)%len(others)]
			events[i] = store.NewEvent{Type: domain.EventApplicationReceived, Data: []byte(fmt.Sprintf(`{"id":%d}`, d)), DriverID: d}
		}
		storetest.InsertEvents(b, s, a, events)
	}
	for round := 0; b.Loop(); round++ {
		b.StopTimer()
		app := demo.Applications(a, 1, uint64(1000+round), now, refs, fmt.Sprintf("erase%d.", round))[0]
		app.JobApps = nil
		for _, r := range refs {
			app.JobApps = append(app.JobApps, store.JobApplicationInput{Reference: r, CreatedAt: now})
		}
		app.Employment = []store.Employment{{Company: "Acme", State: "TX", Phone: "2125550100", StartDate: "2020-01-01"}}
		if err := saveApplications(ctx, s, []store.Application{app}); err != nil {
			b.Fatal(err)
		}
		var driver int64
		if err := s.DB().GetContext(ctx, &driver, `SELECT driver_id FROM applications WHERE account_id = $1 AND email_key = $2`,
			a, store.FoldCase(app.Profile.Email)); err != nil {
			b.Fatal(err)
		}
		if err := s.InTx(ctx, func(tx *store.Tx) error {
			for k, st := range []domain.LeadStatus{domain.LeadReviewing, domain.LeadContacted, domain.LeadInterviewing, domain.LeadOffered} {
				if _, err := tx.SetDriverStatuses(ctx, a, []store.StatusUpdate{{DriverID: driver,
					StatusChange: domain.StatusChange{Status: st, ChangedAt: now.Add(time.Duration(k) * time.Minute)}}}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		events := make([]store.NewEvent, 50)
		for i := range events {
			events[i] = store.NewEvent{Type: domain.EventStatusChanged, Data: []byte(fmt.Sprintf(`{"driverId":%d}`, driver)), DriverID: driver}
		}
		storetest.InsertEvents(b, s, a, events)
		b.StartTimer()
		var erased store.Erased
		if err := s.InTx(ctx, func(tx *store.Tx) error {
			var err error
			erased, err = tx.EraseDriver(ctx, a, driver)
			return err
		}); err != nil {
			b.Fatal(err)
		}
		if erased.Events != 50 || erased.JobApplications != 10 || erased.Statuses != 4 {
			b.Fatalf("erased %+v, want 50 events, 10 job applications, 4 earlier statuses", erased)
		}
	}
}
