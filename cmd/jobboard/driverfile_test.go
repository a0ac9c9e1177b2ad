package main

import (
	"fmt"
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
		{"endorsement replaces endorsements", `[{"endorsement": "T", "endorsements": ["H"]}, {"endorsements": ["H"], "endorsement": "T"}]`,
			[]*intake.Application{{Endorsements: []string{"T"}}, {Endorsements: []string{"T"}}}, ""},
		{"names in another case", `[{"First_Name": "Al", "EMAIL": "al@example.com"}]`,
			[]*intake.Application{{FirstName: "Al", Email: "al@example.com"}}, ""},
		{"an empty file's array", `[]`, []*intake.Application{}, ""},
		{"not an array", `{"first_name": "Al"}`, nil, "not a JSON array of drivers"},
		{"an entry that is not an object", `[{}, 7]`, nil, "[1]: "},
		{"a bad endorsement", `[{"endorsement": 7}]`, nil, "[0] endorsement: "},
		{"the array cut short", `[{"first_name": "Al"}`, nil, "the file ends before the array does"},
		{"an entry cut short", `[{"first_name": "Al"`, nil, "[0]: "},
		{"more after the array", `[{}] [{}]`, nil, "more follows the array"},
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

// BenchmarkParseDriverFile reads a file of 10,000 drivers as drivers
// import's bench writes them: a past employer each, a job application for
// some.
func BenchmarkParseDriverFile(b *testing.B) {
	var file strings.Builder
	file.WriteString("[")
	for i := range 10_000 {
		if i > 0 {
			file.WriteString(",")
		}
		fmt.Fprintf(&file, `{"first_name":"Robert","last_name":"Miller","address":"%d Elm St","city":"Dallas","state":"TX",`+
			`"zip":"75201","email":"driver%d@example.com","phone":"2145550100","driver_type":"Company Driver",`+
			`"experience":"5 years","sent":"2026-11-02T10:00:00Z","endorsement":"HAZMAT (H), Tank Vehicles (N)",`+
			`"license_state":"TX","license_class":"A","date_of_birth":"1980-04-01",`+
			`"employment_history":[{"company":"Hillside Freight","state":"TX","phone":"2145550100","start_date":"2019-04-01","end_date":"2024-10-31"}],`+
			`"job_applications":[{"reference":"IN%06d","is_direct_app":true,"created_at":"2026-11-02T10:00:00Z"}]}`, i, i, i%100)
	}
	file.WriteString("]")
	data := []byte(file.String())
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := parseDriverFile(data); err != nil {
			b.Fatal(err)
		}
	}
}
