package jobs

import (
	"fmt"
	"testing"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
)

// BenchmarkReadAndCheckPost reads and checks the 1,000 jobs of a post of
// the shape bench scenario 1 sends, on one core: the work a post adds to
// the store's, which runs while the store reads the account's jobs.
func BenchmarkReadAndCheckPost(b *testing.B) {
	sent := make([]*restv2.JobInput, 1000)
	for i := range sent {
		sent[i] = &restv2.JobInput{ReferenceNumber: new(fmt.Sprintf("S%06d", i)), Title: new("Dry Van Driver"),
			City: new("Springfield"), State: new("TX"), PostalCode: new(fmt.Sprintf("%05d", 10000+i)),
			DriverType: new("Company Driver"), FreightType: new("Dry Van"), PayAmountMin: new("0.55"), PayAmountMax: new("0.68"),
			PayFrequency: new("Per Mile"), EmploymentType: []string{"Full-Time"}, RouteType: []string{"Regional"},
			Description: new(fmt.Sprintf("<p>Route S%06d: home <b>every weekend</b>. Late-model trucks with APUs, paid orientation, "+
				"weekly direct deposit, health, dental and vision from day one.</p><ul><li>No touch freight</li><li>Pet policy</li></ul>", i)),
			Requirements: new("<ul><li>Class A CDL</li><li>1 year of experience</li></ul>"), TwicOnly: new("false"), LicenseClass: new("A")}
	}
	s := &Service{validator: newJobValidator()}
	b.ReportAllocs()
	for b.Loop() {
		inputs := make([]Input, len(sent))
		for i, in := range sent {
			inputs[i] = ReadText(in)
		}
		batch := s.checkChunk(inputs, RESTNames, 0, 0, map[string]int{}, nil)
		if len(batch.valid) != len(sent) {
			b.Fatalf("%d of %d jobs valid: %v", len(batch.valid), len(sent), batch.problems)
		}
	}
}
