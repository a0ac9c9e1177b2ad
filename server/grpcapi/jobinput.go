package grpcapi

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/truckjobs/jobboard/domain"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/jobs"
	"github.com/truckjobs/jobboard/server/natural"
)

// grpcJobNames are the fields' names in jobboard.v2.JobInput, as the
// entries of a post name them; its pay amounts are cents.
var grpcJobNames = func() jobs.Naming {
	n := jobs.RESTNames
	n.Names[jobs.FieldPayMin], n.Names[jobs.FieldPayMax] = "payAmountMinCents", "payAmountMaxCents"
	n.Amount = func(c domain.Cents) string { return strconv.FormatInt(int64(c), 10) }
	return n
}()

// jobInput reads a natural job into the domain's types: enum values as
// their words, amounts as the cents they are, with nothing to parse. An
// enum number outside its vocabulary is unread, quoted as its digits;
// UNSPECIFIED is a field not sent.
func jobInput(in *jobboardv2.JobInput) jobs.Input {
	var r jobs.Input
	r.ReferenceNumber, r.Title, r.City = new(in.GetReferenceNumber()), new(in.GetTitle()), in.City
	r.State, r.PostalCode = new(in.GetState()), in.PostalCode
	r.Description, r.Requirements, r.TwicOnly = new(in.GetDescription()), in.Requirements, in.GetTwicOnly()
	r.Sent[jobs.FieldReferenceNumber], r.Sent[jobs.FieldTitle], r.Sent[jobs.FieldCity] = r.ReferenceNumber, r.Title, r.City
	r.Sent[jobs.FieldState], r.Sent[jobs.FieldPostalCode] = r.State, r.PostalCode
	r.Sent[jobs.FieldDescription], r.Sent[jobs.FieldRequirements] = r.Description, r.Requirements
	r.Sent[jobs.FieldTwicOnly] = new(strconv.FormatBool(in.GetTwicOnly()))
	r.DriverType = word[domain.DriverType](&r, jobs.FieldDriverType, natural.DriverTypes, in.GetDriverType())
	r.Preference = word[domain.Preference](&r, jobs.FieldPreference, natural.Preferences, in.GetPreference())
	r.FreightType = word[domain.FreightType](&r, jobs.FieldFreightType, natural.FreightTypes, in.GetFreightType())
	r.PayFrequency = word[domain.PayFrequency](&r, jobs.FieldPayFrequency, natural.PayFrequencies, in.GetPayFrequency())
	r.LicenseClass = word[domain.LicenseClass](&r, jobs.FieldLicenseClass, natural.LicenseClasses, in.GetLicenseClass())
	r.EmploymentType = wordList[domain.EmploymentType](&r, jobs.FieldEmploymentType, natural.EmploymentTypes, in.GetEmploymentType())
	r.RouteType = wordList[domain.RouteType](&r, jobs.FieldRouteType, natural.RouteTypes, in.GetRouteType())
	r.PayMin = amount(&r, jobs.FieldPayMin, in.PayAmountMinCents)
	r.PayMax = amount(&r, jobs.FieldPayMax, in.PayAmountMaxCents)
	return r
}

// word is an enum value's word; nil for UNSPECIFIED, and for a number
// outside the vocabulary, which is unread.
func word[T ~string, E ~int32](r *jobs.Input, f jobs.Field, v natural.Vocabulary[E], e E) *T {
	if e == 0 {
		return nil
	}
	label, ok := v.Label(e)
	if !ok {
		r.Sent[f] = new(strconv.Itoa(int(e)))
		unknownValue(r, f, v, r.Sent[f], "")
		return nil
	}
	r.Sent[f] = new(label)
	return new(T(label))
}

// wordList is a list of enum values' words, UNSPECIFIED skipped. Numbers
// outside the vocabulary make the field unread, with one entry quoting the
// first and counting the others, as are lists longer than the v2.0 API
// takes.
func wordList[T ~string, E ~int32](r *jobs.Input, f jobs.Field, v natural.Vocabulary[E], es []E) []T {
	if len(es) > jobs.MaxListValues {
		r.Unread = append(r.Unread, jobs.Unread{Field: f, Value: new(numbersCut(es)),
			Message: fmt.Sprintf("%s: %d values were sent; at most %d are accepted", grpcJobNames.Names[f], len(es), jobs.MaxListValues)})
		return nil
	}
	var out []T
	var firstBad *string
	bad := 0
	for _, e := range es {
		if e == 0 {
			continue
		}
		label, ok := v.Label(e)
		if !ok {
			if firstBad == nil {
				firstBad = new(strconv.Itoa(int(e)))
			}
			bad++
			continue
		}
		out = append(out, T(label))
	}
	if bad > 0 {
		more := ""
		if bad > 1 {
			more = fmt.Sprintf(" (nor are %d more of the values sent)", bad-1)
		}
		unknownValue(r, f, v, firstBad, more)
		return nil
	}
	return out
}

// numbersCut writes enum numbers comma-separated, as far as an entry
// echoes (call.MaxEchoed): a list as long as a request may hold is never
// written whole just to be cut.
func numbersCut[E ~int32](es []E) string {
	var b strings.Builder
	for i, e := range es {
		if b.Len() > call.MaxEchoed {
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(int(e)))
	}
	return call.Truncate(b.String(), call.MaxEchoed)
}

// unknownValue records an enum number outside the vocabulary.
func unknownValue[E ~int32](r *jobs.Input, f jobs.Field, v natural.Vocabulary[E], sent *string, more string) {
	r.Unread = append(r.Unread, jobs.Unread{Field: f, Value: sent,
		Message: fmt.Sprintf("%s: %s is not one of %s%s", grpcJobNames.Names[f], call.Quoted(*sent), strings.Join(v.Labels(), ", "), more)})
}

// amount is a pay amount in cents, as sent.
func amount(r *jobs.Input, f jobs.Field, cents *int64) *domain.Cents {
	if cents == nil {
		return nil
	}
	r.Sent[f] = new(strconv.FormatInt(*cents, 10))
	return new(domain.Cents(*cents))
}
