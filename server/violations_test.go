package server

import (
	"testing"
	"time"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
)

// TestApplicationViolations: each way applications come in names a
// problem's field its own way, from the same (field, value, rule).
func TestApplicationViolations(t *testing.T) {
	bad := applicant("Ida", "Ray", "TX", "75201", "Student", "1", "2026-01-01")
	bad.Email = "ida@"
	bad.LastLicenseSuspension = new(int32(1800))
	apps := []*jobboardv2.DriverApplication{nil, bad}
	tests := []struct {
		name string
		path entryPath
		want []string
	}{
		{"a file", fileEntryPath, []string{`[0]: is required`, `[1] email: "ida@" is not an e-mail address`,
			`[1] last_license_suspension: "1800" is not a year (1900 to 2100)`}},
		{"a batch", batchEntryPath, []string{`applications[0]: is required`, `applications[1].email: "ida@" is not an e-mail address`,
			`applications[1].last_license_suspension: "1800" is not a year (1900 to 2100)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, problems := checkApplications(1, apps, time.Now(), tt.path)
			var got []string
			for _, p := range problems {
				got = append(got, p.String())
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("problem %d: %q, want %q", i, got[i], tt.want[i])
				}
			}
			if v := problems[1]; v.Value != "ida@" || v.Rule != "is not an e-mail address" {
				t.Errorf("the e-mail's violation: %+v", v)
			}
		})
	}
}
