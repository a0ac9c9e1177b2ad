package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/truckjobs/jobboard/server/grpcapi"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
)

// The testdata files import-payload-proto.bin and import-results-protojson.json
// are an import's payload and results as the service wrote them before the
// store owned their form: the jobs request in protobuf binary, and the
// results message through protojson.

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("imports", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestImportQueuedInProtoFormRuns: an import queued before the store owned
// the payload's form (its bytes as written then, its row as an older
// server inserts it) runs as the same jobs queued now do.
func TestImportQueuedInProtoFormRuns(t *testing.T) {
	f := newIdleImportFixture(t, nil)
	legacy := readTestdata(t, "import-payload-proto.bin")
	var req restv2.PostJobsRequest
	if err := proto.Unmarshal(legacy, &req); err != nil {
		t.Fatal(err)
	}
	old, err := f.svcs.Imports.CreateJobImport(f.ctxA, &restv2.CreateJobImportRequest{Jobs: []*restv2.JobInput{input("X")}})
	if err != nil {
		t.Fatal(err)
	}
	// payload_form DEFAULT: what a row inserted without naming the form gets.
	if _, err := f.st.DB().Exec(`UPDATE job_imports SET payload = $2, payload_form = DEFAULT WHERE id = $1`,
		old.Data.Id, legacy); err != nil {
		t.Fatal(err)
	}
	current, err := f.svcs.Imports.CreateJobImport(f.ctxB, &restv2.CreateJobImportRequest{Jobs: req.Jobs})
	if err != nil {
		t.Fatal(err)
	}
	f.start(t)
	got := f.waitComplete(t, f.ctxA, old.Data.Id).Results
	want := f.waitComplete(t, f.ctxB, current.Data.Id).Results
	if got.Added != 2 || got.Failed != 1 || got.Processed != 3 || len(got.IgnoredValues) != 1 {
		t.Errorf("results of the import queued as protobuf: %v", got)
	}
	if !proto.Equal(got, want) {
		t.Errorf("results of the import queued as protobuf:\n%v\nof the same jobs queued now:\n%v", got, want)
	}
	jobsA, err := f.svcs.Jobs.ListJobs(f.ctxA, &restv2.ListJobsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	jobsB, err := f.svcs.Jobs.ListJobs(f.ctxB, &restv2.ListJobsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobsA.Jobs) != 2 || jobsA.Jobs[0].GetCity() != "Dallas" || !jobsA.Jobs[0].GetTwicOnly() {
		t.Fatalf("jobs of the import queued as protobuf: %v", jobsA.Jobs)
	}
	for i := range jobsA.Jobs {
		a, b := proto.Clone(jobsA.Jobs[i]).(*restv2.Job), proto.Clone(jobsB.Jobs[i]).(*restv2.Job)
		a.Id, b.Id = 0, 0
		if !proto.Equal(a, b) {
			t.Errorf("job %d: %v, queued now %v", i, a, b)
		}
	}
}

// TestImportResultsInProtoJSONRead: results written through protojson
// before the store owned their form read as they were written.
func TestImportResultsInProtoJSONRead(t *testing.T) {
	f := newIdleImportFixture(t, nil)
	created, err := f.svcs.Imports.CreateJobImport(f.ctxA, &restv2.CreateJobImportRequest{Jobs: []*restv2.JobInput{input("X")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.DB().Exec(`UPDATE job_imports SET status = 'complete', completed_at = now(),
		results = $2::json, payload = '' WHERE id = $1`, created.Data.Id, string(readTestdata(t, "import-results-protojson.json"))); err != nil {
		t.Fatal(err)
	}
	got, err := f.svcs.Imports.GetJobImport(f.ctxA, &restv2.GetJobImportRequest{Id: created.Data.Id})
	if err != nil {
		t.Fatal(err)
	}
	want := &restv2.JobImportResults{}
	if err := protojson.Unmarshal(readTestdata(t, "import-results-protojson.json"), want); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(got.Data.Results, want) {
		t.Errorf("results %v, want %v", got.Data.Results, want)
	}
}

// TestImportStoredByV20Delivered: an import stored by the code of before the
// gRPC API got its own messages (testdata/import-payload-json-v2.0.json, the
// payload column it wrote, lenient values and unknown fields included) runs
// and calls back with the body that code sent for it
// (testdata/import-callback-v2.0.json), but for the id and times.
func TestImportStoredByV20Delivered(t *testing.T) {
	f := newIdleImportFixture(t, nil)
	r := newReceiver(t, http.StatusNoContent)
	created, err := f.svcs.Imports.CreateJobImport(f.ctxA, &restv2.CreateJobImportRequest{Jobs: []*restv2.JobInput{input("X")}})
	if err != nil {
		t.Fatal(err)
	}
	id := created.Data.Id
	if _, err := f.st.DB().Exec(`UPDATE job_imports SET payload = $2, payload_form = 'json',
		callback_url = $3, delete_jobs = true WHERE id = $1`, id, readTestdata(t, "import-payload-json-v2.0.json"), r.srv.URL+"/hook"); err != nil {
		t.Fatal(err)
	}
	f.start(t)
	f.waitComplete(t, f.ctxA, id)
	f.attempts(t, id, 1)
	got := normalisedCallback(t, r.bodies[0])
	want := normalisedCallback(t, readTestdata(t, "import-callback-v2.0.json"))
	if got != want {
		t.Errorf("callback body\n%s\nwant, as v2.0 sent it,\n%s", got, want)
	}
	// Over gRPC the same import reads in the natural form.
	imp, err := grpcapi.JobImportService(f.svcs.Imports).GetJobImport(f.ctxA, &jobboardv2.GetJobImportRequest{Id: id})
	if err != nil || imp.Data.Status != jobboardv2.JobImportStatus_JOB_IMPORT_STATUS_COMPLETE ||
		imp.Data.Results.Added != 2 || imp.Data.Results.Failed != 1 || len(imp.Data.Results.IgnoredValues) != 2 {
		t.Errorf("GetJobImport over gRPC: %v %v", imp, err)
	}
	jobs, err := f.svcs.Jobs.ListJobs(f.ctxA, &restv2.ListJobsRequest{})
	if err != nil || len(jobs.Jobs) != 2 || jobs.Jobs[0].GetPostalCode() != "75201-1234" || !jobs.Jobs[0].TwicOnly ||
		jobs.Jobs[0].GetPayAmountMin() != "18.50" || jobs.Jobs[0].DriverType != "Company Driver" {
		t.Errorf("the jobs of the stored import: %v %v", jobs.GetJobs(), err)
	}
}

// normalisedCallback is a callback body without what differs between runs.
func normalisedCallback(t *testing.T, body []byte) string {
	t.Helper()
	var v struct {
		Data  map[string]any `json:"data"`
		Links map[string]any `json:"links"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	id, _ := v.Data["id"].(string)
	v.Links["self"] = strings.TrimSuffix(fmt.Sprint(v.Links["self"]), id)
	for _, k := range []string{"id", "requestedAt", "completedAt"} {
		if _, ok := v.Data[k]; !ok {
			t.Fatalf("no %s in %s", k, body)
		}
		v.Data[k] = "*"
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestImportQueuesAcrossAnUpgrade: an import is queued where servers of
// earlier versions, which work only River's default queue and cannot read
// a compressed payload, never take it; an import they queued there, with
// its payload as they wrote it (plain JSON), still runs.
func TestImportQueuesAcrossAnUpgrade(t *testing.T) {
	f := newIdleImportFixture(t, nil)
	created, err := f.svcs.Imports.CreateJobImport(f.ctxA, &restv2.CreateJobImportRequest{Jobs: []*restv2.JobInput{input("X")}})
	if err != nil {
		t.Fatal(err)
	}
	id := created.Data.Id
	db := f.st.DB()
	var queue string
	if err := db.Get(&queue, `SELECT queue FROM river_job WHERE kind = 'job_import' AND args->>'import_id' = $1`, id); err != nil {
		t.Fatal(err)
	}
	if queue == "default" {
		t.Fatalf("import queued in River's default queue, which earlier versions work")
	}
	if _, err := db.Exec(`UPDATE river_job SET queue = 'default' WHERE kind = 'job_import' AND args->>'import_id' = $1`, id); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE job_imports SET payload = $2, payload_form = 'json' WHERE id = $1`,
		id, readTestdata(t, "import-payload-json-v2.0.json")); err != nil {
		t.Fatal(err)
	}
	f.start(t)
	if r := f.waitComplete(t, f.ctxA, id).Results; r.Added != 2 || r.Failed != 1 {
		t.Errorf("import queued by an earlier version: %v", r)
	}
}
