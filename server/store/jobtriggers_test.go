package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/cmd/jobboard/demo"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// TestJobsUpdateAfterASmallOne: a session whose first update of jobs
// touched one job withdraws and brings back 3,000 jobs, each with a job
// application, about as fast as a session that starts with them, and the
// facet counts and the applications' titles still follow. PL/pgSQL keeps
// a trigger statement's plan for the session, made for the rows of its
// first run: before migration 0043 the facet counts compared each old row
// with each new one, 9,000,000 pairs and 18 times the second session's
// time without the applications; before 0044 the titles' trigger tested
// each job's id against the array of all 3,000, 5.2 times. With both,
// 40 runs of this test gave 0.77 to 1.20 times.
func TestJobsUpdateAfterASmallOne(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.Store(t)
	a := storetest.NewAccount(t, s, "facets after one").AccountID
	jobs := make([]store.JobFields, 3000)
	for i := range jobs {
		jobs[i] = facetedJob(i, 0)
	}
	if _, err := s.UpsertJobs(ctx, a, jobs, store.UpsertOptions{MaxActive: 10000, Today: day1}); err != nil {
		t.Fatal(err)
	}
	apps := applying(demo.Applications(a, len(jobs), 1, time.Now().UTC(), nil, "after-one."), func(i int) []string {
		return []string{jobs[i].ReferenceNumber}
	})
	if err := saveInBatches(ctx, s, apps, 1000); err != nil {
		t.Fatal(err)
	}
	// withdrawAndBack times the two updates on conn, after first (if
	// any) has run on it.
	withdrawAndBack := func(first string) time.Duration {
		t.Helper()
		conn, err := s.DB().Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		// A session of its own, not one the pool used before.
		if _, err := conn.ExecContext(ctx, `DISCARD ALL`); err != nil {
			t.Fatal(err)
		}
		if first != "" {
			if _, err := conn.ExecContext(ctx, first, a); err != nil {
				t.Fatal(err)
			}
		}
		start := time.Now()
		for _, q := range []string{
			`UPDATE jobs SET deleted_at = now() WHERE account_id = $1 AND deleted_at IS NULL`,
			`UPDATE jobs SET deleted_at = NULL WHERE account_id = $1 AND deleted_at IS NOT NULL`,
		} {
			if _, err := conn.ExecContext(ctx, q, a); err != nil {
				t.Fatal(err)
			}
		}
		return time.Since(start)
	}
	oneFirst := withdrawAndBack(`UPDATE jobs SET updated_at = now() WHERE id = (SELECT min(id) FROM jobs WHERE account_id = $1)`)
	alone := withdrawAndBack("")
	t.Logf("figures: withdrawn and back after one job's update %v, alone %v", oneFirst, alone)
	if oneFirst > 3*alone {
		t.Errorf("after one job's update, 3,000 jobs withdrawn and back took %v; alone, %v", oneFirst, alone)
	}
	if diffs := keptCountsDiffer(t, s); len(diffs) > 0 {
		t.Fatalf("%d counts differ, first %v", len(diffs), diffs[:min(len(diffs), 5)])
	}
	// A rename on the session that kept a plan for one job reaches the
	// applications.
	conn, err := s.DB().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{
		`UPDATE jobs SET updated_at = now() WHERE id = (SELECT min(id) FROM jobs WHERE account_id = $1)`,
		`UPDATE jobs SET title = 'Yard Jockey' WHERE account_id = $1`,
	} {
		if _, err := conn.ExecContext(ctx, q, a); err != nil {
			t.Fatal(err)
		}
	}
	var stale int
	if err := s.DB().GetContext(ctx, &stale, `SELECT count(*) FROM job_applications
		 WHERE account_id = $1 AND job_title_lower <> 'yard jockey'`, a); err != nil {
		t.Fatal(err)
	}
	if stale > 0 {
		t.Errorf("%d job applications keep their job's old title", stale)
	}
}
