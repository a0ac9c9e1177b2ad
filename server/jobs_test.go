package server

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/server/jobs"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/internal/rules"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// nowFunc is the fixed clock of tests that do not change it.
func nowFunc() time.Time { return time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC) }

// newJobsFixture returns a job service over a fresh database, a context for
// a new account, and a settable clock.
func newJobsFixture(t testing.TB) (*jobs.Service, context.Context, *store.Store, *time.Time) {
	t.Helper()
	st := storetest.Store(t)
	creds := storetest.NewAccount(t, st, "Acme")
	now := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
	svc := jobs.New(st, func() time.Time { return now })
	return svc, call.WithCaller(context.Background(), call.Caller{AccountID: creds.AccountID}), st, &now
}

// input is a job that passes every rule, with the reference ref.
func input(ref string) *restv2.JobInput {
	return &restv2.JobInput{
		ReferenceNumber: &ref, Title: new("Driver"), State: new("TX"),
		DriverType: new("Company Driver"), FreightType: new("Dry Van"), Description: new("Good job"),
	}
}

func activeJobs(t *testing.T, st *store.Store) int {
	t.Helper()
	var n int
	if err := st.DB().Get(&n, `SELECT count(*) FROM jobs WHERE deleted_at IS NULL`); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestActiveLimitUnderConcurrentPosts: eight posts racing for the last 50
// places add exactly 50 jobs between them.
func TestActiveLimitUnderConcurrentPosts(t *testing.T) {
	svc, ctx, st, _ := newJobsFixture(t)
	var seed []store.JobFields
	for i := 0; i < jobs.MaxActiveJobs-50; i++ {
		seed = append(seed, store.JobFields{ReferenceNumber: fmt.Sprintf("S%d", i), Title: "t", State: "TX",
			DriverType: "Student", FreightType: "Box", Description: "d"})
	}
	caller, _ := call.From(ctx)
	if _, err := st.UpsertJobs(ctx, caller.AccountID, seed, store.UpsertOptions{MaxActive: jobs.MaxActiveJobs, Today: time.Now()}); err != nil {
		t.Fatal(err)
	}

	const writers, perWriter = 8, 20
	var wg sync.WaitGroup
	results := make([]*restv2.PostJobsResponse, writers)
	errs := make([]error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			req := &restv2.PostJobsRequest{}
			for i := 0; i < perWriter; i++ {
				req.Jobs = append(req.Jobs, input(fmt.Sprintf("W%dJ%d", w, i)))
			}
			results[w], errs[w] = svc.PostJobs(ctx, req)
		}(w)
	}
	wg.Wait()
	added, limited := 0, 0
	for w := range results {
		if errs[w] != nil {
			t.Fatalf("writer %d: %v", w, errs[w])
		}
		added += int(results[w].Added)
		limited += len(results[w].ErrorMessages.LimitErrors.Errors)
	}
	if added != 50 || limited != writers*perWriter-50 {
		t.Errorf("added %d and limited %d, want 50 and %d", added, limited, writers*perWriter-50)
	}
	if n := activeJobs(t, st); n != jobs.MaxActiveJobs {
		t.Errorf("active jobs %d, want %d", n, jobs.MaxActiveJobs)
	}
}

// TestUpsertLifecycle: unchanged writes nothing, a deleted job comes back
// with its id and a new date, and counts as added.
func TestUpsertLifecycle(t *testing.T) {
	svc, ctx, st, now := newJobsFixture(t)
	post := func(jobs ...*restv2.JobInput) *restv2.PostJobsResponse {
		t.Helper()
		resp, err := svc.PostJobs(ctx, &restv2.PostJobsRequest{Jobs: jobs})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	updatedAt := func() time.Time {
		var ts time.Time
		if err := st.DB().Get(&ts, `SELECT updated_at FROM jobs WHERE reference_number = 'A1'`); err != nil {
			t.Fatal(err)
		}
		return ts
	}

	if s := post(input("A1")); s.Added != 1 {
		t.Fatalf("first post: %v", s)
	}
	before := updatedAt()
	// Same content in another spelling is still the same job.
	same := input("A1")
	same.State, same.DriverType = new(" tx"), new("COMPANY DRIVER")
	if s := post(same); s.Unchanged != 1 || s.Updated != 0 {
		t.Fatalf("repost: %v", s)
	}
	if !updatedAt().Equal(before) {
		t.Error("an unchanged job was written")
	}
	changed := input("A1")
	changed.Title = new("Senior Driver")
	if s := post(changed); s.Updated != 1 {
		t.Fatalf("change: %v", s)
	}

	list, _ := svc.ListJobs(ctx, &restv2.ListJobsRequest{})
	id := list.Jobs[0].Id
	if _, err := svc.DeleteJob(ctx, &restv2.DeleteJobRequest{Id: fmt.Sprint(id)}); err != nil {
		t.Fatal(err)
	}
	if del, _ := svc.DeleteJob(ctx, &restv2.DeleteJobRequest{Id: fmt.Sprint(id)}); len(del.Summary.ErrorMessages.MissingErrors.Errors) != 1 {
		t.Errorf("deleting twice: %v", del.Summary)
	}
	if n := activeJobs(t, st); n != 0 {
		t.Errorf("active after delete: %d", n)
	}
	*now = now.AddDate(0, 0, 5)
	if s := post(changed); s.Added != 1 {
		t.Fatalf("revival: %v", s)
	}
	back, err := svc.GetJob(ctx, &restv2.GetJobRequest{Id: id})
	if err != nil || back.Job.Date != "2026-11-07" || back.Job.Title != "Senior Driver" {
		t.Errorf("revived job: %v %v", back, err)
	}
}

func TestCallerRequired(t *testing.T) {
	svc, _, _, _ := newJobsFixture(t)
	if _, err := svc.ListJobs(context.Background(), &restv2.ListJobsRequest{}); err == nil {
		t.Error("a call without a caller was served")
	}
}

// TestHugeInputIsNotAmplified: a long value is echoed cut short, and a
// request listing too many items is refused rather than answered in full.
func TestHugeInputIsNotAmplified(t *testing.T) {
	svc, ctx, _, _ := newJobsFixture(t)
	huge := input("H1")
	huge.Title = new(strings.Repeat("\x01", 1<<20))
	resp, err := svc.PostJobs(ctx, &restv2.PostJobsRequest{Jobs: []*restv2.JobInput{huge}})
	if err != nil {
		t.Fatal(err)
	}
	e := resp.ErrorMessages.InvalidErrors.Errors[0]
	if len(e.Message) > 1000 || len(e.GetValue()) > 4*call.MaxEchoed {
		t.Errorf("echo of a 1 MiB title: message %d bytes, value %d bytes", len(e.Message), len(e.GetValue()))
	}
	many := &restv2.PostJobsRequest{}
	for i := 0; i <= rules.MaxListItems; i++ {
		many.Jobs = append(many.Jobs, &restv2.JobInput{})
	}
	// Each refusal speaks of the request it refuses.
	if _, err := svc.PostJobs(ctx, many); status.Code(err) != codes.InvalidArgument ||
		!strings.Contains(status.Convert(err).Message(), "a post processes the first 1000 jobs") {
		t.Errorf("post of %d jobs: %v, want InvalidArgument about posts", len(many.Jobs), err)
	}
	ids := make([]string, rules.MaxListItems+1)
	for _, call := range []struct {
		name string
		del  func() error
	}{
		{"ids", func() error { _, err := svc.DeleteJobs(ctx, &restv2.DeleteJobsRequest{Ids: ids}); return err }},
		{"reference numbers", func() error {
			_, err := svc.DeleteJobsByReference(ctx, &restv2.DeleteJobsByReferenceRequest{ReferenceNumbers: ids})
			return err
		}},
	} {
		err := call.del()
		if msg := status.Convert(err).Message(); status.Code(err) != codes.InvalidArgument ||
			!strings.Contains(msg, "a delete takes at most 10000 ids or reference numbers") || strings.Contains(msg, "post") {
			t.Errorf("delete of %d %s: %v, want InvalidArgument about deletes", len(ids), call.name, err)
		}
	}
}
