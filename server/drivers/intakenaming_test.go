package drivers

import (
	"fmt"
	"strings"
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
				got = append(got, p.Text())
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
			if v := problems[1]; v.Field != tt.naming.path(1)+".email" || v.Description != `"ida@" is not an e-mail address` {
				t.Errorf("the e-mail's violation: %+v", v)
			}
		})
	}
}

// TestApplicationTextLength: a text field of 1,000 characters is taken, one
// more is refused naming the field, required or optional alike.
func TestApplicationTextLength(t *testing.T) {
	long := strings.Repeat("é", MaxApplicationText)
	for _, tt := range []struct {
		name string
		set  func(a *intake.Application, v string)
		path string
	}{
		{"a required field", func(a *intake.Application, v string) { a.Address = v }, "[0] address"},
		{"an optional field", func(a *intake.Application, v string) { a.FreightExperience = &v }, "[0] freight_experience"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			app := applicant("Ida", "Ray", "TX", "75201", "Student", "1", "2026-01-01")
			tt.set(app, long)
			if _, problems := checkApplications(1, []*intake.Application{app}, time.Now(), fileEntries, sameName); len(problems) != 0 {
				t.Errorf("%d characters: %v", MaxApplicationText, problems)
			}
			tt.set(app, long+"x")
			_, problems := checkApplications(1, []*intake.Application{app}, time.Now(), fileEntries, sameName)
			if len(problems) != 1 || !strings.HasPrefix(problems[0].Text(), tt.path+`: "éé`) ||
				!strings.HasSuffix(problems[0].Text(), " is longer than 1,000 characters") {
				t.Errorf("%d characters: %v", MaxApplicationText+1, problems)
			}
		})
	}
}

// TestApplicationListLength: an application's lists have a most entries;
// past it the list is one problem.
func TestApplicationListLength(t *testing.T) {
	app := applicant("Ida", "Ray", "TX", "75201", "Student", "1", "2026-01-01")
	app.EmploymentHistory = make([]intake.Employment, maxEmployments+1)
	_, problems := checkApplications(1, []*intake.Application{app}, time.Now(), fileEntries, sameName)
	if len(problems) != 1 || problems[0].Text() != "[0] employment_history: holds 51 entries, more than 50" {
		t.Errorf("%d employments: %v", maxEmployments+1, problems)
	}
}

// applicant builds an application; edit adjusts it.
func applicant(first, last, state, zip, driverType, experience, sent string, endorsements ...string) *intake.Application {
	return &intake.Application{
		FirstName: first, LastName: last, Address: "1 Main St", City: "Town", State: state, Zip: zip,
		Email: strings.ToLower(first+"."+last) + "@example.com", Phone: "212-555-01" + fmt.Sprint(10+len(first+last)),
		DriverType: driverType, Experience: experience, Sent: sent, Endorsements: endorsements,
	}
}
