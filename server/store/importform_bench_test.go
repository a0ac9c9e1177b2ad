package store

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkImportPayload writes and reads back a payload of 1,000 jobs of
// the size the bench's imports send (about 760 bytes of JSON each), the
// work an import adds to a post of the same jobs.
func BenchmarkImportPayload(b *testing.B) {
	str := func(s string) *string { return &s }
	description := str(strings.Repeat("<p>Home weekly, late-model equipment & full benefits.</p>", 10))
	jobs := make([]ImportJob, 1000)
	for i := range jobs {
		jobs[i] = NewImportJob()
		for name, v := range map[string]string{"referenceNumber": fmt.Sprintf("REF-%06d", i), "title": "Regional CDL-A Driver",
			"city": "Dallas", "state": "TX", "postalCode": "75201", "driverType": "Company Driver", "freightType": "Dry Van",
			"payAmountMin": "0.55", "payAmountMax": "0.65", "payFrequency": "Per Mile"} {
			jobs[i].Field(name).Text = str(v)
		}
		jobs[i].Field("employmentType").List = []string{"Full Time"}
		jobs[i].Field("routeType").List = []string{"Regional"}
		jobs[i].Field("description").Text = description
		jobs[i].ExtraFields = []ImportExtraField{{Name: "bonus", Value: str("sign-on")}}
	}
	p, err := NewImportPayload(jobs)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("write", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := NewImportPayload(jobs); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			if err := p.EachJob(func(*ImportJob) error { n++; return nil }); err != nil || n != len(jobs) {
				b.Fatal(n, err)
			}
		}
	})
}

// BenchmarkImportResults writes and reads back the results of an import
// of 50,000 jobs of which 40,000 failed (about 6 MB of JSON), as the
// import's completion and each GET of it do.
func BenchmarkImportResults(b *testing.B) {
	r := &ImportResults{Added: 10_000, Failed: 40_000, Processed: 50_000}
	for i := range 40_000 {
		ref := fmt.Sprintf("I0R%06d", 10_000+i)
		r.Errors = append(r.Errors, ImportError{Index: int32(10_000 + i), ReferenceNumber: &ref,
			Messages: []string{"the account has reached its maximum of 10000 active jobs; job " + ref + " was not added"}})
	}
	v, err := r.Value()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("write", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := r.Value(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var got ImportResults
			if err := got.Scan(v); err != nil || len(got.Errors) != len(r.Errors) {
				b.Fatal(err, len(got.Errors))
			}
		}
	})
	// A gRPC page of GetJobImport: the last 1,000 errors.
	b.Run("read a page", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			got, n, err := decodeResultsWindow(v.([]byte), ResultsWindow{ErrorsFrom: 39_000, Limit: 1000})
			if err != nil || len(got.Errors) != 1000 || n.Errors != len(r.Errors) {
				b.Fatal(err, len(got.Errors), n)
			}
		}
	})
}
