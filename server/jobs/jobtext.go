package jobs

import (
	"fmt"
	"strings"

	"github.com/truckjobs/jobboard/domain"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/internal/protofield"
	"github.com/truckjobs/jobboard/internal/rules"
	"github.com/truckjobs/jobboard/server/call"
)

// This file moves a job between the v2.0 text form, where every value is
// text, and the domain's types, field by field as domain.JobFieldList()
// lists them, each by its kind. It reads closed fields in any case and
// spacing (rules.Canonical), amounts as decimals, booleans as rules.Bool
// spells them; what it cannot read it reports in the v2.0 API's words,
// and the job rules do the rest.

// isDecimal reports whether s is a decimal number with at most two
// decimal places, ASCII digits only (12, 12.5, 12.50; not .5, 12. or
// 12.505): a loop rather than a regular expression, as lettersAndDigits.
func isDecimal(s string) bool {
	whole := rules.LeadingDigits(s)
	if whole == 0 {
		return false
	}
	rest := s[whole:]
	if rest == "" {
		return true
	}
	places := rules.LeadingDigits(rest[1:])
	return rest[0] == '.' && 1 <= places && places <= 2 && places == len(rest)-1
}

// MaxListValues bounds employmentType and routeType (docs/api.md, Limits
// against abuse): each has at most five distinct values, so more can only
// be a mistake.
const MaxListValues = 10

// ReadText reads a job of the v2.0 text form.
func ReadText(in *restv2.JobInput) Input {
	r := NewInput()
	for f, place := range textPlaces {
		field := fields[f]
		if field.Kind == domain.WordsField {
			field.SetWordList(&r.JobInput, readWords(&r, Field(f), *place.list.In(in)))
			continue
		}
		r.Sent[f] = *place.scalar.In(in)
		switch field.Kind {
		case domain.TextField, domain.HTMLField:
			field.SetText(&r.JobInput, r.Sent[f])
		case domain.WordField:
			field.SetText(&r.JobInput, r.readWord(Field(f)))
		case domain.AmountField:
			field.SetAmount(&r.JobInput, r.readDecimal(Field(f)))
		case domain.FlagField:
			field.SetFlag(&r.JobInput, r.readBoolean(Field(f)))
		}
	}
	for _, x := range in.RepeatedFields {
		r.Repeated = append(r.Repeated, Member{Name: x.GetName(), Value: x.Value})
	}
	for _, x := range in.ExtraFields {
		r.Extra = append(r.Extra, Member{Name: x.GetName(), Value: x.Value})
	}
	return r
}

// textPlace is where a field lies in the v2.0 messages: in a JobInput
// (a list's place or another's), and in a Job (by its kind: a list, an
// optional text or amount, a required text, a flag).
type textPlace struct {
	scalar protofield.Place[restv2.JobInput, *string]
	list   protofield.Place[restv2.JobInput, []string]

	jobList     protofield.Place[restv2.Job, []string]
	jobOptional protofield.Place[restv2.Job, *string]
	jobText     protofield.Place[restv2.Job, string]
	jobFlag     protofield.Place[restv2.Job, bool]
}

// textPlaces are the fields' places, by Field.
var textPlaces = func() []textPlace {
	out := make([]textPlace, len(fields))
	for i, f := range fields {
		p := &out[i]
		switch {
		case f.Kind == domain.WordsField:
			p.list = protofield.MustFind[restv2.JobInput, []string](f.Name)
			p.jobList = protofield.MustFind[restv2.Job, []string](f.Name)
			continue
		case f.Kind == domain.FlagField:
			p.jobFlag = protofield.MustFind[restv2.Job, bool](f.Name)
		case f.Required:
			p.jobText = protofield.MustFind[restv2.Job, string](f.Name)
		default:
			p.jobOptional = protofield.MustFind[restv2.Job, *string](f.Name)
		}
		p.scalar = protofield.MustFind[restv2.JobInput, *string](f.Name)
	}
	return out
}()

// jobMessage is a job in the v2.0 text form: a text or a word is the same
// string, not a copy (a word's type is a string's), a list shares the
// job's array, an amount is written as a decimal ("18.50"). A switch
// rather than a function a field: j stays on its caller's stack.
func jobMessage(j *domain.Job) *restv2.Job {
	made := &madeJob{message: restv2.Job{Id: j.ID, Date: j.PostedOn}}
	m := &made.message
	amounts := made.amounts[:0]
	for i, f := range fields {
		p := &textPlaces[i]
		switch {
		case f.Kind == domain.WordsField:
			*p.jobList.In(m) = f.WordList(&j.JobFields)
		case f.Kind == domain.AmountField:
			if c := f.Amount(&j.JobFields); c != nil {
				amounts = append(amounts, c.Decimal())
				*p.jobOptional.In(m) = &amounts[len(amounts)-1]
			}
		case f.Kind == domain.FlagField:
			*p.jobFlag.In(m) = f.Flag(&j.JobFields)
		case f.Required:
			*p.jobText.In(m), _ = f.Text(&j.JobFields)
		default:
			*p.jobOptional.In(m) = f.OptionalText(&j.JobFields)
		}
	}
	return m
}

// madeJob is a job's message and the amounts written for it, made in one
// allocation rather than three: a list of 10,000 jobs makes 10,000 of them.
type madeJob struct {
	message restv2.Job
	amounts [amountFields]string
}

// amountFields is how many of a job's fields are amounts: the pay's least
// and most.
const amountFields = 2

// unreadable records that field f's text breaks rule, quoting it.
func (r *Input) unreadable(f Field, raw *string, rule string) {
	r.Unread = append(r.Unread, Unread{Field: f, Value: raw,
		Message: fmt.Sprintf("%s: %s %s", RESTNames.Names[f], call.Quoted(rules.OrEmpty(raw)), rule)})
}

// sentText is field f's trimmed text, or false for an absent or blank
// one; a text PostgreSQL cannot store is unreadable.
func (r *Input) sentText(f Field) (string, bool) {
	raw := r.Sent[f]
	if raw == nil {
		return "", false
	}
	if call.Unstorable(*raw) {
		r.unreadable(f, raw, "contains a NUL character or bytes that are not UTF-8")
		return "", false
	}
	s := strings.TrimSpace(*raw)
	return s, s != ""
}

// readWord reads one of field f's words in any case and spacing.
func (r *Input) readWord(f Field) *string {
	s, ok := r.sentText(f)
	if !ok {
		return nil
	}
	words := fields[f].Words
	canon, found := rules.Canonical(words, s)
	if !found {
		r.unreadable(f, r.Sent[f], "is not one of "+strings.Join(words, ", "))
		return nil
	}
	return &canon
}

// readWords reads a list of field f's words, skipping blank values.
// However many values are wrong, the field gets one entry: it quotes the
// first wrong value and counts the others.
func readWords(r *Input, f Field, raw []string) []string {
	if len(raw) > MaxListValues {
		r.Unread = append(r.Unread, Unread{Field: f, Value: new(joinCut(raw, ", ", call.MaxEchoed)),
			Message: fmt.Sprintf("%s: %d values were sent; at most %d are accepted", RESTNames.Names[f], len(raw), MaxListValues)})
		return nil
	}
	words := fields[f].Words
	var out []string
	firstBad, bad := -1, 0
	for i := range raw {
		s := strings.TrimSpace(raw[i])
		if s == "" {
			continue
		}
		canon, found := rules.Canonical(words, s)
		if !found {
			if firstBad < 0 {
				firstBad = i
			}
			bad++
			continue
		}
		out = append(out, canon)
	}
	if bad > 0 {
		rule := "is not one of " + strings.Join(words, ", ")
		if bad > 1 {
			rule += fmt.Sprintf(" (nor are %d more of the values sent)", bad-1)
		}
		r.unreadable(f, &raw[firstBad], rule)
		return nil
	}
	return out
}

// readDecimal reads a non-negative amount with at most two decimal places
// as cents; its range is the rules'.
func (r *Input) readDecimal(f Field) *domain.Cents {
	s, ok := r.sentText(f)
	switch {
	case !ok:
		return nil
	case strings.HasPrefix(s, "-"):
		r.unreadable(f, r.Sent[f], mustNotBeNegative)
	case !isDecimal(s):
		r.unreadable(f, r.Sent[f], "must be a decimal number with at most two decimal places")
	default:
		return new(domain.ParseCents(s))
	}
	return nil
}

// readBoolean reads a boolean (rules.Bool), spaces around it allowed;
// absent is false.
func (r *Input) readBoolean(f Field) bool {
	raw := r.Sent[f]
	if raw == nil {
		return false
	}
	v, ok := rules.Bool(strings.TrimSpace(*raw))
	if !ok {
		r.unreadable(f, raw, "is not a boolean (true, false, 1 or 0)")
	}
	return v
}
