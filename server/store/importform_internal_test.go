package store

import (
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"testing"
)

// TestImportPayloadStaysNearItsSize: HTML in descriptions is stored as
// written, not as \u003c escapes, so a payload stays near the size of the
// jobs it holds (with escapes, this one was 4.1 times as large).
func TestImportPayloadStaysNearItsSize(t *testing.T) {
	description := strings.Repeat("<p>&</p>", 1000)
	jobs := make([]ImportJob, 10)
	for i := range jobs {
		jobs[i].Description = &description
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
	if err != nil || len(back) != len(jobs) || *back[0].Description != description {
		t.Fatalf("read back: %v, %d jobs", err, len(back))
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
	jobs := []ImportJob{{ReferenceNumber: &ref, Title: &title, EmploymentType: []string{"Full-Time"},
		ExtraFields: []ImportExtraField{{Name: "benefits"}}}, {}}
	compressed, err := NewImportPayload(jobs)
	if err != nil {
		t.Fatal(err)
	}
	plain := ImportPayload{form: payloadFormJSON,
		data: []byte(`{"other": {"x": [1]}, "jobs": [{"referenceNumber":"R1","title":"Driver <b>OTR</b>","employmentType":["Full-Time"],"extraFields":[{"name":"benefits"}]}, {}]}` + "\n")}
	for name, p := range map[string]ImportPayload{"compressed": compressed, "plain": plain} {
		got, err := p.Jobs()
		if err != nil || len(got) != 2 || *got[0].Title != title || got[0].ExtraFields[0].Name != "benefits" || got[1].Title != nil {
			t.Errorf("%s: %+v, %v", name, got, err)
		}
		if n := p.JobCount(); n != 2 {
			t.Errorf("%s: counted %d jobs, want 2", name, n)
		}
	}
	for _, bad := range []string{`{"jobs": [{"title": 3}]}`, `{"jobs": {}}`, `{"jobs": [] } x`, `[`} {
		p := ImportPayload{form: payloadFormJSON, data: []byte(bad)}
		if _, err := p.Jobs(); err == nil {
			t.Errorf("%s read without error", bad)
		}
	}
	if n := (ImportPayload{form: payloadFormJSON, data: []byte(`{"jobs": [1, {}]`)}).JobCount(); n != 0 {
		t.Errorf("a cut payload counted %d jobs, want 0", n)
	}
}
