package store

import (
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
	if ratio := float64(len(p.data)) / float64(text); ratio > 1.05 {
		t.Errorf("payload %d bytes for %d bytes of descriptions: %.2fx", len(p.data), text, ratio)
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
