package store

import (
	"reflect"
	"testing"

	"github.com/lib/pq"
)

// TestJobFieldTableCoversJobFields keeps the table and the struct in step:
// every JobFields column has its row, in struct order (the order selects
// scan in does not matter to sqlx, but a missing row would leave a field
// unwritten and unequal jobs "unchanged").
func TestJobFieldTableCoversJobFields(t *testing.T) {
	typ := reflect.TypeFor[JobFields]()
	if typ.NumField() != len(jobFieldTable) {
		t.Fatalf("JobFields has %d fields, jobFieldTable %d rows", typ.NumField(), len(jobFieldTable))
	}
	for i, f := range jobFieldTable {
		if tag := typ.Field(i).Tag.Get("db"); tag != f.column {
			t.Errorf("row %d is %q, JobFields field %d is %q", i, f.column, i, tag)
		}
	}
}

// TestJobFieldsEqual changes one field at a time: each change makes the
// jobs unequal, and the batch arrays carry the changed value.
func TestJobFieldsEqual(t *testing.T) {
	s := func(v string) *string { return &v }
	base := JobFields{
		ReferenceNumber: "R1", Title: "Driver", City: s("Dallas"), State: "TX", PostalCode: s("75001"),
		DriverType: "Company Driver", Preference: s("Solo"), FreightType: "Dry Van", PayAmountMin: s("18.50"),
		PayAmountMax: s("20.00"), PayFrequency: s("Hourly"), EmploymentType: pq.StringArray{"Full-Time"},
		RouteType: pq.StringArray{"OTR"}, Description: "d", Requirements: s("r"), LicenseClass: s("A"),
	}
	changes := map[string]func(j *JobFields){
		"reference_number": func(j *JobFields) { j.ReferenceNumber = "R2" },
		"title":            func(j *JobFields) { j.Title = "Other" },
		"city":             func(j *JobFields) { j.City = nil },
		"state":            func(j *JobFields) { j.State = "OK" },
		"postal_code":      func(j *JobFields) { j.PostalCode = s("75002") },
		"driver_type":      func(j *JobFields) { j.DriverType = "Owner Operator" },
		"preference":       func(j *JobFields) { j.Preference = s("Team") },
		"freight_type":     func(j *JobFields) { j.FreightType = "Reefer" },
		"pay_amount_min":   func(j *JobFields) { j.PayAmountMin = s("18.51") },
		"pay_amount_max":   func(j *JobFields) { j.PayAmountMax = nil },
		"pay_frequency":    func(j *JobFields) { j.PayFrequency = s("Weekly") },
		"employment_type":  func(j *JobFields) { j.EmploymentType = pq.StringArray{"Full-Time", "Permanent"} },
		"route_type":       func(j *JobFields) { j.RouteType = pq.StringArray{} },
		"description":      func(j *JobFields) { j.Description = "e" },
		"requirements":     func(j *JobFields) { j.Requirements = s("") },
		"twic_only":        func(j *JobFields) { j.TwicOnly = true },
		"license_class":    func(j *JobFields) { j.LicenseClass = s("B") },
	}
	if len(changes) != len(jobFieldTable) {
		t.Fatalf("%d changes for %d fields", len(changes), len(jobFieldTable))
	}
	if !base.Equal(base) {
		t.Fatal("a job differs from itself")
	}
	for i, f := range jobFieldTable {
		t.Run(f.column, func(t *testing.T) {
			changed := base
			changes[f.column](&changed)
			if base.Equal(changed) || changed.Equal(base) {
				t.Errorf("a change of %s leaves the jobs equal", f.column)
			}
			a, b := newJobArrays(1), newJobArrays(1)
			a.add(&base)
			b.add(&changed)
			if reflect.DeepEqual(a[i].param(), b[i].param()) {
				t.Errorf("the batch array of %s does not carry the change", f.column)
			}
		})
	}
}
