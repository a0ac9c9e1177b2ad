package server

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/store"
)

// TestWholeListPages: the REST list's pages read every job once, in id
// order: the first 1,000 jobs in one page, then pages of at most 2.5 MB
// whose number of jobs each page before guessed, while jobs are posted,
// grown and withdrawn between pages.
func TestWholeListPages(t *testing.T) {
	t.Parallel()
	svc, ctx, st, now := newJobsFixture(t)
	c, err := call.From(ctx)
	if err != nil {
		t.Fatal(err)
	}
	caller := c.AccountID
	// 2,600 jobs; among the last 1,600, every 200th has a description of
	// 600 KB, so that pages hold a few of them.
	var fields []store.JobFields
	for i := range 2600 {
		j := storeJob(fmt.Sprintf("W%04d", i))
		if i >= 1000 && i%200 == 0 {
			j.Description = strings.Repeat("d", 600_000)
		}
		fields = append(fields, j)
	}
	opts := store.UpsertOptions{MaxActive: 10_000, Today: *now}
	if _, err := st.UpsertJobs(ctx, caller, fields, opts); err != nil {
		t.Fatal(err)
	}
	stored, err := st.ListJobs(ctx, caller)
	if err != nil {
		t.Fatal(err)
	}

	var read []int64
	var pages []int
	seen := map[int64]bool{}
	token, bytes := "", 0
	for page := 0; ; page++ {
		n := 0
		bytes = 0
		token, err = svc.EachOfWholeListPage(ctx, token, func(j *restv2.Job) error {
			if seen[j.GetId()] {
				t.Errorf("job %d read twice", j.GetId())
			}
			seen[j.GetId()] = true
			read, n, bytes = append(read, j.GetId()), n+1, bytes+len(j.GetDescription())
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, n)
		// A page holds at most 2.5 MiB, or one job.
		if bytes > 2<<20+2<<20/4 && n > 1 {
			t.Errorf("page %d holds %d bytes of descriptions", page, bytes)
		}
		if token == "" || page > 100 {
			break
		}
		if page == 1 {
			changeBetweenPages(t, st, caller, opts)
		}
	}
	t.Logf("figures: pages of %v jobs", pages)
	if pages[0] != 1000 || len(pages) < 4 {
		t.Errorf("pages of %v jobs, want 1,000 first and then several", pages)
	}
	// W2599 was withdrawn before its page was read; LATE, posted
	// meanwhile, comes after every other job.
	want, err := st.ListJobs(ctx, caller)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != len(stored) || want[len(want)-1].ReferenceNumber != "LATE" {
		t.Fatalf("the jobs after the changes end with %s", want[len(want)-1].ReferenceNumber)
	}
	if len(read) != len(want) {
		t.Fatalf("%d jobs read, want %d (pages %v)", len(read), len(want), pages)
	}
	for i := range want {
		if read[i] != want[i].ID {
			t.Fatalf("job %d is %d, want %d", i, read[i], want[i].ID)
		}
	}
}

// TestWholeListTokensAreItsOwn: the whole list's tokens and ListJobs' are
// not taken for each other.
func TestWholeListTokensAreItsOwn(t *testing.T) {
	t.Parallel()
	svc, ctx, st, now := newJobsFixture(t)
	c, err := call.From(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var fields []store.JobFields
	for i := range 1200 {
		fields = append(fields, storeJob(fmt.Sprintf("T%04d", i)))
	}
	if _, err := st.UpsertJobs(ctx, c.AccountID, fields, store.UpsertOptions{MaxActive: 10_000, Today: *now}); err != nil {
		t.Fatal(err)
	}
	wholeToken, err := svc.EachOfWholeListPage(ctx, "", func(*restv2.Job) error { return nil })
	if err != nil || wholeToken == "" {
		t.Fatalf("the first page of 1,200 jobs: next %q, %v", wholeToken, err)
	}
	if _, err := svc.ListJobs(ctx, &restv2.ListJobsRequest{PageToken: wholeToken}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("ListJobs with the whole list's token: %v, want InvalidArgument", err)
	}
	page, err := svc.ListJobs(ctx, &restv2.ListJobsRequest{PageSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.EachOfWholeListPage(ctx, page.GetNextPageToken(), func(*restv2.Job) error { return nil }); status.Code(err) != codes.InvalidArgument {
		t.Errorf("the whole list with ListJobs' token: %v, want InvalidArgument", err)
	}
}

// changeBetweenPages posts a job (after every other), withdraws one of the
// last, and grows 20 jobs of a later page to 300 KB each, which must not
// make a page larger.
func changeBetweenPages(t *testing.T, st *store.Store, account int64, opts store.UpsertOptions) {
	t.Helper()
	ctx := context.Background()
	changes := []store.JobFields{storeJob("LATE")}
	for i := 2200; i < 2220; i++ {
		j := storeJob(fmt.Sprintf("W%04d", i))
		j.Description = strings.Repeat("g", 300_000)
		changes = append(changes, j)
	}
	if _, err := st.UpsertJobs(ctx, account, changes, opts); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DeleteJobsByReference(ctx, account, []string{"W2599"}); err != nil {
		t.Fatal(err)
	}
}

// storeJob is a job in the store's form, with the reference ref.
func storeJob(ref string) store.JobFields {
	return store.JobFields{ReferenceNumber: ref, Title: "Driver", State: "TX",
		DriverType: "Company Driver", FreightType: "Dry Van", Description: "Good job"}
}
