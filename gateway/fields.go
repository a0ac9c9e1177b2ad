package gateway

import restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"

// jobField is one job input field the request message has a place for:
// a single value (scalar) or a repeated one (list).
type jobField struct {
	name   string
	scalar func(*restv2.JobInput) **string
	list   func(*restv2.JobInput) *[]string
}

// jobFields maps each job input field's wire name to its place in the
// request message; both decoders use it, one lookup a member.
var jobFields = fieldsByName(
	scalarField("referenceNumber", func(j *restv2.JobInput) **string { return &j.ReferenceNumber }),
	scalarField("title", func(j *restv2.JobInput) **string { return &j.Title }),
	scalarField("city", func(j *restv2.JobInput) **string { return &j.City }),
	scalarField("state", func(j *restv2.JobInput) **string { return &j.State }),
	scalarField("postalCode", func(j *restv2.JobInput) **string { return &j.PostalCode }),
	scalarField("driverType", func(j *restv2.JobInput) **string { return &j.DriverType }),
	scalarField("preference", func(j *restv2.JobInput) **string { return &j.Preference }),
	scalarField("freightType", func(j *restv2.JobInput) **string { return &j.FreightType }),
	scalarField("payAmountMin", func(j *restv2.JobInput) **string { return &j.PayAmountMin }),
	scalarField("payAmountMax", func(j *restv2.JobInput) **string { return &j.PayAmountMax }),
	scalarField("payFrequency", func(j *restv2.JobInput) **string { return &j.PayFrequency }),
	scalarField("description", func(j *restv2.JobInput) **string { return &j.Description }),
	scalarField("requirements", func(j *restv2.JobInput) **string { return &j.Requirements }),
	scalarField("twicOnly", func(j *restv2.JobInput) **string { return &j.TwicOnly }),
	scalarField("licenseClass", func(j *restv2.JobInput) **string { return &j.LicenseClass }),
	listField("employmentType", func(j *restv2.JobInput) *[]string { return &j.EmploymentType }),
	listField("routeType", func(j *restv2.JobInput) *[]string { return &j.RouteType }),
)

func scalarField(name string, place func(*restv2.JobInput) **string) *jobField {
	return &jobField{name: name, scalar: place}
}

func listField(name string, place func(*restv2.JobInput) *[]string) *jobField {
	return &jobField{name: name, list: place}
}

func fieldsByName(fields ...*jobField) map[string]*jobField {
	m := make(map[string]*jobField, len(fields))
	for _, f := range fields {
		m[f.name] = f
	}
	return m
}

// set stores one decoded value of field f (nil for an unknown name, kept
// as an extra field under name, which the service reports as ignored). A
// null item of a list is dropped.
func (f *jobField) set(j *restv2.JobInput, name string, value *string) {
	switch {
	case f == nil:
		j.ExtraFields = append(j.ExtraFields, &restv2.ExtraField{Name: name, Value: value})
	case f.scalar != nil:
		*f.scalar(j) = value
	case value != nil:
		*f.list(j) = append(*f.list(j), *value)
	}
}
