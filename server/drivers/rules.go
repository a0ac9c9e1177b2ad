package drivers

import (
	"fmt"
	"net/mail"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/truckjobs/jobboard/internal/rules"
	"github.com/truckjobs/jobboard/internal/usstate"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/intake"
	"github.com/truckjobs/jobboard/server/natural"
	"github.com/truckjobs/jobboard/server/store"
)

// certifications are the endorsement codes in display order with their
// labels: those of the gRPC API's Certification enum (package natural).
var certifications = func() []struct{ code, label string } {
	codes, labels := natural.CertificationCodes.Labels(), natural.Certifications.Labels()
	out := make([]struct{ code, label string }, len(codes))
	for i := range codes {
		out[i].code, out[i].label = codes[i], labels[i]
	}
	return out
}()

// certificationCode reads a code or a full label, any case. A + that an
// unencoded query string turned into a space still matches.
func certificationCode(s string) (string, bool) {
	squash := func(v string) string { return strings.Join(strings.Fields(strings.ReplaceAll(v, "+", " ")), " ") }
	s = squash(s)
	for _, c := range certifications {
		if strings.EqualFold(s, c.code) || strings.EqualFold(s, squash(c.label)) {
			return c.code, true
		}
	}
	return "", false
}

// endorsementText shows codes as the detail representation does.
func endorsementText(codes []string) string {
	var parts []string
	for _, c := range certifications {
		for _, have := range codes {
			if have == c.code {
				parts = append(parts, c.label)
				break
			}
		}
	}
	return strings.Join(parts, ", ")
}

var (
	experiencePattern = regexp.MustCompile(`^\d{1,2}(\.\d+)?$`)
	spacedOffset      = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2}T[\d:.]+) (\d{2}:?\d{2})$`)
)

// phoneDigits returns the ten digits of a US phone number, dropping
// punctuation and a leading +1 or 1, or false when it has no ten.
func phoneDigits(s string) (string, bool) {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case strings.ContainsRune(" +-().", r):
		default:
			return "", false
		}
	}
	d := b.String()
	if len(d) == 11 && d[0] == '1' {
		d = d[1:]
	}
	return d, len(d) == 10
}

// validEmail accepts a bare address such as driver@example.com.
func validEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && a.Name == "" && strings.Contains(s[strings.LastIndex(s, "@"):], ".")
}

// parseDateTime reads the input date-time forms of docs/api.md, Formats and suffixes:
// YYYY-MM-DD, YYYY-MM-DDThh:mm:ss (UTC), and RFC 3339 with Z, +hh:mm or +hhmm.
// dateOnly reports a bare date.
func parseDateTime(s string) (t time.Time, dateOnly bool, err error) {
	s = strings.TrimSpace(s)
	// An unencoded + in a query string arrives as a space: 2026-01-01T00:00:00 05:00.
	if m := spacedOffset.FindStringSubmatch(s); m != nil {
		s = m[1] + "+" + m[2]
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, true, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04:05.999999999Z0700"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), false, nil
		}
	}
	return time.Time{}, false, fmt.Errorf("%q is not a date (YYYY-MM-DD) or date-time (RFC 3339)", s)
}

// appCheck collects the problems of one application, each naming its field
// as in the application ("sent", "job_applications[0].reference").
type appCheck struct{ problems []call.FieldViolation }

// sent reads when the application was submitted: required, a date or
// date-time, and at most maxSentAhead after now. A sent in the future would
// hold the account's profile of this driver against every real
// application until then.
func (c *appCheck) sent(raw string, now time.Time) time.Time {
	sent := c.required("sent", raw)
	if sent == "" {
		return time.Time{}
	}
	t, _, err := parseDateTime(sent)
	switch {
	case err != nil:
		c.fail("sent", sent, dateTimeRule)
	case t.After(now.Add(maxSentAhead)):
		c.fail("sent", sent, fmt.Sprintf("is more than %d minutes after the server's time %s; an application cannot be sent in the future",
			int(maxSentAhead/time.Minute), now.UTC().Format(time.RFC3339)))
	}
	return t
}

// dateTimeRule is the rule of the date-time fields.
const dateTimeRule = "is not a date (YYYY-MM-DD) or date-time (RFC 3339)"

// fail notes that the field's value breaks the rule: `"value" rule`, the
// value cut to call.MaxEchoed characters; a missing value is the rule alone.
func (c *appCheck) fail(field, value, rule string) {
	description := rule
	if value != "" {
		description = fmt.Sprintf("%q %s", call.Truncate(value, call.MaxEchoed), rule)
	}
	c.problems = append(c.problems, call.FieldViolation{Field: field, Label: field, Description: description})
}

// MaxApplicationText is the most characters of one text field of an
// application. Without a bound one driver could make a page of ListDrivers,
// or GetDriver, larger than the 4 MiB a gRPC client receives by default.
const MaxApplicationText = 1000

// text returns the trimmed value, refusing NUL characters and values longer
// than MaxApplicationText.
func (c *appCheck) text(field, v string) string {
	switch {
	case strings.ContainsRune(v, 0):
		c.fail(field, v, "contains a NUL character")
	case utf8.RuneCountInString(v) > MaxApplicationText:
		c.fail(field, v, "is longer than 1,000 characters")
	}
	return strings.TrimSpace(v)
}

func (c *appCheck) required(field, v string) string {
	s := c.text(field, v)
	if s == "" {
		c.fail(field, "", "is required")
	}
	return s
}

// optional keeps the value as given, nil staying nil and "" staying "".
func (c *appCheck) optional(field string, v *string) *string {
	if v == nil {
		return nil
	}
	s := c.text(field, *v)
	return &s
}

// maxSentAhead is how far a sent may be ahead of the server's clock: the
// sender's clock may run a little fast, no more.
const maxSentAhead = 5 * time.Minute

// checkApplication validates a submitted application, received at now, and
// converts it for the store. The problems name the field, the value and the
// rule, in the order of the fields.
func checkApplication(accountID int64, in *intake.Application, now time.Time) (store.Application, []call.FieldViolation) {
	var c appCheck
	app := store.Application{AccountID: accountID, Profile: c.profile(in)}
	app.Sent = c.sent(in.Sent, now)
	if c.listWithin("employment_history", len(in.EmploymentHistory), maxEmployments) {
		for i, e := range in.EmploymentHistory {
			app.Employment = append(app.Employment, c.employment(fmt.Sprintf("employment_history[%d]", i), e))
		}
	}
	if c.listWithin("job_applications", len(in.JobApplications), maxJobApplications) {
		for i, ja := range in.JobApplications {
			app.JobApps = append(app.JobApps, c.jobApplication(fmt.Sprintf("job_applications[%d]", i), ja, app.Sent))
		}
	}
	return app, c.problems
}

// The most entries of an application's lists. Like MaxApplicationText they
// keep one driver's detail, and the errors about one application, within a
// small multiple of a normal one's.
const (
	maxEmployments     = 50
	maxJobApplications = 1000
)

// listWithin refuses a list longer than limit as one problem, whose
// entries are then not checked one by one.
func (c *appCheck) listWithin(field string, n, limit int) bool {
	if n <= limit {
		return true
	}
	c.fail(field, "", fmt.Sprintf("holds %d entries, more than %d", n, limit))
	return false
}

// profile checks the fields that describe the driver.
func (c *appCheck) profile(in *intake.Application) store.DriverProfile {
	p := store.DriverProfile{DriverBasics: store.DriverBasics{
		FirstName: c.required("first_name", in.FirstName),
		LastName:  c.required("last_name", in.LastName),
		Address:   c.required("address", in.Address),
		Address2:  c.optional("address2", in.Address2),
		City:      c.required("city", in.City),
		Email:     c.required("email", in.Email),
		Phone:     c.required("phone", in.Phone),
	}, IsPremium: in.IsPremium}
	p.State = c.residenceState(in.State)
	p.Zip = c.zip(in.Zip)
	if p.Email != "" && !validEmail(p.Email) {
		c.fail("email", p.Email, "is not an e-mail address")
	}
	if p.Phone != "" {
		if _, ok := phoneDigits(p.Phone); !ok {
			c.fail("phone", p.Phone, "is not a US phone number (10 digits, optionally +1)")
		}
	}
	p.DriverType = c.driverType(in.DriverType)
	p.Experience = c.experience(in.Experience)
	p.Endorsements = c.endorsements(in.Endorsements)
	c.history(&p, in)
	return p
}

// history checks the optional fields about the driver's licence, record
// and preferences.
func (c *appCheck) history(p *store.DriverProfile, in *intake.Application) {
	p.FreightExperience = c.optional("freight_experience", in.FreightExperience)
	p.FreightPreferences = c.optional("freight_preferences", in.FreightPreferences)
	p.LicenseState = c.licenseState(in.LicenseState)
	p.PreferredAssignments = c.optional("preferred_assignments", in.PreferredAssignments)
	p.PreferredRegions = c.optional("preferred_regions", in.PreferredRegions)
	p.HasTeam = c.optional("has_team", in.HasTeam)
	p.LicenseClass = c.optional("license_class", in.LicenseClass)
	p.DateOfBirth = c.birthDate(in.DateOfBirth)
	p.TwicCard = c.optional("twic_card", in.TwicCard)
	p.Accidents = c.optional("accidents", in.Accidents)
	p.MovingViolations = c.optional("moving_violations", in.MovingViolations)
	p.LastLicenseSuspension = c.year("last_license_suspension", in.LastLicenseSuspension)
	p.LastDUI = c.year("last_dui", in.LastDUI)
	p.InterestedLeasePurchase = c.optional("interested_lease_purchase", in.InterestedLeasePurchase)
	p.Teams = c.optional("teams", in.Teams)
	p.TrucksOwned = c.optional("trucks_owned", in.TrucksOwned)
}

// residenceState returns the required state code in upper case.
func (c *appCheck) residenceState(raw string) string {
	st := strings.ToUpper(c.required("state", raw))
	if st != "" && !usstate.IsCode(st) {
		c.fail("state", raw, "is not a US state code (two letters such as TX)")
	}
	return st
}

// zip returns the required ZIP code, a ZIP+4 written with its hyphen.
func (c *appCheck) zip(raw string) string {
	zip := c.required("zip", raw)
	if zip == "" {
		return ""
	}
	read, ok := rules.ReadZIP(zip)
	if !ok {
		c.fail("zip", zip, "is not a ZIP code (12345 or 12345-6789)")
		return zip
	}
	return read
}

// driverType returns the required driver type in its canonical spelling.
func (c *appCheck) driverType(raw string) string {
	dt := c.required("driver_type", raw)
	if dt == "" {
		return ""
	}
	canon, ok := rules.Canonical(driverTypeLabels, dt)
	if !ok {
		c.fail("driver_type", dt, "is not one of "+strings.Join(driverTypeLabels, ", "))
	}
	return canon
}

func (c *appCheck) experience(raw string) string {
	exp := c.required("experience", raw)
	if exp != "" && !experiencePattern.MatchString(exp) {
		c.fail("experience", exp, "is not a number of years such as 2 or 0.5")
	}
	return exp
}

// endorsements returns the codes, each once, in display order; never nil.
func (c *appCheck) endorsements(raw []string) []string {
	codes := []string{}
	for _, e := range raw {
		code, ok := certificationCode(e)
		if !ok {
			c.fail("endorsements", e, "is not one of T, H, N, X")
			continue
		}
		if !slices.Contains(codes, code) {
			codes = append(codes, code)
		}
	}
	return sortedCodes(codes)
}

// licenseState returns the state's full name; nil and "" stay as given.
func (c *appCheck) licenseState(raw *string) *string {
	ls := c.optional("license_state", raw)
	if ls == nil || *ls == "" {
		return ls
	}
	name, ok := usstate.Name(*ls)
	if !ok {
		c.fail("license_state", *ls, "is not a US state name or code")
	}
	return &name
}

// birthDate returns the date as YYYY-MM-DD, or nil when there is none.
func (c *appCheck) birthDate(raw *string) *string {
	dob := c.optional("date_of_birth", raw)
	if dob == nil || *dob == "" {
		return nil
	}
	d, err := parseBirthDate(*dob)
	if err != nil {
		c.fail("date_of_birth", *dob, "is not a date (MM/DD/YYYY or YYYY-MM-DD)")
	}
	return &d
}

// year checks an optional calendar year.
func (c *appCheck) year(field string, v *int32) *int32 {
	if v != nil && (*v < 1900 || *v > 2100) {
		c.fail(field, strconv.Itoa(int(*v)), "is not a year (1900 to 2100)")
	}
	return v
}

// employment checks one entry of the employment history; f names it in
// the problems.
func (c *appCheck) employment(f string, e intake.Employment) store.Employment {
	emp := store.Employment{Company: c.required(f+".company", e.Company), Phone: c.required(f+".phone", e.Phone)}
	emp.State = strings.ToUpper(c.required(f+".state", e.State))
	if emp.State != "" && !usstate.IsCode(emp.State) {
		c.fail(f+".state", e.State, "is not a US state code")
	}
	if _, ok := phoneDigits(emp.Phone); emp.Phone != "" && !ok {
		c.fail(f+".phone", emp.Phone, "is not a US phone number")
	}
	var start time.Time
	if raw := c.required(f+".start_date", e.StartDate); raw != "" {
		var err error
		if start, err = time.Parse(time.DateOnly, raw); err != nil {
			c.fail(f+".start_date", e.StartDate, "is not a date (YYYY-MM-DD)")
		}
	}
	emp.StartDate = start.Format(time.DateOnly)
	if e.EndDate != nil && strings.TrimSpace(*e.EndDate) != "" {
		end, err := time.Parse(time.DateOnly, strings.TrimSpace(*e.EndDate))
		switch {
		case err != nil:
			c.fail(f+".end_date", *e.EndDate, "is not a date (YYYY-MM-DD)")
		case end.Before(start):
			c.fail(f+".end_date", *e.EndDate, "is before start_date")
		}
		emp.EndDate = new(end.Format(time.DateOnly))
	}
	return emp
}

// jobApplication checks one job the driver applied to; f names it in the
// problems. Without a created_at it was created when the application was
// sent.
func (c *appCheck) jobApplication(f string, ja intake.JobApplication, sent time.Time) store.JobApplicationInput {
	in := store.JobApplicationInput{Reference: c.required(f+".reference", ja.Reference), IsDirectApp: ja.IsDirectApp, CreatedAt: sent}
	if strings.TrimSpace(ja.CreatedAt) != "" {
		t, _, err := parseDateTime(ja.CreatedAt)
		if err != nil {
			c.fail(f+".created_at", ja.CreatedAt, dateTimeRule)
		}
		in.CreatedAt = t
	}
	return in
}

func sortedCodes(codes []string) []string {
	out := []string{}
	for _, c := range certifications {
		if slices.Contains(codes, c.code) {
			out = append(out, c.code)
		}
	}
	return out
}

func parseBirthDate(s string) (string, error) {
	for _, layout := range []string{"01/02/2006", time.DateOnly} {
		if t, err := time.Parse(layout, strings.TrimSpace(s)); err == nil {
			return t.Format(time.DateOnly), nil
		}
	}
	return "", fmt.Errorf("not a date")
}

// driverTypeLabels are the driver types in canonical spelling: the labels
// of the gRPC enum, as a job's driverType takes them.
var driverTypeLabels = natural.DriverTypes.Labels()
