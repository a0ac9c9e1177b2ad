package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// TestListJobsPage: paging by count and by size reads every active job of
// the account once, in id order, says when more follow, and what its jobs
// weighed.
func TestListJobsPage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.Store(t)
	acct, all := pagedAccount(t, s)

	tests := []struct {
		name      string
		limit     int
		maxBytes  int
		wantSizes []int // jobs per page
	}{
		{"one page", 100, 1 << 20, []int{11}},
		{"exactly full", 11, 1 << 20, []int{11}},
		{"by count", 4, 1 << 20, []int{4, 4, 3}},
		// Small jobs take about 300 bytes, large ones 10,300: 1,000 bytes
		// hold three small ones, and a large one goes alone (J05 is deleted).
		{"by size", 100, 1_000, []int{3, 1, 2, 1, 3, 1}},
		{"a job larger than the budget", 100, 10, []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []store.Job
			var sizes []int
			after := int64(0)
			for {
				page, err := s.ListJobsPage(ctx, acct, after, tt.limit, tt.maxBytes)
				if err != nil {
					t.Fatal(err)
				}
				sizes = append(sizes, len(page.Jobs))
				got = append(got, page.Jobs...)
				if want := weightOf(page.Jobs); page.Bytes != want {
					t.Errorf("page after %d weighed %d bytes, want %d", after, page.Bytes, want)
				}
				if !page.More {
					break
				}
				if len(page.Jobs) == 0 || len(sizes) > 20 {
					t.Fatalf("More without progress: pages %v", sizes)
				}
				after = page.Jobs[len(page.Jobs)-1].ID
			}
			if fmt.Sprint(sizes) != fmt.Sprint(tt.wantSizes) {
				t.Errorf("pages of %v jobs, want %v", sizes, tt.wantSizes)
			}
			if len(got) != len(all) {
				t.Fatalf("%d jobs read, want %d", len(got), len(all))
			}
			for i := range all {
				if got[i].ID != all[i].ID || got[i].Description != all[i].Description || got[i].PostedOn != all[i].PostedOn ||
					fmt.Sprint(got[i].EmploymentType) != fmt.Sprint(all[i].EmploymentType) || *got[i].PayMin != 1850 {
					t.Errorf("job %d: %+v, want %+v", i, got[i].ID, all[i].ID)
				}
			}
		})
	}
	empty, err := s.ListJobsPage(ctx, acct, all[len(all)-1].ID, 10, 1<<20)
	if err != nil || len(empty.Jobs) != 0 || empty.More {
		t.Errorf("after the last job: %+v %v", empty, err)
	}
}

// pagedAccount makes an account of 11 active jobs, every fourth of them
// large, its fifth withdrawn, beside another account's job, and returns it
// and its active jobs in id order.
func pagedAccount(t *testing.T, s *store.Store) (int64, []store.Job) {
	t.Helper()
	ctx := context.Background()
	acct := storetest.NewAccount(t, s, "a").AccountID
	other := storetest.NewAccount(t, s, "b").AccountID
	var jobs []store.JobFields
	for i := range 12 {
		j := job(fmt.Sprintf("J%02d", i))
		if i%4 == 3 {
			j.Description = strings.Repeat("d", 10_000) // a large job every fourth
		}
		jobs = append(jobs, j)
	}
	opts := store.UpsertOptions{MaxActive: 100, Today: day1}
	if _, err := s.UpsertJobs(ctx, acct, jobs, opts); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpsertJobs(ctx, other, []store.JobFields{job("OTHER")}, opts); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteJobsByReference(ctx, acct, []string{"J05"}); err != nil {
		t.Fatal(err)
	}
	all, err := s.ListJobs(ctx, acct)
	if err != nil {
		t.Fatal(err)
	}

	return acct, all
}

// weightOf is what jobs weigh by the rule of a page: the bytes of their
// texts and 256 for the rest of each.
func weightOf(jobs []store.Job) int64 {
	var n int
	for _, j := range jobs {
		n += 256 + len(j.ReferenceNumber) + len(j.Title) + len(j.Description)
		if j.City != nil {
			n += len(*j.City)
		}
		if j.Requirements != nil {
			n += len(*j.Requirements)
		}
	}
	return int64(n)
}
