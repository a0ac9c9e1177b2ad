package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/server/imports"
	"github.com/truckjobs/jobboard/server/jobs"
	"github.com/truckjobs/jobboard/server/search"
	"github.com/truckjobs/jobboard/server/store"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/truckjobs/jobboard/gateway/render"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/internal/metrics"
	"github.com/truckjobs/jobboard/internal/rules"
	"github.com/truckjobs/jobboard/internal/testfix"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// importFixture is the services over a fresh database with two accounts
// and the queue working.
type importFixture struct {
	svcs       *Services
	st         *store.Store
	ctxA, ctxB context.Context
	metrics    *metrics.Metrics
}

func newImportFixture(t testing.TB) *importFixture {
	t.Helper()
	f := newIdleImportFixture(t, nil)
	f.start(t)
	return f
}

// newIdleImportFixture is an import fixture whose queue is not started
// yet, its config changed by change when not nil.
func newIdleImportFixture(t testing.TB, change func(*Config)) *importFixture {
	t.Helper()
	st := storetest.Store(t)
	m := metrics.New()
	cfg := Config{Now: nowFunc, RenderCallback: render.JSON,
		AllowPrivateCallbacks: true, CallbackRetrySchedule: []time.Duration{50 * time.Millisecond, 50 * time.Millisecond},
		CallbackTimeout: 500 * time.Millisecond, Metrics: m}
	if change != nil {
		change(&cfg)
	}
	svcs, err := NewServices(st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, b := storetest.NewAccount(t, st, "A"), storetest.NewAccount(t, st, "B")
	return &importFixture{svcs: svcs, st: st, metrics: m,
		ctxA: call.WithCaller(ctx, call.Caller{AccountID: a.AccountID}),
		ctxB: call.WithCaller(ctx, call.Caller{AccountID: b.AccountID})}
}

// start starts the fixture's queue, stopped when the test ends.
func (f *importFixture) start(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	if err := f.svcs.Queue.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_ = f.svcs.Queue.Stop(stopCtx)
	})
}

// run creates an import and polls it until complete.
func (f *importFixture) run(t *testing.T, ctx context.Context, req *restv2.CreateJobImportRequest) *restv2.JobImport {
	t.Helper()
	created, err := f.svcs.Imports.CreateJobImport(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if d := created.Data; d.Status != "pending" || d.Results != nil || d.CompletedAt != nil {
		t.Errorf("created import: %v", d)
	}
	return f.waitComplete(t, ctx, created.Data.Id)
}

// waitComplete polls the import id until complete.
func (f *importFixture) waitComplete(t *testing.T, ctx context.Context, id string) *restv2.JobImport {
	t.Helper()
	return f.pollComplete(t, ctx, id, 50*time.Millisecond)
}

// pollComplete polls the import id every interval until complete.
func (f *importFixture) pollComplete(t testing.TB, ctx context.Context, id string, interval time.Duration) *restv2.JobImport {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, err := f.svcs.Imports.GetJobImport(ctx, &restv2.GetJobImportRequest{Id: id})
		if err != nil {
			t.Fatal(err)
		}
		if got.Data.Status == "complete" {
			return got.Data
		}
		if time.Now().After(deadline) {
			t.Fatalf("import still %s after 20 s", got.Data.Status)
		}
		time.Sleep(interval)
	}
}

func TestImportPollingToComplete(t *testing.T) {
	f := newImportFixture(t)
	var jobs []*restv2.JobInput
	for i := 0; i < 1500; i++ { // no 1,000-job limit in an import
		jobs = append(jobs, input(fmt.Sprintf("I%d", i)))
	}
	jobs = append(jobs, input("I0"), &restv2.JobInput{Title: new("no reference")})
	imp := f.run(t, f.ctxA, &restv2.CreateJobImportRequest{Jobs: jobs})
	r := imp.Results
	if r.Added != 1500 || r.Failed != 2 || r.Processed != 1502 || len(r.Errors) != 2 {
		t.Fatalf("results: added %d failed %d processed %d errors %v", r.Added, r.Failed, r.Processed, r.Errors)
	}
	if e := r.Errors[0]; e.Index != 1500 || e.GetReferenceNumber() != "I0" || len(e.Messages) != 1 {
		t.Errorf("duplicate: %v", e)
	}
	if e := r.Errors[1]; e.Index != 1501 || e.ReferenceNumber != nil || len(e.Messages) != 5 {
		t.Errorf("missing fields, all messages in one entry: %v", e)
	}
	if _, err := time.Parse(call.TimeFormat, imp.GetCompletedAt()); err != nil {
		t.Errorf("completedAt %q: %v", imp.GetCompletedAt(), err)
	}
	// The same feed again changes nothing.
	again := f.run(t, f.ctxA, &restv2.CreateJobImportRequest{Jobs: jobs[:1500]})
	if again.Results.Unchanged != 1500 || again.Results.Processed != 1500 {
		t.Errorf("second import: %v", again.Results)
	}
	// The worker counts a run just after its transaction commits.
	testfix.Eventually(5*time.Second, func() bool {
		return sample(t, f.metrics, "jobboard_job_imports_finished_total", map[string]string{"status": "complete"}) == 2
	})
	if got := sample(t, f.metrics, "jobboard_job_imports_finished_total", map[string]string{"status": "complete"}); got != 2 {
		t.Errorf("%v imports counted complete, want 2", got)
	}
	if got := sample(t, f.metrics, "jobboard_job_imports_finished_total", map[string]string{"status": "failed"}); got != 0 {
		t.Errorf("%v import runs counted failed, want 0", got)
	}
}

func TestImportDeleteJobs(t *testing.T) {
	f := newImportFixture(t)
	if _, err := f.svcs.Jobs.PostJobs(f.ctxA, &restv2.PostJobsRequest{Jobs: []*restv2.JobInput{input("KEEP"), input("BAD"), input("GONE")}}); err != nil {
		t.Fatal(err)
	}
	bad := input("BAD")
	bad.State = new("ZZ") // fails validation, so it is not deleted either
	imp := f.run(t, f.ctxA, &restv2.CreateJobImportRequest{Jobs: []*restv2.JobInput{input("KEEP"), bad, input("NEW")}, DeleteJobs: true})
	r := imp.Results
	if r.Deleted != 1 || r.Unchanged != 1 || r.Added != 1 || r.Failed != 1 {
		t.Fatalf("results: %v", r)
	}
	list, _ := f.svcs.Jobs.ListJobs(f.ctxA, &restv2.ListJobsRequest{})
	var refs []string
	for _, j := range list.Jobs {
		refs = append(refs, j.ReferenceNumber)
	}
	if fmt.Sprint(refs) != "[KEEP BAD NEW]" {
		t.Errorf("jobs after deleteJobs: %v", refs)
	}
}

func TestImportIdempotencyAndIsolation(t *testing.T) {
	f := newImportFixture(t)
	req := &restv2.CreateJobImportRequest{Jobs: []*restv2.JobInput{input("A1")}}
	withKey := func(ctx context.Context, key string) context.Context {
		return metadata.NewIncomingContext(ctx, metadata.Pairs("idempotency-key", key))
	}
	first, err := f.svcs.Imports.CreateJobImport(withKey(f.ctxA, "k1"), req)
	if err != nil {
		t.Fatal(err)
	}
	retry, err := f.svcs.Imports.CreateJobImport(withKey(f.ctxA, "k1"), req)
	if err != nil || retry.Data.Id != first.Data.Id {
		t.Errorf("retry with the same key and body: %v %v", retry, err)
	}
	other := &restv2.CreateJobImportRequest{Jobs: []*restv2.JobInput{input("A2")}}
	if _, err := f.svcs.Imports.CreateJobImport(withKey(f.ctxA, "k1"), other); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("same key, other body: %v, want FailedPrecondition", err)
	}
	inB, err := f.svcs.Imports.CreateJobImport(withKey(f.ctxB, "k1"), req)
	if err != nil || inB.Data.Id == first.Data.Id {
		t.Errorf("keys are per account: %v %v", inB, err)
	}
	if _, err := f.svcs.Imports.GetJobImport(f.ctxB, &restv2.GetJobImportRequest{Id: first.Data.Id}); status.Code(err) != codes.NotFound {
		t.Errorf("B reads A's import: %v", err)
	}
	long := string(make([]byte, imports.MaxIdempotencyKey+1))
	if _, err := f.svcs.Imports.CreateJobImport(withKey(f.ctxA, long), req); status.Code(err) != codes.InvalidArgument {
		t.Errorf("a 256-character key: %v", err)
	}
	tooMany := &restv2.CreateJobImportRequest{Jobs: make([]*restv2.JobInput, rules.MaxImportJobs+1)}
	if _, err := f.svcs.Imports.CreateJobImport(f.ctxA, tooMany); status.Code(err) != codes.InvalidArgument {
		t.Errorf("%d jobs: %v", rules.MaxImportJobs+1, err)
	}
}

// TestImportWithNULAndNothingToKeep: NUL characters echoed into the results
// must not stop the import from completing, and are shown \x00 there, in
// values as in messages; and deleteJobs with no listed reference withdraws
// every active job.
func TestImportWithNULAndNothingToKeep(t *testing.T) {
	f := newImportFixture(t)
	if _, err := f.svcs.Jobs.PostJobs(f.ctxA, &restv2.PostJobsRequest{Jobs: []*restv2.JobInput{input("OLD1"), input("OLD2")}}); err != nil {
		t.Fatal(err)
	}
	withExtra := &restv2.JobInput{Title: new("t"), ExtraFields: []*restv2.ExtraField{{Name: "x\x00", Value: new("\x00")}}}
	imp := f.run(t, f.ctxA, &restv2.CreateJobImportRequest{
		Jobs: []*restv2.JobInput{{ReferenceNumber: new("A\x00")}, withExtra}, DeleteJobs: true})
	r := imp.Results
	if r.Failed != 2 || r.Deleted != 2 || len(r.IgnoredValues) != 1 || len(r.Errors) != 2 {
		t.Fatalf("results: %v", r)
	}
	ignored, failed := r.IgnoredValues[0], r.Errors[0]
	for _, tt := range []struct{ name, got, want string }{
		{"ignored field", ignored.GetField(), `x\x00`},
		{"ignored value", ignored.GetValue(), `\x00`},
		{"ignored message", ignored.GetMessage(), `unknown field x\x00 was ignored`},
		{"error's reference", failed.GetReferenceNumber(), `A\x00`},
		{"error's message", failed.GetMessages()[0], `referenceNumber: "A\x00" contains a NUL character or bytes that are not UTF-8`},
	} {
		if tt.got != tt.want {
			t.Errorf("%s %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

// sample is the value of the counter or gauge name with every label in
// labels, from the fixture's registry; 0 when there is none.
func sample(t *testing.T, m *metrics.Metrics, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, mf := range families {
		if mf.GetName() != name {
			continue
		}
		for _, s := range mf.GetMetric() {
			matched := 0
			for _, l := range s.GetLabel() {
				if v, ok := labels[l.GetName()]; ok && v == l.GetValue() {
					matched++
				}
			}
			if matched != len(labels) {
				continue
			}
			if s.Counter != nil {
				return s.GetCounter().GetValue()
			}
			return s.GetGauge().GetValue()
		}
	}
	return 0
}

// TestQueueDepthMetric: an import waiting for a worker shows in the queue
// gauge, read from the database at scrape time.
func TestQueueDepthMetric(t *testing.T) {
	st := storetest.Store(t)
	m := metrics.New()
	m.QueueCacheFor = 0 // every scrape reads the database
	svcs, err := NewServices(st, Config{Now: nowFunc, RenderCallback: render.JSON, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	a := storetest.NewAccount(t, st, "A")
	ctx := call.WithCaller(context.Background(), call.Caller{AccountID: a.AccountID})
	waiting := map[string]string{"kind": "job_import", "state": "available"}
	if got := sample(t, m, "jobboard_queue_jobs", waiting); got != 0 {
		t.Errorf("before any import: %v available", got)
	}
	for i := 0; i < 2; i++ { // the queue is not started: both wait
		if _, err := svcs.Imports.CreateJobImport(ctx, &restv2.CreateJobImportRequest{Jobs: []*restv2.JobInput{input("Q")}}); err != nil {
			t.Fatal(err)
		}
	}
	if got := sample(t, m, "jobboard_queue_jobs", waiting); got != 2 {
		t.Errorf("%v imports available, want 2", got)
	}
	// The first import has waited for a worker since it was accepted.
	time.Sleep(300 * time.Millisecond)
	if got := sample(t, m, "jobboard_queue_oldest_job_age_seconds", waiting); got < 0.3 || got > 60 {
		t.Errorf("the oldest available import is %v s old, want 0.3 s or more (and less than a minute)", got)
	}
	if got := sample(t, m, "jobboard_queue_oldest_job_age_seconds", map[string]string{"kind": "job_import", "state": "running"}); got != 0 {
		t.Errorf("the oldest running import is %v s old with none running, want 0", got)
	}
	if got := sample(t, m, "jobboard_queue_jobs", map[string]string{"kind": "job_import_callback", "state": "available"}); got != 0 {
		t.Errorf("%v callbacks available, want 0", got)
	}
}

// TestImportResultsStayNearTheRequestSize: an import's stored results (and
// so its callback) stay a small multiple of what was sent however many
// values a field holds (docs/api.md, Limits against abuse; a 201 KB import once stored
// 8.1 MB of results).
func TestImportResultsStayNearTheRequestSize(t *testing.T) {
	f := newImportFixture(t)
	var jobs []*restv2.JobInput
	for i := range 20 {
		in := &restv2.JobInput{ReferenceNumber: new(strings.Repeat("R", 1020) + fmt.Sprintf("%04d", i))}
		for range 10_000 {
			in.EmploymentType = append(in.EmploymentType, "x")
		}
		for k := range 200 {
			in.ExtraFields = append(in.ExtraFields, &restv2.ExtraField{Name: fmt.Sprintf("f%d", k), Value: new("0")})
		}
		jobs = append(jobs, in)
	}
	req := &restv2.CreateJobImportRequest{Jobs: jobs}
	imp := f.run(t, f.ctxA, req)
	body, err := render.JSON(&restv2.GetJobImportResponse{Data: imp, Links: &restv2.JobImportLinks{Self: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	sent := proto.Size(req)
	t.Logf("figures: an import of %d bytes (protobuf) has results of %d bytes (JSON)", sent, len(body))
	if imp.Results.Failed != 20 || len(body) > 2*sent {
		t.Errorf("failed %d; results of %d bytes for an import of %d", imp.Results.Failed, len(body), sent)
	}
}

// TestImportInChunksAsAWhole: an import is checked and written a chunk at
// a time (jobs.ImportChunk), with the outcome of doing it all at once: the
// active-job limit counts what earlier chunks added, a repeated reference
// is found in a later chunk, and every entry carries its index in the
// import.
func TestImportInChunksAsAWhole(t *testing.T) {
	f := newImportFixture(t)
	const existing, listed = jobs.MaxActiveJobs - jobs.ImportChunk/2, 2*jobs.ImportChunk + 100
	for start := 0; start < existing; start += rules.MaxJobsPerPost {
		var post []*restv2.JobInput
		for i := start; i < min(start+rules.MaxJobsPerPost, existing); i++ {
			post = append(post, input(fmt.Sprintf("OLD%d", i)))
		}
		if _, err := f.svcs.Jobs.PostJobs(f.ctxA, &restv2.PostJobsRequest{Jobs: post}); err != nil {
			t.Fatal(err)
		}
	}
	batch := make([]*restv2.JobInput, listed)
	for i := range batch {
		batch[i] = input(fmt.Sprintf("NEW%d", i))
	}
	repeated, ignored, invalid := jobs.ImportChunk+jobs.ImportChunk/2, jobs.ImportChunk+200, 2*jobs.ImportChunk+50
	batch[repeated] = input("NEW10")
	batch[ignored].ExtraFields = []*restv2.ExtraField{{Name: "benefits", Value: new("Dental")}}
	batch[invalid].State = new("ZZ")
	r := f.run(t, f.ctxA, &restv2.CreateJobImportRequest{Jobs: batch, DeleteJobs: true}).Results
	room := jobs.MaxActiveJobs - existing
	if r.Added != int32(room) || r.Failed != int32(listed-room) || r.Processed != listed || r.Deleted != existing {
		t.Fatalf("added %d failed %d processed %d deleted %d, want %d, %d, %d, %d",
			r.Added, r.Failed, r.Processed, r.Deleted, room, listed-room, listed, existing)
	}
	if n := activeJobs(t, f.st); n != room {
		t.Errorf("%d active jobs, want the %d added", n, room)
	}
	for k, e := range r.Errors {
		i := room + k
		want := "the account has reached its maximum"
		switch i {
		case repeated:
			want = "already appears at index 10 of this request"
		case invalid:
			want = "state"
		}
		if e.Index != int32(i) || e.GetReferenceNumber() != batch[i].GetReferenceNumber() || len(e.Messages) != 1 || !strings.Contains(e.Messages[0], want) {
			t.Fatalf("error %d: %v, want index %d saying %q", k, e, i, want)
		}
	}
	if len(r.IgnoredValues) != 1 || r.IgnoredValues[0].GetIndex() != int32(ignored) || r.IgnoredValues[0].GetField() != "benefits" {
		t.Errorf("ignored values: %v, want benefits at index %d", r.IgnoredValues, ignored)
	}
}

// TestImportFoundBySearchOnceComplete: the jobs an import adds are found
// by job search as soon as the import is complete, and those it withdraws
// are gone (contract §11: no index lags behind the import that made it).
func TestImportFoundBySearchOnceComplete(t *testing.T) {
	f := newImportFixture(t)
	found := func(query string) []string {
		t.Helper()
		page, err := f.svcs.Search.Search(context.Background(), search.Request{Query: query})
		if err != nil {
			t.Fatal(err)
		}
		var refs []string
		for _, r := range page.Results {
			refs = append(refs, r.Job.ReferenceNumber)
		}
		return refs
	}
	tanker := func(ref string) *restv2.JobInput {
		j := input(ref)
		j.Title = new("Hazmat Tanker Driver")
		return j
	}
	f.run(t, f.ctxA, &restv2.CreateJobImportRequest{Jobs: []*restv2.JobInput{tanker("T1"), tanker("T2")}})
	if got := found("tanker"); !slices.Equal(got, []string{"T2", "T1"}) {
		t.Errorf("after the import: %q, want T2 and T1, newest first", got)
	}
	// A feed without T1 withdraws it, when the import says so.
	f.run(t, f.ctxA, &restv2.CreateJobImportRequest{Jobs: []*restv2.JobInput{tanker("T2")}, DeleteJobs: true})
	if got := found("tanker"); !slices.Equal(got, []string{"T2"}) {
		t.Errorf("after the import that withdrew T1: %q, want T2 alone", got)
	}
}
