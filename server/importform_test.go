package server

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/server/store"
)

// The testdata files import-payload-proto.bin and import-results-protojson.json
// are an import's payload and results as the service wrote them before the
// store owned their form: the jobs request in protobuf binary, and the
// results message through protojson.

// legacyResults is the message import-results-protojson.json was written from.
func legacyResults() *restv2.JobImportResults {
	zero := int32(0)
	return &restv2.JobImportResults{Added: 2, Updated: 1, Deleted: 3, Failed: 1, Processed: 4,
		Errors: []*restv2.JobImportError{{Index: 3, ReferenceNumber: ptr("R4"), Messages: []string{"state: missing", "title: missing"}}},
		IgnoredValues: []*restv2.BatchEntry{{Index: &zero, ReferenceNumber: ptr("R1"), Field: ptr("benefits"),
			Value: ptr("Dental"), Message: "not a field of a job; ignored"}}}
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
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
	if _, err := f.svcs.Imports.store.DB().Exec(`UPDATE job_imports SET payload = $2, payload_form = DEFAULT WHERE id = $1`,
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
	if _, err := f.svcs.Imports.store.DB().Exec(`UPDATE job_imports SET status = 'complete', completed_at = now(),
		results = $2::json, payload = '' WHERE id = $1`, created.Data.Id, string(readTestdata(t, "import-results-protojson.json"))); err != nil {
		t.Fatal(err)
	}
	got, err := f.svcs.Imports.GetJobImport(f.ctxA, &restv2.GetJobImportRequest{Id: created.Data.Id})
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(got.Data.Results, legacyResults()) {
		t.Errorf("results %v, want %v", got.Data.Results, legacyResults())
	}
}

// TestStoredImportResultsOutliveARename renames a field of the results
// message, as a later version of the API may: protojson, the way results
// used to be read, then refuses what was stored, while the store's form,
// named by the store, reads it still.
func TestStoredImportResultsOutliveARename(t *testing.T) {
	stored := readTestdata(t, "import-results-protojson.json")
	fd := protodesc.ToFileDescriptorProto(restv2.File_jobboard_rest_v2_imports_proto)
	renamed := false
	for _, m := range fd.MessageType {
		for _, field := range m.Field {
			if m.GetName() == "JobImportResults" && field.GetName() == "ignored_values" {
				field.Name, field.JsonName, renamed = proto.String("ignored"), proto.String("ignored"), true
			}
		}
	}
	if !renamed {
		t.Fatal("no field ignored_values in JobImportResults")
	}
	file, err := protodesc.NewFile(fd, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	msg := dynamicpb.NewMessage(file.Messages().ByName("JobImportResults"))
	if err := protojson.Unmarshal(stored, msg); err == nil {
		t.Fatal("protojson read results after the rename; the test renames nothing that matters")
	}

	var r store.ImportResults
	if err := r.Scan(stored); err != nil {
		t.Fatal(err)
	}
	if got := resultsMessage(&r); !proto.Equal(got, legacyResults()) {
		t.Errorf("results %v, want %v", got, legacyResults())
	}
	// What is stored now is named by the store: the same names, whatever the message calls them.
	again, err := storedResults(legacyResults()).Value()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := jsonKeys(t, again.([]byte)), jsonKeys(t, stored); !slices.Equal(got, want) {
		t.Errorf("stored names %v, were %v", got, want)
	}
}

// jsonKeys lists the names of a JSON object and of the objects in it.
func jsonKeys(t *testing.T, data []byte) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	var keys []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				keys = append(keys, k)
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	slices.Sort(keys)
	return slices.Compact(keys)
}

// TestImportRequestHashUnchanged: the hash an Idempotency-Key is checked
// against is the one servers stored before the import's stored form became
// the store's own (the value below was computed by that code), so a retry
// across an upgrade is still recognised as the same request.
func TestImportRequestHashUnchanged(t *testing.T) {
	s := func(v string) *string { return &v }
	req := &restv2.CreateJobImportRequest{
		Jobs: []*restv2.JobInput{{ReferenceNumber: s("F100"), Title: s("Dedicated Dry Van"), State: s("OH"),
			EmploymentType: []string{"Full-Time", "Permanent"}}},
		CallbackUrl: s("https://example.com/hooks"), DeleteJobs: true,
	}
	got, err := importRequestHash(req)
	if err != nil {
		t.Fatal(err)
	}
	if want := "20857f81e9dbbe4c9cd5660e76f2a5ae9067fc0d9c34f020b51386edd244ed2e"; got != want {
		t.Errorf("request hash %s, want %s as stored by earlier servers", got, want)
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
	if _, err := f.svcs.Imports.store.DB().Exec(`UPDATE job_imports SET payload = $2, payload_form = 'json',
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
	imp, err := (&grpcImports{core: f.svcs.Imports}).GetJobImport(f.ctxA, &jobboardv2.GetJobImportRequest{Id: id})
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

// TestImportRequestHashWrittenJobByJob: the hash, which encodes one job at
// a time, is that of the whole PostJobsRequest encoded at once.
func TestImportRequestHashWrittenJobByJob(t *testing.T) {
	many := make([]*restv2.JobInput, 300)
	for i := range many {
		many[i] = &restv2.JobInput{ReferenceNumber: ptr(fmt.Sprintf("R%d", i)), Description: ptr(strings.Repeat("<p>x</p>", i)),
			EmploymentType: []string{"Full-Time"}, ExtraFields: []*restv2.ExtraField{{Name: "benefits", Value: ptr("Dental")}, {Name: "shift"}}}
	}
	for _, req := range []*restv2.CreateJobImportRequest{
		{},
		{Jobs: []*restv2.JobInput{{}}, DeleteJobs: true},
		{Jobs: many, CallbackUrl: ptr("https://example.com/hooks")},
	} {
		whole, err := proto.MarshalOptions{Deterministic: true}.Marshal(&restv2.PostJobsRequest{Jobs: req.GetJobs()})
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.New()
		sum.Write(whole)
		fmt.Fprintf(sum, "|%s|%t", req.GetCallbackUrl(), req.GetDeleteJobs())
		got, err := importRequestHash(req)
		if err != nil {
			t.Fatal(err)
		}
		if want := hex.EncodeToString(sum.Sum(nil)); got != want {
			t.Errorf("%d jobs: hash %s, want %s", len(req.GetJobs()), got, want)
		}
	}
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
	db := f.svcs.Imports.store.DB()
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
