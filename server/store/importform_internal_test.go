package store

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestImportPayloadStaysNearItsSize: HTML in descriptions is stored as
// written, not as \u003c escapes, so a payload stays near the size of the
// jobs it holds (with escapes, this one was 4.1 times as large).
func TestImportPayloadStaysNearItsSize(t *testing.T) {
	description := strings.Repeat("<p>&</p>", 1000)
	jobs := make([]ImportJob, 10)
	for i := range jobs {
		jobs[i] = NewImportJob()
		jobs[i].Field("description").Text = &description
	}
	p, err := NewImportPayload(jobs)
	if err != nil {
		t.Fatal(err)
	}
	text := len(jobs) * len(description)
	// The stored bytes are compressed; the JSON in them is what must not grow.
	zr, err := gzip.NewReader(bytes.NewReader(p.data))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if ratio := float64(len(plain)) / float64(text); ratio > 1.05 {
		t.Errorf("payload JSON %d bytes for %d bytes of descriptions: %.2fx", len(plain), text, ratio)
	}
	if len(p.data) >= text/10 {
		t.Errorf("payload %d bytes stored for %d bytes of repeated markup: not compressed", len(p.data), text)
	}
	back, err := p.Jobs()
	if err != nil || len(back) != len(jobs) || *back[0].Field("description").Text != description {
		t.Fatalf("read back: %v, %d jobs", err, len(back))
	}
}

// TestPayloadWrittenInParts: a payload large enough to be written in parts,
// each its own gzip member, reads back as one JSON text holding every job
// in order, at every count around the parts' edges.
func TestPayloadWrittenInParts(t *testing.T) {
	for _, n := range []int{0, 1, minJobsPerPart - 1, 2 * minJobsPerPart, 2*minJobsPerPart + 1, 5*minJobsPerPart + 3} {
		refs := make([]string, n)
		for i := range refs {
			refs[i] = fmt.Sprintf("R%d", i)
		}
		p, err := EncodePayload(n, func(i int, scratch *ImportJob) *ImportJob {
			scratch.Field("referenceNumber").Text = &refs[i]
			return scratch
		})
		if err != nil {
			t.Fatal(err)
		}
		// Count the members: a reader told to stop at each one's end is
		// reset to the next until none is left.
		data := bytes.NewReader(p.data)
		zr, err := gzip.NewReader(data)
		if err != nil {
			t.Fatal(err)
		}
		members := 0
		for ; err == nil; err = zr.Reset(data) {
			zr.Multistream(false)
			if _, err := io.Copy(io.Discard, zr); err != nil {
				t.Fatal(err)
			}
			members++
		}
		if want := max(1, min(runtime.GOMAXPROCS(0), n/minJobsPerPart)); err != io.EOF || members != want {
			t.Errorf("%d jobs: %d gzip members (%v), want %d", n, members, err, want)
		}
		back, err := p.Jobs()
		if err != nil || len(back) != n {
			t.Fatalf("%d jobs: read back %d, %v", n, len(back), err)
		}
		for i, j := range back {
			if ref := j.Field("referenceNumber").Text; *ref != refs[i] {
				t.Fatalf("%d jobs: job %d is %s", n, i, *ref)
			}
		}
		if c := p.JobCount(); c != n {
			t.Errorf("%d jobs: counted %d", n, c)
		}
	}
}

// TestEmptiedPayloadHasNoJobs: a completed import's payload is emptied; a
// worker that runs it again reads no jobs, not an unreadable payload.
func TestEmptiedPayloadHasNoJobs(t *testing.T) {
	jobs, err := ImportPayload{form: payloadFormJSON}.Jobs()
	if err != nil || len(jobs) != 0 {
		t.Errorf("emptied payload: %d jobs, %v", len(jobs), err)
	}
}

// TestPayloadReadInEitherForm: a payload stored as plain JSON, as servers
// wrote it before payloads were compressed, reads as the compressed form
// of the same jobs does, and a payload that does not read is an error.
func TestPayloadReadInEitherForm(t *testing.T) {
	ref, title := "R1", "Driver <b>OTR</b>"
	jobs := []ImportJob{NewImportJob(), NewImportJob()}
	jobs[0].Field("referenceNumber").Text, jobs[0].Field("title").Text = &ref, &title
	jobs[0].Field("employmentType").List = []string{"Full-Time"}
	jobs[0].ExtraFields = []ImportExtraField{{Name: "benefits"}}
	compressed, err := NewImportPayload(jobs)
	if err != nil {
		t.Fatal(err)
	}
	plain := ImportPayload{form: payloadFormJSON,
		data: []byte(`{"other": {"x": [1]}, "jobs": [{"referenceNumber":"R1","title":"Driver <b>OTR</b>","employmentType":["Full-Time"],"extraFields":[{"name":"benefits"}]}, {}]}` + "\n")}
	for name, p := range map[string]ImportPayload{"compressed": compressed, "plain": plain} {
		got, err := p.Jobs()
		if err != nil || len(got) != 2 || *got[0].Field("title").Text != title || *got[0].Field("referenceNumber").Text != ref ||
			got[0].Field("employmentType").List[0] != "Full-Time" || got[0].ExtraFields[0].Name != "benefits" || got[1].Field("title").Text != nil {
			t.Errorf("%s: %+v, %v", name, got, err)
		}
		if n := p.JobCount(); n != 2 {
			t.Errorf("%s: counted %d jobs, want 2", name, n)
		}
	}
	// As encoding/json read its struct: a name in any case, the last of a
	// repeated name, null as not sent, unknown members skipped; a null in a
	// list is dropped (it read as a blank value, which the job's reader
	// skips).
	p := ImportPayload{form: payloadFormJSON, data: []byte(`{"jobs": [{"TITLE": "a", "title": "b", "city": null, "x": {"y": [1]}, "RouteType": ["OTR", null, "LTL"]}]}`)}
	if got, err := p.Jobs(); err != nil || len(got) != 1 || *got[0].Field("title").Text != "b" || got[0].Field("city").Text != nil ||
		!slices.Equal(got[0].Field("routeType").List, []string{"OTR", "LTL"}) {
		t.Errorf("names in any case: %+v, %v", got, err)
	}
	for _, bad := range []string{`{"jobs": [{"title": 3}]}`, `{"jobs": [{"routeType": "OTR"}]}`, `{"jobs": [{"routeType": [1]}]}`,
		`{"jobs": {}}`, `{"jobs": [] } x`, `[`} {
		p := ImportPayload{form: payloadFormJSON, data: []byte(bad)}
		if _, err := p.Jobs(); err == nil {
			t.Errorf("%s read without error", bad)
		}
	}
	if n := (ImportPayload{form: payloadFormJSON, data: []byte(`{"jobs": [1, {}]`)}).JobCount(); n != 0 {
		t.Errorf("a cut payload counted %d jobs, want 0", n)
	}
}

// TestImportResultsWrittenAsTheirTagsSay: the results column, written
// field by field, says what encoding/json makes of the same results from
// their tags (which Scan reads with): the same members, empty ones left
// out, the ignored value's id as a string, invalid UTF-8 as U+FFFD.
func TestImportResultsWrittenAsTheirTagsSay(t *testing.T) {
	text := func(s string) *string { return &s }
	index, id := int32(0), int64(9_007_199_254_740_993)
	tests := []struct {
		name    string
		results ImportResults
	}{
		{"empty", ImportResults{}},
		{"counts", ImportResults{Added: 3, Updated: 2, Unchanged: 1, Deleted: 4, Failed: 5, Processed: 6}},
		{"errors", ImportResults{Failed: 2, Errors: []ImportError{
			{Index: 0, Messages: []string{"why none: <b>&</b>"}},
			{Index: 7, ReferenceNumber: text("R\"7\"\n"), Messages: []string{"one", "two \x7f \u2028"}},
			{Index: 8, ReferenceNumber: text("bad \xff utf-8")},
		}}},
		{"ignored values", ImportResults{IgnoredValues: []ImportIgnoredValue{
			{Index: &index, ReferenceNumber: text("A1"), Field: text("salary"), Value: text(`{"a":1}`), Message: "not a field"},
			{ID: &id, Field: text("x")},
			{},
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			written, err := tt.results.Value()
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(&tt.results)
			if err != nil {
				t.Fatal(err)
			}
			var got, wantMembers any
			if err := json.Unmarshal(written.([]byte), &got); err != nil {
				t.Fatalf("written %s: %v", written, err)
			}
			if err := json.Unmarshal(want, &wantMembers); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantMembers, got); diff != "" {
				t.Errorf("written %s\n(-encoding/json +written):\n%s", written, diff)
			}
			var back ImportResults
			if err := back.Scan(written); err != nil {
				t.Fatal(err)
			}
			var wantBack ImportResults
			if err := wantBack.Scan(want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantBack, back); diff != "" {
				t.Errorf("read back (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecodeResultsWindow: a window of the stored results holds the same
// entries as the whole results read by Scan, sliced, and the lists' full
// lengths, whatever the names' case, a list given twice (the last kept)
// or null.
func TestDecodeResultsWindow(t *testing.T) {
	whole := &ImportResults{Added: 2, Failed: 5, Processed: 7}
	for i := range 5 {
		ref := fmt.Sprintf("R%d", i)
		whole.Errors = append(whole.Errors, ImportError{Index: int32(i), ReferenceNumber: &ref, Messages: []string{"m " + ref}})
	}
	for i := range 3 {
		index, field := int32(i), fmt.Sprintf("f%d", i)
		whole.IgnoredValues = append(whole.IgnoredValues, ImportIgnoredValue{Index: &index, Field: &field, Message: "ignored"})
	}
	written, err := whole.Value()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		data        string
		window      ResultsWindow
		wantErrors  [2]int // the slice of whole.Errors
		wantIgnored [2]int
		wantLengths ResultsLengths
	}{
		{"the first page", string(written.([]byte)), ResultsWindow{Limit: 2}, [2]int{0, 2}, [2]int{0, 2}, ResultsLengths{5, 3}},
		{"a middle page", string(written.([]byte)), ResultsWindow{ErrorsFrom: 2, IgnoredFrom: 2, Limit: 2}, [2]int{2, 4}, [2]int{2, 3}, ResultsLengths{5, 3}},
		{"ignored values exhausted", string(written.([]byte)), ResultsWindow{ErrorsFrom: 4, IgnoredFrom: 3, Limit: 2}, [2]int{4, 5}, [2]int{3, 3}, ResultsLengths{5, 3}},
		{"past both ends", string(written.([]byte)), ResultsWindow{ErrorsFrom: 9, IgnoredFrom: 9, Limit: 2}, [2]int{5, 5}, [2]int{3, 3}, ResultsLengths{5, 3}},
		{"every entry", string(written.([]byte)), ResultsWindow{Limit: 1000}, [2]int{0, 5}, [2]int{0, 3}, ResultsLengths{5, 3}},
		{"names in another case, a list twice", `{"ERRORS":[{"index":9}],"added":2,"failed":5,"processed":7,"Errors":` +
			string(mustJSON(t, whole.Errors)) + `,"ignoredvalues":` + string(mustJSON(t, whole.IgnoredValues)) + `}`,
			ResultsWindow{ErrorsFrom: 1, Limit: 3}, [2]int{1, 4}, [2]int{0, 3}, ResultsLengths{5, 3}},
		{"null lists", `{"added":2,"failed":5,"processed":7,"errors":null,"ignoredValues":null}`, ResultsWindow{Limit: 3},
			[2]int{0, 0}, [2]int{0, 0}, ResultsLengths{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, lengths, err := decodeResultsWindow([]byte(tt.data), tt.window)
			if err != nil {
				t.Fatal(err)
			}
			want := ImportResults{Added: 2, Failed: 5, Processed: 7,
				Errors:        whole.Errors[tt.wantErrors[0]:tt.wantErrors[1]],
				IgnoredValues: whole.IgnoredValues[tt.wantIgnored[0]:tt.wantIgnored[1]]}
			if diff := cmp.Diff(want, *got, cmpopts.EquateEmpty()); diff != "" || lengths != tt.wantLengths {
				t.Errorf("lengths %+v, want %+v; (-want +got):\n%s", lengths, tt.wantLengths, diff)
			}
		})
	}
	if _, _, err := decodeResultsWindow([]byte(`{"errors":{}}`), ResultsWindow{Limit: 1}); err == nil {
		t.Error("errors as an object read without an error")
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
