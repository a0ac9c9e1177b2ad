package jobs

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/truckjobs/jobboard/domain"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
)

var (
	fuzzZip = regexp.MustCompile(`^[0-9]{5}(-[0-9]{4})?$`)
)

// FuzzJobValidator checks any job against the rules of docs/api.md, Jobs:
// the validator never panics, and a job it accepts holds only values the
// rules allow (and PostgreSQL can store); a job it refuses names each
// problem's field.
func FuzzJobValidator(f *testing.F) {
	f.Add("A1", "Driver", "tx", "123456789", "owner operator", "BOX", "18.5", "20", "<p>Hi <script>x</script></p>", "1", "Full-Time")
	f.Add("", " ", "XX", "1234", "pilot", "Boat", "-1", "1e3", "", "maybe", "Sometimes")
	f.Add("A\x00", "T\x00", "NY", "12345-6789", "Student", "Tanker", "0.001", "00.10", "<a href=\"javascript:x\">y</a>", "true", "")
	f.Add(strings.Repeat("9", 65), strings.Repeat("é", 256), "pr", "", "Company Driver", "Dry Van", "99999999999999999999.99", "", "\xff", "0", "OTR")
	v := newJobValidator()
	f.Fuzz(func(t *testing.T, ref, title, state, zip, driverType, freight, payMin, payMax, desc, twic, employment string) {
		in := &restv2.JobInput{ReferenceNumber: &ref, Title: &title, State: &state, PostalCode: &zip,
			DriverType: &driverType, FreightType: &freight, PayAmountMin: &payMin, PayAmountMax: &payMax,
			Description: &desc, Requirements: &desc, TwicOnly: &twic, EmploymentType: []string{employment, employment}}
		job, problems, ignored := v.check(in)
		for _, p := range problems {
			if p.field == "" || p.message == "" || !utf8.ValidString(p.message) {
				t.Fatalf("problem %+v does not name its field with a readable message", p)
			}
		}
		for _, ig := range ignored {
			if ig.field == "" || !utf8.ValidString(ig.message) {
				t.Fatalf("ignored value %+v is not named", ig)
			}
		}
		if len(problems) > 0 {
			return
		}
		texts := []string{job.ReferenceNumber, job.Title, job.State, string(job.DriverType), string(job.FreightType), job.Description}
		for _, p := range []*string{job.City, job.PostalCode, job.Requirements} {
			if p != nil {
				texts = append(texts, *p)
			}
		}
		for _, s := range texts {
			if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
				t.Fatalf("accepted a value PostgreSQL cannot store: %q", s)
			}
		}
		switch {
		case !referenceRule.MatchString(job.ReferenceNumber) || len(job.ReferenceNumber) > maxReferenceLen:
			t.Fatalf("accepted referenceNumber %q", job.ReferenceNumber)
		case strings.TrimSpace(job.Title) == "" || utf8.RuneCountInString(job.Title) > maxTitleLen:
			t.Fatalf("accepted title %q", job.Title)
		case !domain.IsJobState(job.State):
			t.Fatalf("accepted state %q", job.State)
		case job.PostalCode != nil && !fuzzZip.MatchString(*job.PostalCode):
			t.Fatalf("accepted postalCode %q", *job.PostalCode)
		case !slices.Contains(domain.DriverTypes(), job.DriverType) || !slices.Contains(domain.FreightTypes(), job.FreightType):
			t.Fatalf("accepted driverType %q, freightType %q", job.DriverType, job.FreightType)
		case job.PayMin != nil && (*job.PayMin < 0 || *job.PayMin > domain.MaxPay):
			t.Fatalf("accepted payAmountMin %d cents", *job.PayMin)
		case job.PayMin != nil && job.PayMax != nil && *job.PayMin > *job.PayMax:
			t.Fatalf("accepted payAmountMin %d cents above payAmountMax %d", *job.PayMin, *job.PayMax)
		case strings.TrimSpace(job.Description) == "" || strings.Contains(strings.ToLower(job.Description), "<script"):
			t.Fatalf("accepted description %q", job.Description)
		case len(job.EmploymentType) > 1:
			t.Fatalf("kept a duplicate: employmentType %v", job.EmploymentType)
		}
	})
}

// FuzzPlainlyClean: whatever plainlyClean passes without the sanitiser,
// the sanitiser would have left exactly as it is.
func FuzzPlainlyClean(f *testing.F) {
	for _, seed := range []string{
		"<p>Route A1: home <b>every weekend</b>.</p><ul><li>No touch freight</li></ul>",
		"plain text", "<br>line<br/>", "<P>upper</P>", "<p >x</p>", "<li></li></ol>", "a < b", "<script>x</script>",
		"<p>unclosed", "</ul>", "<>", "</>", "x\x00y", "é<em>ü</em>", "<strong><i><u>x</u></i></strong>",
	} {
		f.Add(seed)
	}
	h := newHTMLSanitizer()
	f.Fuzz(func(t *testing.T, s string) {
		if plainlyClean(s) {
			if clean := h.policy.Sanitize(s); clean != s {
				t.Fatalf("plainlyClean(%q) but the sanitiser gives %q", s, clean)
			}
		}
	})
}
