package imports

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
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
	"github.com/truckjobs/jobboard/server/store"
)

// TestStoredImportResultsOutliveARename renames a field of the results
// message, as a later version of the API may: protojson, the way results
// used to be read, then refuses what was stored, while the store's form,
// named by the store, reads it still.
func TestStoredImportResultsOutliveARename(t *testing.T) {
	stored, err := os.ReadFile("testdata/import-results-protojson.json")
	if err != nil {
		t.Fatal(err)
	}
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

// TestImportRequestHashWrittenJobByJob: the hash, which encodes one job at
// a time, is that of the whole PostJobsRequest encoded at once.
func TestImportRequestHashWrittenJobByJob(t *testing.T) {
	many := make([]*restv2.JobInput, 300)
	for i := range many {
		many[i] = &restv2.JobInput{ReferenceNumber: new(fmt.Sprintf("R%d", i)), Description: new(strings.Repeat("<p>x</p>", i)),
			EmploymentType: []string{"Full-Time"}, ExtraFields: []*restv2.ExtraField{{Name: "benefits", Value: new("Dental")}, {Name: "shift"}}}
	}
	for _, req := range []*restv2.CreateJobImportRequest{
		{},
		{Jobs: []*restv2.JobInput{{}}, DeleteJobs: true},
		{Jobs: many, CallbackUrl: new("https://example.com/hooks")},
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

// legacyResults is the message import-results-protojson.json was written from.
func legacyResults() *restv2.JobImportResults {
	zero := int32(0)
	return &restv2.JobImportResults{Added: 2, Updated: 1, Deleted: 3, Failed: 1, Processed: 4,
		Errors: []*restv2.JobImportError{{Index: 3, ReferenceNumber: new("R4"), Messages: []string{"state: missing", "title: missing"}}},
		IgnoredValues: []*restv2.BatchEntry{{Index: &zero, ReferenceNumber: new("R1"), Field: new("benefits"),
			Value: new("Dental"), Message: "not a field of a job; ignored"}}}
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

// storedResults is the stored form of results given as a message, the
// inverse of resultsMessage.
func storedResults(r *restv2.JobImportResults) *store.ImportResults {
	out := &store.ImportResults{
		Added: r.Added, Updated: r.Updated, Unchanged: r.Unchanged, Deleted: r.Deleted,
		Failed: r.Failed, Processed: r.Processed,
	}
	for _, e := range r.Errors {
		out.Errors = append(out.Errors, store.ImportError{Index: e.Index, Messages: e.Messages, ReferenceNumber: e.ReferenceNumber})
	}
	for _, v := range r.IgnoredValues {
		out.IgnoredValues = append(out.IgnoredValues, store.ImportIgnoredValue{Index: v.Index, ID: v.Id,
			ReferenceNumber: v.ReferenceNumber, Field: v.Field, Value: v.Value, Message: v.Message})
	}
	return out
}
