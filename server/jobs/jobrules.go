package jobs

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/truckjobs/jobboard/domain"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/internal/rules"
	"github.com/truckjobs/jobboard/server/call"
)

// problemKind sorts a problem into the summary list it belongs to.
type problemKind int

const (
	missingProblem problemKind = iota
	invalidProblem
)

// fieldProblem is one broken rule of one submitted job.
type fieldProblem struct {
	kind    problemKind
	field   string
	value   *string // as sent; nil when the field was absent or null
	message string
}

// ignoredField is a submitted value the service did not use.
type ignoredField struct {
	field   string
	value   *string
	message string
}

// Limits on field lengths, in characters.
const (
	maxTitleLen       = 255
	maxCityLen        = 100
	maxDescriptionLen = 50_000
	maxReferenceLen   = 64
)

// The value sets of the job fields, in canonical spelling: the domain's
// words, each of which has a gRPC enum value.
var (
	driverTypes    = words(domain.DriverTypes())
	preferences    = words(domain.Preferences())
	freightTypes   = words(domain.FreightTypes())
	payFrequencies = words(domain.PayFrequencies())
	employment     = words(domain.EmploymentTypes())
	routeTypes     = words(domain.RouteTypes())
	licenseClasses = words(domain.LicenseClasses())
	// jobStates are the USPS codes of the 50 states, DC and the five inhabited territories.
	jobStates = []string{"AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "FL", "GA", "HI", "ID", "IL", "IN", "IA", "KS", "KY", "LA", "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM", "NY", "NC", "ND", "OH", "OK", "OR", "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA", "WV", "WI", "WY", "DC", "PR", "VI", "GU", "AS", "MP"}
)

var (
	referencePattern = regexp.MustCompile(`^[A-Za-z0-9]+$`)
	decimalPattern   = regexp.MustCompile(`^\d+(?:\.\d{1,2})?$`)
)

// vocabulary is a closed field's words, and their names for messages and
// the lenient matching of rules.Canonical.
type vocabulary[T ~string] struct {
	values []T
	names  []string
}

func words[T ~string](values []T) vocabulary[T] {
	return vocabulary[T]{values: values, names: domain.Names(values)}
}

// jobValidator checks submitted jobs in the v2.0 text form and turns them
// into domain jobs.
type jobValidator struct {
	html *htmlSanitizer
}

func newJobValidator() *jobValidator { return &jobValidator{html: newHTMLSanitizer()} }

// check validates one submitted job. The job may be saved only when it
// returns no problems; ignored values never stop a job.
func (v *jobValidator) check(in *restv2.JobInput) (domain.JobFields, []fieldProblem, []ignoredField) {
	c := jobCheck{}
	var f domain.JobFields
	// First, so that a field given twice has this entry rather than one
	// about its first value.
	c.repeatedFields(in.RepeatedFields)

	if ref, ok := c.required("referenceNumber", in.ReferenceNumber); ok {
		if utf8.RuneCountInString(ref) > maxReferenceLen || !referencePattern.MatchString(ref) {
			c.invalid("referenceNumber", in.ReferenceNumber, "must be 1-64 letters and digits")
		}
		f.ReferenceNumber = ref
	}
	if title, ok := c.required("title", in.Title); ok {
		c.maxLen("title", in.Title, title, maxTitleLen)
		f.Title = title
	}
	f.City = c.optional("city", in.City)
	if f.City != nil {
		c.maxLen("city", in.City, *f.City, maxCityLen)
	}
	if st, ok := c.required("state", in.State); ok {
		f.State = strings.ToUpper(st)
		if !slices.Contains(jobStates, f.State) {
			c.invalid("state", in.State, "is not a US state code")
		}
	}
	if zip := c.optional("postalCode", in.PostalCode); zip != nil {
		m := rules.ZIP.FindStringSubmatch(*zip)
		switch {
		case m == nil:
			c.invalid("postalCode", in.PostalCode, "is not a ZIP code (12345 or 12345-6789)")
		case m[2] != "":
			f.PostalCode = ptr(m[1] + "-" + m[2])
		default:
			f.PostalCode = ptr(m[1])
		}
	}
	f.DriverType = requiredEnum(&c, "driverType", in.DriverType, driverTypes)
	f.Preference = optionalEnum(&c, "preference", in.Preference, preferences)
	f.FreightType = requiredEnum(&c, "freightType", in.FreightType, freightTypes)
	f.PayMin = c.decimal("payAmountMin", in.PayAmountMin)
	f.PayMax = c.decimal("payAmountMax", in.PayAmountMax)
	if f.PayMin != nil && f.PayMax != nil && *f.PayMin > *f.PayMax {
		c.invalid("payAmountMin", in.PayAmountMin, "is greater than payAmountMax "+call.Quoted(*in.PayAmountMax))
	}
	f.PayFrequency = optionalEnum(&c, "payFrequency", in.PayFrequency, payFrequencies)
	f.EmploymentType = enumList(&c, "employmentType", in.EmploymentType, employment)
	f.RouteType = enumList(&c, "routeType", in.RouteType, routeTypes)
	if d, ok := c.required("description", in.Description); ok {
		f.Description = v.richText(&c, "description", in.Description, d)
	}
	if r := c.optional("requirements", in.Requirements); r != nil {
		f.Requirements = ptr(v.richText(&c, "requirements", in.Requirements, *r))
	}
	f.TwicOnly = c.boolean("twicOnly", in.TwicOnly)
	f.LicenseClass = optionalEnum(&c, "licenseClass", in.LicenseClass, licenseClasses)

	c.ignoreExtraFields(in.ExtraFields)
	return f, c.problems, c.ignored
}

// maxIgnoredFields is how many unknown fields of one job get an entry each;
// the rest share one, so a job of a thousand tiny unknown fields cannot
// make the answer many times the size of the request.
const maxIgnoredFields = 10

// ignoreExtraFields reports the fields the service does not use.
func (c *jobCheck) ignoreExtraFields(extra []*restv2.ExtraField) {
	for k, x := range extra {
		if k == maxIgnoredFields {
			names := make([]string, 0, len(extra)-k)
			for _, y := range extra[k:] {
				names = append(names, y.Name)
			}
			c.ignored = append(c.ignored, ignoredField{value: ptr(joinCut(names, ", ", call.MaxEchoed)),
				message: fmt.Sprintf("%d more unknown fields were ignored", len(names))})
			return
		}
		name := call.EscapeNUL(call.Truncate(x.Name, call.MaxEchoed))
		msg := "unknown field " + name + " was ignored"
		if name == "id" || name == "date" {
			msg = name + " is assigned by the service and was ignored"
		}
		c.ignored = append(c.ignored, ignoredField{field: name, value: x.Value, message: msg})
	}
}

// repeatedFields reports each member the job named more than once: the
// job is not saved, since which of its values was meant is not known
// (docs/api.md, Limits against abuse). As with unknown fields, the first
// maxIgnoredFields get an entry each and the rest share one.
func (c *jobCheck) repeatedFields(repeated []*restv2.ExtraField) {
	for k, r := range repeated {
		if k == maxIgnoredFields {
			names := make([]string, 0, len(repeated)-k)
			for _, y := range repeated[k:] {
				names = append(names, y.Name)
			}
			c.add(fieldProblem{kind: invalidProblem, value: ptr(joinCut(names, ", ", call.MaxEchoed)),
				message: fmt.Sprintf("%d more fields are given more than once in this job; a job gives each field once", len(names))})
			return
		}
		name := call.EscapeNUL(call.Truncate(r.Name, call.MaxEchoed))
		msg := name + ": is given more than once in this job; a job gives each field once"
		if r.Value != nil {
			msg = fmt.Sprintf("%s: %s is a second value for a field this job already gave; a job gives each field once", name, call.Quoted(*r.Value))
		}
		c.add(fieldProblem{kind: invalidProblem, field: name, value: r.Value, message: msg})
	}
}

// richText sanitises description or requirements, reporting removed HTML as
// an ignored value and an over-long or empty result as invalid.
func (v *jobValidator) richText(c *jobCheck, field string, raw *string, text string) string {
	if c.maxLen(field, raw, text, maxDescriptionLen) {
		return text
	}
	clean, removed := v.html.sanitize(text)
	if removed {
		c.ignored = append(c.ignored, ignoredField{field: field, value: raw,
			message: "HTML other than the basic tags (b, i, u, em, strong, p, br, ul, ol, li, a with an http(s) link) was removed from " + field})
	}
	clean = strings.TrimSpace(clean)
	switch {
	case clean == "":
		c.invalid(field, raw, "has no text once HTML other than the basic tags is removed")
	case utf8.RuneCountInString(clean) > maxDescriptionLen:
		// Escaping (& to &amp;) can grow the stored text past the limit.
		c.invalid(field, raw, fmt.Sprintf("is longer than %d characters once its HTML is escaped", maxDescriptionLen))
	}
	return clean
}

// jobCheck collects the problems of one job as its fields are read.
type jobCheck struct {
	problems []fieldProblem
	ignored  []ignoredField
}

func (c *jobCheck) missing(field string, raw *string) {
	c.add(fieldProblem{kind: missingProblem, field: field, value: raw, message: field + " is required"})
}

func (c *jobCheck) invalid(field string, raw *string, rule string) {
	c.add(fieldProblem{kind: invalidProblem, field: field, value: raw,
		message: fmt.Sprintf("%s: %s %s", field, call.Quoted(rules.OrEmpty(raw)), rule)})
}

// add records p unless its field already has a problem: a job yields at
// most one entry per field (docs/api.md, Limits against abuse), so no field can make the
// answer grow with the number of values it holds.
func (c *jobCheck) add(p fieldProblem) {
	for _, q := range c.problems {
		if q.field == p.field {
			return
		}
	}
	c.problems = append(c.problems, p)
}

// text trims a submitted value. It reports false for an absent or blank
// value, and for one holding a NUL character or bytes that are not UTF-8,
// which PostgreSQL text cannot store (that one is also recorded as
// invalid). The REST decoders and gRPC's codec refuse such bytes first;
// the rule holds for any caller.
func (c *jobCheck) text(field string, raw *string) (string, bool) {
	if raw == nil {
		return "", false
	}
	if call.Unstorable(*raw) {
		c.invalid(field, raw, "contains a NUL character or bytes that are not UTF-8")
		return "", false
	}
	s := strings.TrimSpace(*raw)
	return s, s != ""
}

// required returns the trimmed value, recording a missing problem for an
// absent, null or blank value.
func (c *jobCheck) required(field string, raw *string) (string, bool) {
	if raw != nil && call.Unstorable(*raw) {
		return c.text(field, raw)
	}
	s, ok := c.text(field, raw)
	if !ok {
		c.missing(field, raw)
	}
	return s, ok
}

// optional returns the trimmed value, or nil for an absent or blank one.
func (c *jobCheck) optional(field string, raw *string) *string {
	if s, ok := c.text(field, raw); ok {
		return &s
	}
	return nil
}

// maxLen records an invalid problem when s is longer than max characters.
func (c *jobCheck) maxLen(field string, raw *string, s string, max int) bool {
	if utf8.RuneCountInString(s) > max {
		c.invalid(field, raw, fmt.Sprintf("is longer than %d characters", max))
		return true
	}
	return false
}

// requiredEnum reads one of v's words, in any case and spacing
// (rules.Canonical).
func requiredEnum[T ~string](c *jobCheck, field string, raw *string, v vocabulary[T]) T {
	s, ok := c.required(field, raw)
	if !ok {
		return ""
	}
	canon, found := rules.Canonical(v.names, s)
	if !found {
		c.invalid(field, raw, "is not one of "+strings.Join(v.names, ", "))
	}
	return T(canon)
}

// optionalEnum is requiredEnum for a field that may be left out.
func optionalEnum[T ~string](c *jobCheck, field string, raw *string, v vocabulary[T]) *T {
	s := c.optional(field, raw)
	if s == nil {
		return nil
	}
	canon, found := rules.Canonical(v.names, *s)
	if !found {
		c.invalid(field, raw, "is not one of "+strings.Join(v.names, ", "))
		return nil
	}
	return new(T(canon))
}

// maxListValues bounds employmentType and routeType (docs/api.md, Limits against abuse):
// each has at most five distinct values, so more can only be a mistake.
const maxListValues = 10

// enumList canonicalises each value and drops repeats, keeping the order
// sent. Blank values are skipped. However many values are wrong, the field
// gets one entry: it quotes the first wrong value and counts the others.
func enumList[T ~string](c *jobCheck, field string, raw []string, v vocabulary[T]) []T {
	if len(raw) > maxListValues {
		c.add(fieldProblem{kind: invalidProblem, field: field, value: ptr(joinCut(raw, ", ", call.MaxEchoed)),
			message: fmt.Sprintf("%s: %d values were sent; at most %d are accepted", field, len(raw), maxListValues)})
		return []T{}
	}
	out := []T{}
	firstBad, bad := -1, 0
	for i := range raw {
		s := strings.TrimSpace(raw[i])
		if s == "" {
			continue
		}
		canon, found := rules.Canonical(v.names, s)
		if !found {
			if firstBad < 0 {
				firstBad = i
			}
			bad++
			continue
		}
		if !slices.Contains(out, T(canon)) {
			out = append(out, T(canon))
		}
	}
	if bad > 0 {
		rule := "is not one of " + strings.Join(v.names, ", ")
		if bad > 1 {
			rule += fmt.Sprintf(" (nor are %d more of the values sent)", bad-1)
		}
		c.invalid(field, &raw[firstBad], rule)
	}
	return out
}

// joinCut joins values with sep, stopping once the result holds more
// than n bytes, so a huge list is never copied whole just to be cut.
func joinCut(values []string, sep string, n int) string {
	var b strings.Builder
	for i, v := range values {
		if i > 0 {
			b.WriteString(sep)
		}
		if b.Len()+len(v) > n {
			b.WriteString(call.Truncate(v, n-b.Len()))
			break
		}
		b.WriteString(v)
	}
	return b.String()
}

// decimal accepts a non-negative amount with at most two decimal places, as
// cents.
func (c *jobCheck) decimal(field string, raw *string) *domain.Cents {
	s := c.optional(field, raw)
	if s == nil {
		return nil
	}
	switch {
	case strings.HasPrefix(*s, "-"):
		c.invalid(field, raw, "must not be negative")
	case !decimalPattern.MatchString(*s):
		c.invalid(field, raw, "must be a decimal number with at most two decimal places")
	case domain.ParseCents(*s) > domain.MaxPay:
		c.invalid(field, raw, fmt.Sprintf("must be at most %d", domain.MaxPay/100))
	default:
		return new(domain.ParseCents(*s))
	}
	return nil
}

// boolean reads a boolean (rules.Bool), spaces around it allowed; absent
// is false.
func (c *jobCheck) boolean(field string, raw *string) bool {
	if raw == nil {
		return false
	}
	v, ok := rules.Bool(strings.TrimSpace(*raw))
	if !ok {
		c.invalid(field, raw, "is not a boolean (true, false, 1 or 0)")
	}
	return v
}

func ptr(s string) *string { return &s }
