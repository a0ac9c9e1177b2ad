package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/truckjobs/jobboard/server/intake"
)

// TestParseDriverFile: an import file's entries in the detail
// representation become applications in the lenient form, as given.
func TestParseDriverFile(t *testing.T) {
	tests := []struct {
		name string
		file string
		want []*intake.Application
		err  string
	}{
		{"detail fields, derived ones ignored",
			`[{"id": 7, "has_job_apps": true, "first_name": "Al", "driver_type": "owner operator", "sent": "2026-11-02",
			  "address2": null, "last_dui": 2010, "endorsement": "HAZMAT (H), Tank Vehicles (N)", "is_premium": true,
			  "employment_history": [{"company": "C", "start_date": "2020-01-01", "end_date": null}],
			  "job_applications": [{"job_id": 3, "title": "T", "reference": "R1", "is_direct_app": true, "created_at": "2026-11-02T10:00:00"}]}]`,
			[]*intake.Application{{FirstName: "Al", DriverType: "owner operator", Sent: "2026-11-02", LastDUI: new(int32(2010)),
				Endorsements: []string{"HAZMAT (H)", "Tank Vehicles (N)"}, IsPremium: true,
				EmploymentHistory: []intake.Employment{{Company: "C", StartDate: "2020-01-01"}},
				JobApplications:   []intake.JobApplication{{Reference: "R1", IsDirectApp: true, CreatedAt: "2026-11-02T10:00:00"}}}},
			""},
		{"endorsement as codes", `[{"endorsement": ["T", "x"]}]`, []*intake.Application{{Endorsements: []string{"T", "x"}}}, ""},
		{"no endorsement", `[{"endorsement": null}]`, []*intake.Application{{}}, ""},
		{"a value of the wrong type", `[{}, {"last_dui": "soon"}]`, nil, "[1]: "},
		{"not an array", `{"first_name": "Al"}`, nil, "not a JSON array of drivers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseDriverFile([]byte(tt.file))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v, want an error with %q", err, tt.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v %v, want %+v", got, err, tt.want)
			}
		})
	}
}
