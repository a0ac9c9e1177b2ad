package natural

import (
	"strconv"

	"github.com/truckjobs/jobboard/domain"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
)

// JobText is a natural job in the v2.0 text form, as an import stores its
// jobs until it runs (store.ImportJob): an enum number outside its
// vocabulary is kept as its digits, which the rules then refuse by name.
func JobText(in *jobboardv2.JobInput) *restv2.JobInput {
	out := &restv2.JobInput{
		ReferenceNumber: new(in.GetReferenceNumber()), Title: new(in.GetTitle()), City: in.City,
		State: new(in.GetState()), PostalCode: in.PostalCode,
		DriverType:     optionalLabel(DriverTypes, in.GetDriverType()),
		Preference:     optionalLabel(Preferences, in.GetPreference()),
		FreightType:    optionalLabel(FreightTypes, in.GetFreightType()),
		PayFrequency:   optionalLabel(PayFrequencies, in.GetPayFrequency()),
		EmploymentType: labels(EmploymentTypes, in.GetEmploymentType()),
		RouteType:      labels(RouteTypes, in.GetRouteType()),
		Description:    new(in.GetDescription()), Requirements: in.Requirements,
		TwicOnly:     new(strconv.FormatBool(in.GetTwicOnly())),
		LicenseClass: optionalLabel(LicenseClasses, in.GetLicenseClass()),
	}
	if in.PayAmountMinCents != nil {
		out.PayAmountMin = new(domain.Cents(in.GetPayAmountMinCents()).Decimal())
	}
	if in.PayAmountMaxCents != nil {
		out.PayAmountMax = new(domain.Cents(in.GetPayAmountMaxCents()).Decimal())
	}
	return out
}

// JobTexts converts a list of jobs.
func JobTexts(in []*jobboardv2.JobInput) []*restv2.JobInput { return each(in, JobText) }

// Job is a stored job in the natural form: its words as enum values, its
// pay as cents, straight from the domain's.
func Job(j *domain.Job) *jobboardv2.Job {
	out := &jobboardv2.Job{
		Id: j.ID, Date: j.PostedOn, ReferenceNumber: j.ReferenceNumber, Title: j.Title,
		City: j.City, State: j.State, PostalCode: j.PostalCode,
		DriverType:     wordValue(DriverTypes, j.DriverType),
		Preference:     optionalWordValue(Preferences, j.Preference),
		FreightType:    wordValue(FreightTypes, j.FreightType),
		PayFrequency:   optionalWordValue(PayFrequencies, j.PayFrequency),
		EmploymentType: each(j.EmploymentType, func(w domain.EmploymentType) jobboardv2.EmploymentType { return wordValue(EmploymentTypes, w) }),
		RouteType:      each(j.RouteType, func(w domain.RouteType) jobboardv2.RouteType { return wordValue(RouteTypes, w) }),
		Description:    j.Description, Requirements: j.Requirements, TwicOnly: j.TwicOnly,
		LicenseClass: optionalWordValue(LicenseClasses, j.LicenseClass),
	}
	if j.PayMin != nil {
		out.PayAmountMinCents = new(int64(*j.PayMin))
	}
	if j.PayMax != nil {
		out.PayAmountMaxCents = new(int64(*j.PayMax))
	}
	return out
}

// Jobs converts a list of jobs.
func Jobs(in []domain.Job) []*jobboardv2.Job {
	out := make([]*jobboardv2.Job, len(in))
	for i := range in {
		out[i] = Job(&in[i])
	}
	return out
}

// renamedFields are the lenient form's field names whose natural field has
// another name, and how an entry's value reads in the natural field.
var renamedFields = map[string]struct {
	name  string
	value func(string) string
}{
	"payAmountMin": {"payAmountMinCents", centsText},
	"payAmountMax": {"payAmountMaxCents", centsText},
}

// centsText is a decimal the adapter wrote from cents, as those cents.
func centsText(decimal string) string {
	neg := len(decimal) > 0 && decimal[0] == '-'
	if neg {
		decimal = decimal[1:]
	}
	c := int64(domain.ParseCents(decimal))
	if neg {
		c = -c
	}
	return itoa(c)
}

// Entries converts problem entries, naming the natural fields.
func Entries(in []*restv2.BatchEntry) []*jobboardv2.BatchEntry { return each(in, entry) }

func entry(e *restv2.BatchEntry) *jobboardv2.BatchEntry {
	out := &jobboardv2.BatchEntry{Index: e.Index, Id: e.Id, ReferenceNumber: e.ReferenceNumber,
		Field: e.Field, Value: e.Value, Message: e.GetMessage()}
	if r, ok := renamedFields[e.GetField()]; ok {
		out.Field = new(r.name)
		if e.Value != nil {
			out.Value = new(r.value(e.GetValue()))
		}
	}
	return out
}

// Summary converts a delete's or a post's counts and problems.
func Summary(s *restv2.BatchSummary) *jobboardv2.BatchSummary {
	if s == nil {
		return nil
	}
	out := &jobboardv2.BatchSummary{Unchanged: s.Unchanged, Updated: s.Updated, Added: s.Added,
		Deleted: s.Deleted, Errors: s.Errors, ErrorMessages: ErrorMessages(s.ErrorMessages)}
	return out
}

// ErrorMessages converts the four lists of problems.
func ErrorMessages(m *restv2.ErrorMessages) *jobboardv2.ErrorMessages {
	if m == nil {
		return nil
	}
	list := func(l *restv2.ErrorList) *jobboardv2.ErrorList {
		if l == nil {
			return nil
		}
		return &jobboardv2.ErrorList{Errors: Entries(l.Errors)}
	}
	return &jobboardv2.ErrorMessages{MissingErrors: list(m.MissingErrors), InvalidErrors: list(m.InvalidErrors),
		DuplicationErrors: list(m.DuplicationErrors), LimitErrors: list(m.LimitErrors)}
}
