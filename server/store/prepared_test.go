package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// TestPreparedSurvivesMigration: a prepared read keeps working when a
// migration changes the type of a column it returns under a running server
// (PostgreSQL refuses the old plan), on that call and the ones after.
func TestPreparedSurvivesMigration(t *testing.T) {
	s := storetest.Store(t)
	ctx := context.Background()
	acct := storetest.NewAccount(t, s, "A").AccountID
	if _, err := s.UpsertJobs(ctx, acct, []store.JobFields{job("P1")}, store.UpsertOptions{MaxActive: 10, Today: time.Now()}); err != nil {
		t.Fatal(err)
	}
	jobs, err := s.ListJobs(ctx, acct)
	if err != nil || len(jobs) != 1 {
		t.Fatal(jobs, err)
	}
	id := jobs[0].ID
	if _, err := s.Job(ctx, acct, id); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().ExecContext(ctx, `ALTER TABLE jobs ALTER COLUMN state TYPE varchar(300)`); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if j, err := s.Job(ctx, acct, id); err != nil || j.ReferenceNumber != "P1" {
			t.Fatalf("read %d after the migration: %+v, %v", i+1, j, err)
		}
	}
}
