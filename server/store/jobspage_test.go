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
// the account once, in id order, and says when more follow.
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

// TestJobPageCuts: the plan of a whole list cuts it where pages by count
// and by size end, and reading its ranges reads every active job once, in
// id order; a plan stopped short says so, and pages that weigh their own
// jobs read the rest.
func TestJobPageCuts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.Store(t)
	acct, all := pagedAccount(t, s)
	tests := []struct {
		name                        string
		skip                        int // the plan starts after so many jobs
		maxJobs, maxBytes, planJobs int
		wantSizes                   []int // jobs per planned page
		wantWhole                   bool
	}{
		{"one page", 0, 100, 1 << 20, 100, []int{11}, true},
		{"by count", 0, 4, 1 << 20, 100, []int{4, 4, 3}, true},
		// Small jobs weigh 287 bytes, large ones 10,269 (J05 is withdrawn):
		// a page ends before the job that starts past the next multiple of
		// 1,000, so a large job ends its page, and the jobs that start
		// within the same thousand share one: J00-J03 start before 1,000,
		// J04-J07 in 11,000s, J08 at 21,973, J09-J11 in 22,000s.
		{"by size", 0, 100, 1_000, 100, []int{4, 3, 1, 3}, true},
		{"by size and count", 0, 2, 1_000, 100, []int{2, 2, 2, 1, 1, 2, 1}, true},
		{"a plan of fewer jobs than the account's", 0, 4, 1 << 20, 6, []int{4, 2}, false},
		{"a plan of exactly the account's jobs", 0, 100, 1 << 20, 11, []int{11}, false},
		// After J02, sizes count from J03: J03 starts at 0, J04-J07 in
		// 10,000s, J08-J11 in 21,000s.
		{"after the first three jobs", 3, 100, 1_000, 100, []int{1, 3, 4}, true},
		{"after the last job", 11, 100, 1_000, 100, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var after int64
			if tt.skip > 0 {
				after = all[tt.skip-1].ID
			}
			cuts, whole, err := s.JobPageCuts(ctx, acct, after, tt.maxJobs, tt.maxBytes, tt.planJobs)
			if err != nil {
				t.Fatal(err)
			}
			if whole != tt.wantWhole {
				t.Errorf("whole %v, want %v", whole, tt.wantWhole)
			}
			var got []store.Job
			var sizes []int
			for _, through := range cuts {
				// Read as one page: the plan's ranges are what is tested.
				page, err := s.ListJobsPageThrough(ctx, acct, after, through, 100, 1<<30)
				if err != nil || page.More {
					t.Fatalf("the range through %d: more %v, %v", through, page.More, err)
				}
				got, sizes, after = append(got, page.Jobs...), append(sizes, len(page.Jobs)), through
			}
			if fmt.Sprint(sizes) != fmt.Sprint(tt.wantSizes) {
				t.Errorf("pages of %v jobs, want %v", sizes, tt.wantSizes)
			}
			if !whole { // the rest, as EachOfWholeListPage reads it
				rest, err := s.ListJobsPage(ctx, acct, after, 100, 1<<20)
				if err != nil || rest.More {
					t.Fatalf("the rest: more %v, %v", rest.More, err)
				}
				got = append(got, rest.Jobs...)
			}
			want := all[tt.skip:]
			if len(got) != len(want) {
				t.Fatalf("%d jobs read, want %d", len(got), len(want))
			}
			for i := range want {
				if got[i].ID != want[i].ID || got[i].Description != want[i].Description || got[i].PostedOn != want[i].PostedOn {
					t.Errorf("job %d: %+v, want %+v", i, got[i].ID, want[i].ID)
				}
			}
		})
	}
	other := storetest.NewAccount(t, s, "no jobs").AccountID
	if cuts, whole, err := s.JobPageCuts(ctx, other, 0, 100, 1<<20, 100); err != nil || len(cuts) != 0 || !whole {
		t.Errorf("an account without jobs: cuts %v, whole %v, %v", cuts, whole, err)
	}
}

// TestPlannedRangeWeighed: a planned range is read in pages that weigh
// their jobs, so a range whose jobs grew since its plan still comes in
// pages of about the size asked, up to its end and no further.
func TestPlannedRangeWeighed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.Store(t)
	acct, all := pagedAccount(t, s)
	cuts, _, err := s.JobPageCuts(ctx, acct, 0, 100, 1_000_000, 100)
	if err != nil || len(cuts) != 1 {
		t.Fatalf("cuts %v, %v: want one range of every job", cuts, err)
	}
	// After the plan, the range's small jobs grow to large ones.
	grown := []store.JobFields{}
	for _, j := range all[:6] {
		f := j.JobFields
		f.Description = strings.Repeat("g", 10_000)
		grown = append(grown, f)
	}
	if _, err := s.UpsertJobs(ctx, acct, grown, store.UpsertOptions{MaxActive: 100, Today: day1}); err != nil {
		t.Fatal(err)
	}
	through := all[7].ID // the range ends within the list: J00-J08
	var sizes []int
	var got []int64
	for after, more := int64(0), true; more; {
		page, err := s.ListJobsPageThrough(ctx, acct, after, through, 100, 21_000)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range page.Jobs {
			got = append(got, j.ID)
		}
		sizes, more = append(sizes, len(page.Jobs)), page.More
		if len(page.Jobs) == 0 || len(sizes) > 10 {
			t.Fatalf("pages of %v jobs", sizes)
		}
		after = page.Jobs[len(page.Jobs)-1].ID
	}
	// Seven jobs of about 10,270 bytes and J08's 287, two to a page of
	// 21,000.
	if fmt.Sprint(sizes) != "[2 2 2 2]" {
		t.Errorf("pages of %v jobs, want four of two", sizes)
	}
	for i, id := range got {
		if id != all[i].ID {
			t.Fatalf("job %d is %d, want %d", i, id, all[i].ID)
		}
	}
	if len(got) != 8 {
		t.Errorf("%d jobs read through the range's end, want 8", len(got))
	}
}
