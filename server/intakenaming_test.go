package server

import (
	"testing"
	"time"

	"github.com/truckjobs/jobboard/server/intake"
	"github.com/truckjobs/jobboard/server/natural"
)

// TestApplicationViolations: each way applications come in names a
// problem's field its own way, from the same (field, value, rule).
func TestApplicationViolations(t *testing.T) {
	bad := applicant("Ida", "Ray", "TX", "75201", "Student", "1", "2026-01-01")
	bad.Email = "ida@"
	bad.LastLicenseSuspension = new(int32(1800))
	bad.Endorsements = []string{"CERTIFICATION_UNSPECIFIED"}
	apps := []*intake.Application{nil, bad}
	tests := []struct {
		name   string
		naming entries
		rename func(string) string
		want   []string
	}{
		{"a file", fileEntries, sameName, []string{`[0]: is required`, `[1] email: "ida@" is not an e-mail address`,
			`[1] endorsements: "CERTIFICATION_UNSPECIFIED" is not one of T, H, N, X`,
			`[1] last_license_suspension: "1800" is not a year (1900 to 2100)`}},
		{"a gRPC batch", batchEntries, natural.ApplicationField, []string{`applications[0]: is required`,
			`applications[1].email: "ida@" is not an e-mail address`,
			`applications[1].certifications: "CERTIFICATION_UNSPECIFIED" is not one of T, H, N, X`,
			`applications[1].last_license_suspension: "1800" is not a year (1900 to 2100)`}},
		{"one gRPC application", singleEntry, natural.ApplicationField, []string{`application: is required`,
			`email: "ida@" is not an e-mail address`,
			`certifications: "CERTIFICATION_UNSPECIFIED" is not one of T, H, N, X`,
			`last_license_suspension: "1800" is not a year (1900 to 2100)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, problems := checkApplications(1, apps, time.Now(), tt.naming, tt.rename)
			var got []string
			for _, p := range problems {
				got = append(got, p.text())
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("problem %d: %q, want %q", i, got[i], tt.want[i])
				}
			}
			// The path a gRPC caller finds in the BadRequest is the same.
			if v := problems[1]; v.field != tt.naming.path(1)+".email" || v.description != `"ida@" is not an e-mail address` {
				t.Errorf("the e-mail's violation: %+v", v)
			}
		})
	}
}
