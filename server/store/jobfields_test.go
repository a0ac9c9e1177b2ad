package store

import (
	"reflect"
	"testing"

	"github.com/truckjobs/jobboard/domain"
)

// TestJobFieldTableCoversJobFields keeps the table and the struct in step:
// every JobFields field has its row (TestJobFieldsEqual then finds each
// row's change noticed), since a missing row would leave a field unwritten
// and unequal jobs "unchanged".
func TestJobFieldTableCoversJobFields(t *testing.T) {
	if n := reflect.TypeFor[JobFields]().NumField(); n != len(jobFieldTable) {
		t.Fatalf("JobFields has %d fields, jobFieldTable %d rows", n, len(jobFieldTable))
	}
}

// TestJobFieldsEqual changes one field at a time: each change makes the
// jobs unequal, and the batch arrays carry the changed value.
func TestJobFieldsEqual(t *testing.T) {
	base := JobFields{
		ReferenceNumber: "R1", Title: "Driver", City: new("Dallas"), State: "TX", PostalCode: new("75001"),
		DriverType: "Company Driver", Preference: new(domain.Preference("Team")), FreightType: "Dry Van",
		PayMin: new(domain.Cents(1850)), PayMax: new(domain.Cents(2000)), PayFrequency: new(domain.PayFrequency("Hourly")),
		EmploymentType: []domain.EmploymentType{"Full-Time"}, RouteType: []domain.RouteType{"OTR"}, Description: "d",
		Requirements: new("r"), LicenseClass: new(domain.LicenseClass("A")),
	}
	changes := map[string]func(j *JobFields){
		"reference_number": func(j *JobFields) { j.ReferenceNumber = "R2" },
		"title":            func(j *JobFields) { j.Title = "Other" },
		"city":             func(j *JobFields) { j.City = nil },
		"state":            func(j *JobFields) { j.State = "OK" },
		"postal_code":      func(j *JobFields) { j.PostalCode = new("75002") },
		"driver_type":      func(j *JobFields) { j.DriverType = "Owner Operator" },
		"preference":       func(j *JobFields) { j.Preference = new(domain.Preference("Team Solo")) },
		"freight_type":     func(j *JobFields) { j.FreightType = "Reefer" },
		"pay_amount_min":   func(j *JobFields) { j.PayMin = new(domain.Cents(1851)) },
		"pay_amount_max":   func(j *JobFields) { j.PayMax = nil },
		"pay_frequency":    func(j *JobFields) { j.PayFrequency = new(domain.PayFrequency("Weekly")) },
		"employment_type":  func(j *JobFields) { j.EmploymentType = []domain.EmploymentType{"Full-Time", "Permanent"} },
		"route_type":       func(j *JobFields) { j.RouteType = []domain.RouteType{} },
		"description":      func(j *JobFields) { j.Description = "e" },
		"requirements":     func(j *JobFields) { j.Requirements = new("") },
		"twic_only":        func(j *JobFields) { j.TwicOnly = true },
		"license_class":    func(j *JobFields) { j.LicenseClass = new(domain.LicenseClass("B")) },
	}
	if len(changes) != len(jobFieldTable) {
		t.Fatalf("%d changes for %d fields", len(changes), len(jobFieldTable))
	}
	if !SameJob(base, base) {
		t.Fatal("a job differs from itself")
	}
	for i, f := range jobFieldTable {
		t.Run(f.column, func(t *testing.T) {
			changed := base
			changes[f.column](&changed)
			if SameJob(base, changed) || SameJob(changed, base) {
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
