package jobs

import (
	"testing"

	"github.com/truckjobs/jobboard/domain"
)

// TestJobMessageAmounts: a job's message keeps a place for each amount
// field, and writes each amount as a decimal of its own.
func TestJobMessageAmounts(t *testing.T) {
	n := 0
	for _, f := range fields {
		if f.Kind == domain.AmountField {
			n++
		}
	}
	if n != amountFields {
		t.Fatalf("%d amount fields, madeJob holds %d", n, amountFields)
	}
	j := &domain.Job{ID: 7, JobFields: domain.JobFields{PayMin: new(domain.Cents(1850)), PayMax: new(domain.Cents(2205))}}
	m := jobMessage(j)
	if m.GetPayAmountMin() != "18.50" || m.GetPayAmountMax() != "22.05" {
		t.Errorf("amounts %q and %q, want 18.50 and 22.05", m.GetPayAmountMin(), m.GetPayAmountMax())
	}
	j.PayMin = nil
	if m := jobMessage(j); m.PayAmountMin != nil || m.GetPayAmountMax() != "22.05" {
		t.Errorf("without the least: %v and %q", m.PayAmountMin, m.GetPayAmountMax())
	}
}
