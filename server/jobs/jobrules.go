package jobs

import (
	"fmt"
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

// lettersAndDigits reports whether s is one or more ASCII letters and
// digits, the characters of a reference number: a loop rather than a
// regular expression, which took a tenth of a post's checks.
func lettersAndDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return s != ""
}

// jobValidator checks submitted jobs and turns them into domain jobs.
type jobValidator struct {
	html *htmlSanitizer
}

func newJobValidator() *jobValidator { return &jobValidator{html: newHTMLSanitizer()} }

// check validates one submitted job in the v2.0 text form.
func (v *jobValidator) check(in *restv2.JobInput) (domain.JobFields, []fieldProblem, []ignoredField) {
	return v.checkInput(ReadText(in), RESTNames)
}

// checkInput validates one job an adapter read, naming its fields as
// names does. The job may be saved only when it returns no problems;
// ignored values never stop a job. A field the adapter could not read has
// the adapter's problem, in the field's place.
func (v *jobValidator) checkInput(in Input, names Naming) (domain.JobFields, []fieldProblem, []ignoredField) {
	c := jobCheck{in: &in, names: names}
	var job domain.JobFields
	// First, so that a field given twice has this entry rather than one
	// about its first value.
	c.repeatedFields(in.Repeated)
	for f, field := range fields {
		c.checkField(v, Field(f), field, &job)
	}
	c.ignoreExtraFields(in.Extra)
	return job, c.problems, c.ignored
}

// checkField checks one field by its kind and, for a text, its own rule,
// and puts what it accepts in job.
func (c *jobCheck) checkField(v *jobValidator, f Field, field domain.JobField, job *domain.JobFields) {
	in := &c.in.JobInput
	switch field.Kind {
	case domain.TextField:
		if s, ok := c.given(f, field.Required, field.InputText(in)); ok {
			field.PutText(job, new(textRules[field.Name](c, f, s)))
		}
	case domain.HTMLField:
		if s, ok := c.given(f, field.Required, field.InputText(in)); ok {
			field.PutText(job, new(v.richText(c, f, s)))
		}
	case domain.WordField:
		if w := c.word(f, field, field.InputText(in)); w != nil {
			field.PutText(job, w)
		}
	case domain.WordsField:
		field.PutWordList(job, c.wordList(f, field, field.InputWordList(in)))
	case domain.AmountField:
		field.PutAmount(job, c.amount(f, field.InputAmount(in)))
		if f == fieldPayMax {
			c.payRange(job)
		}
	case domain.FlagField:
		if c.readable(f) {
			field.PutFlag(job, field.InputFlag(in))
		}
	}
}

// The fields with a rule of their own besides their kind's.
var (
	fieldReferenceNumber = FieldNamed("referenceNumber")
	fieldPayMin          = FieldNamed("payAmountMin")
	fieldPayMax          = FieldNamed("payAmountMax")
)

// textRules check a text field's trimmed value and return what is
// stored. Every text field has one (TestEveryTextFieldHasItsRule).
var textRules = map[string]func(c *jobCheck, f Field, s string) string{
	"referenceNumber": func(c *jobCheck, f Field, ref string) string {
		if utf8.RuneCountInString(ref) > maxReferenceLen || !lettersAndDigits(ref) {
			c.invalid(f, "must be 1-64 letters and digits")
		}
		return ref
	},
	"title": func(c *jobCheck, f Field, title string) string { c.maxLen(f, title, maxTitleLen); return title },
	"city":  func(c *jobCheck, f Field, city string) string { c.maxLen(f, city, maxCityLen); return city },
	"state": func(c *jobCheck, f Field, st string) string {
		st = strings.ToUpper(st)
		if !domain.IsJobState(st) {
			c.invalid(f, "is not a US state code")
		}
		return st
	},
	"postalCode": func(c *jobCheck, f Field, zip string) string {
		read, ok := rules.ReadZIP(zip)
		if !ok {
			c.invalid(f, "is not a ZIP code (12345 or 12345-6789)")
			return zip
		}
		return read
	},
}

// payRange checks that the lower end of the pay range is not above the
// upper, once both are read.
func (c *jobCheck) payRange(job *domain.JobFields) {
	if job.PayMin != nil && job.PayMax != nil && *job.PayMin > *job.PayMax {
		c.invalid(fieldPayMin, "is greater than "+c.names.Names[fieldPayMax]+" "+call.Quoted(rules.OrEmpty(c.in.Sent[fieldPayMax])))
	}
}

// maxIgnoredFields is how many unknown fields of one job get an entry each;
// the rest share one, so a job of a thousand tiny unknown fields cannot
// make the answer many times the size of the request.
const maxIgnoredFields = 10

// ignoreExtraFields reports the fields the service does not use.
func (c *jobCheck) ignoreExtraFields(extra []Member) {
	for k, x := range extra {
		if k == maxIgnoredFields {
			names := make([]string, 0, len(extra)-k)
			for _, y := range extra[k:] {
				names = append(names, y.Name)
			}
			c.ignored = append(c.ignored, ignoredField{value: new(joinCut(names, ", ", call.MaxEchoed)),
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
func (c *jobCheck) repeatedFields(repeated []Member) {
	for k, r := range repeated {
		if k == maxIgnoredFields {
			names := make([]string, 0, len(repeated)-k)
			for _, y := range repeated[k:] {
				names = append(names, y.Name)
			}
			c.add(fieldProblem{kind: invalidProblem, value: new(joinCut(names, ", ", call.MaxEchoed)),
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
func (v *jobValidator) richText(c *jobCheck, f Field, text string) string {
	if c.maxLen(f, text, maxDescriptionLen) {
		return text
	}
	clean, removed := v.html.sanitize(text)
	name := c.names.Names[f]
	if removed {
		c.ignored = append(c.ignored, ignoredField{field: name, value: c.in.Sent[f],
			message: "HTML other than the basic tags (b, i, u, em, strong, p, br, ul, ol, li, a with an http(s) link) was removed from " + name})
	}
	clean = strings.TrimSpace(clean)
	switch {
	case clean == "":
		c.invalid(f, "has no text once HTML other than the basic tags is removed")
	case utf8.RuneCountInString(clean) > maxDescriptionLen:
		// Escaping (& to &amp;) can grow the stored text past the limit.
		c.invalid(f, fmt.Sprintf("is longer than %d characters once its HTML is escaped", maxDescriptionLen))
	}
	return clean
}

// jobCheck collects the problems of one job as its fields are read.
type jobCheck struct {
	in       *Input
	names    Naming
	problems []fieldProblem
	ignored  []ignoredField
}

func (c *jobCheck) missing(f Field) {
	c.add(fieldProblem{kind: missingProblem, field: c.names.Names[f], value: c.in.Sent[f], message: c.names.Names[f] + " is required"})
}

// invalid records that field f breaks rule, quoting the value sent.
func (c *jobCheck) invalid(f Field, rule string) {
	raw := c.in.Sent[f]
	c.add(fieldProblem{kind: invalidProblem, field: c.names.Names[f], value: raw,
		message: fmt.Sprintf("%s: %s %s", c.names.Names[f], call.Quoted(rules.OrEmpty(raw)), rule)})
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

// readable reports whether the adapter read field f; if it did not, its
// problem is recorded in the field's place.
func (c *jobCheck) readable(f Field) bool {
	for _, u := range c.in.Unread {
		if u.Field == f {
			c.add(fieldProblem{kind: invalidProblem, field: c.names.Names[f], value: u.Value, message: u.Message})
			return false
		}
	}
	return true
}

// text trims a submitted value. It reports false for an absent or blank
// value, and for one holding a NUL character or bytes that are not UTF-8,
// which PostgreSQL text cannot store (that one is also recorded as
// invalid). The REST decoders and gRPC's codec refuse such bytes first;
// the rule holds for any caller.
func (c *jobCheck) text(f Field, v *string) (string, bool) {
	if v == nil {
		return "", false
	}
	if call.Unstorable(*v) {
		c.invalid(f, "contains a NUL character or bytes that are not UTF-8")
		return "", false
	}
	s := strings.TrimSpace(*v)
	return s, s != ""
}

// given returns the trimmed value, or false for an absent, null or blank
// one, which is missing when the field is required.
func (c *jobCheck) given(f Field, required bool, v *string) (string, bool) {
	s, ok := c.text(f, v)
	if !ok && required && (v == nil || !call.Unstorable(*v)) {
		c.missing(f)
	}
	return s, ok
}

// maxLen records an invalid problem when s is longer than max characters.
func (c *jobCheck) maxLen(f Field, s string, max int) bool {
	// No text has more characters than bytes: a short one is not counted.
	if len(s) > max && utf8.RuneCountInString(s) > max {
		c.invalid(f, fmt.Sprintf("is longer than %d characters", max))
		return true
	}
	return false
}

// word checks a closed field: one of its words, or not given when it may
// be left out.
func (c *jobCheck) word(f Field, field domain.JobField, w *string) *string {
	switch {
	case !c.readable(f):
		return nil
	case w == nil:
		if field.Required {
			c.missing(f)
		}
		return nil
	case !slices.Contains(field.Words, *w):
		c.invalid(f, "is not one of "+strings.Join(field.Words, ", "))
		if !field.Required {
			return nil
		}
	}
	return w
}

// wordList checks a list of words and drops repeats, keeping the order
// sent.
func (c *jobCheck) wordList(f Field, field domain.JobField, ws []string) []string {
	out := []string{}
	if !c.readable(f) {
		return out
	}
	for _, w := range ws {
		if !slices.Contains(field.Words, w) {
			c.invalid(f, "is not one of "+strings.Join(field.Words, ", "))
			return []string{}
		}
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// amount checks a pay amount: not negative, at most domain.MaxPay.
func (c *jobCheck) amount(f Field, a *domain.Cents) *domain.Cents {
	switch {
	case !c.readable(f) || a == nil:
		return nil
	case *a < 0:
		c.invalid(f, mustNotBeNegative)
	case *a > domain.MaxPay:
		c.invalid(f, "must be at most "+c.names.Amount(domain.MaxPay))
	default:
		return a
	}
	return nil
}

// mustNotBeNegative is the rule of a negative amount, found by the rules
// or, in the v2.0 text, by its reader.
const mustNotBeNegative = "must not be negative"

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
