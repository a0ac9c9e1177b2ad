package jobs

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/truckjobs/jobboard/domain"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/internal/rules"
	"github.com/truckjobs/jobboard/server/call"
)

// This file reads a job in the v2.0 text form, where every value is text,
// into the domain's types: closed fields in any case and spacing
// (rules.Canonical), amounts as decimals, booleans as rules.Bool spells
// them. What it cannot read it reports in the v2.0 API's words; the job
// rules do the rest.

var decimalPattern = regexp.MustCompile(`^\d+(?:\.\d{1,2})?$`)

// MaxListValues bounds employmentType and routeType (docs/api.md, Limits
// against abuse): each has at most five distinct values, so more can only
// be a mistake.
const MaxListValues = 10

// ReadText reads a job of the v2.0 text form.
func ReadText(in *restv2.JobInput) Input {
	r := Input{}
	r.Sent = [fieldCount]*string{in.ReferenceNumber, in.Title, in.City, in.State, in.PostalCode, in.DriverType,
		in.Preference, in.FreightType, in.PayAmountMin, in.PayAmountMax, in.PayFrequency, nil, nil,
		in.Description, in.Requirements, in.TwicOnly, in.LicenseClass}
	r.ReferenceNumber, r.Title, r.City, r.State, r.PostalCode = in.ReferenceNumber, in.Title, in.City, in.State, in.PostalCode
	r.Description, r.Requirements = in.Description, in.Requirements
	r.DriverType = readWord(&r, FieldDriverType, driverTypes)
	r.Preference = readWord(&r, FieldPreference, preferences)
	r.FreightType = readWord(&r, FieldFreightType, freightTypes)
	r.PayMin = r.readDecimal(FieldPayMin)
	r.PayMax = r.readDecimal(FieldPayMax)
	r.PayFrequency = readWord(&r, FieldPayFrequency, payFrequencies)
	r.EmploymentType = readWords(&r, FieldEmploymentType, in.EmploymentType, employment)
	r.RouteType = readWords(&r, FieldRouteType, in.RouteType, routeTypes)
	r.TwicOnly = r.readBoolean(FieldTwicOnly)
	r.LicenseClass = readWord(&r, FieldLicenseClass, licenseClasses)
	for _, x := range in.RepeatedFields {
		r.Repeated = append(r.Repeated, Member{Name: x.GetName(), Value: x.Value})
	}
	for _, x := range in.ExtraFields {
		r.Extra = append(r.Extra, Member{Name: x.GetName(), Value: x.Value})
	}
	return r
}

// unreadable records that field f's text breaks rule, quoting it.
func (r *Input) unreadable(f Field, raw *string, rule string) {
	r.Unread = append(r.Unread, Unread{Field: f, Value: raw,
		Message: fmt.Sprintf("%s: %s %s", RESTNames.Names[f], call.Quoted(rules.OrEmpty(raw)), rule)})
}

// sentText is field f's trimmed text, or nil for an absent or blank one; a
// text PostgreSQL cannot store is unreadable.
func (r *Input) sentText(f Field) *string {
	raw := r.Sent[f]
	if raw == nil {
		return nil
	}
	if call.Unstorable(*raw) {
		r.unreadable(f, raw, "contains a NUL character or bytes that are not UTF-8")
		return nil
	}
	if s := strings.TrimSpace(*raw); s != "" {
		return &s
	}
	return nil
}

// readWord reads one of v's words in any case and spacing.
func readWord[T ~string](r *Input, f Field, v vocabulary[T]) *T {
	s := r.sentText(f)
	if s == nil {
		return nil
	}
	canon, found := rules.Canonical(v.names, *s)
	if !found {
		r.unreadable(f, r.Sent[f], "is not one of "+strings.Join(v.names, ", "))
		return nil
	}
	return new(T(canon))
}

// readWords reads a list of v's words, skipping blank values. However many
// values are wrong, the field gets one entry: it quotes the first wrong
// value and counts the others.
func readWords[T ~string](r *Input, f Field, raw []string, v vocabulary[T]) []T {
	if len(raw) > MaxListValues {
		r.Unread = append(r.Unread, Unread{Field: f, Value: new(joinCut(raw, ", ", call.MaxEchoed)),
			Message: fmt.Sprintf("%s: %d values were sent; at most %d are accepted", RESTNames.Names[f], len(raw), MaxListValues)})
		return nil
	}
	var out []T
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
		out = append(out, T(canon))
	}
	if bad > 0 {
		rule := "is not one of " + strings.Join(v.names, ", ")
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
	s := r.sentText(f)
	switch {
	case s == nil:
		return nil
	case strings.HasPrefix(*s, "-"):
		r.unreadable(f, r.Sent[f], mustNotBeNegative)
	case !decimalPattern.MatchString(*s):
		r.unreadable(f, r.Sent[f], "must be a decimal number with at most two decimal places")
	default:
		return new(domain.ParseCents(*s))
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
