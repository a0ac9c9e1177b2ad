package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/cmd/jobboard/demo"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// TestSeedMarksJobApplicants: after two seeds of the same account, a
// driver's application has has_job_apps exactly when it has a job
// application, the second seed's drivers included.
func TestSeedMarksJobApplicants(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.Store(t)
	a := storetest.NewAccount(t, s, "A").AccountID
	refs := []string{"J1", "J2"}
	if _, err := s.UpsertJobs(ctx, a, []store.JobFields{job("J1"), job("J2")},
		store.UpsertOptions{MaxActive: 10, Today: day1}); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	for i, prefix := range []string{"one.", "two."} {
		if err := s.SeedApplications(ctx, a, demo.Applications(a, 150, uint64(i+1), now, refs, prefix)); err != nil {
			t.Fatal(err)
		}
	}
	var marked, applied, wrong int
	if err := s.DB().QueryRowContext(ctx, `
		SELECT count(*) FILTER (WHERE a.has_job_apps),
		       count(*) FILTER (WHERE j.applied),
		       count(*) FILTER (WHERE a.has_job_apps IS DISTINCT FROM j.applied)
		  FROM applications a,
		       LATERAL (SELECT EXISTS (SELECT 1 FROM job_applications ja
		                 WHERE ja.account_id = a.account_id AND ja.driver_id = a.driver_id) AS applied) j
		 WHERE a.account_id = $1`, a).Scan(&marked, &applied, &wrong); err != nil {
		t.Fatal(err)
	}
	if applied == 0 || wrong != 0 {
		t.Fatalf("%d applications have job applications, %d are marked, %d disagree; want some, all agreeing", applied, marked, wrong)
	}
}
