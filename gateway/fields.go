package gateway

import restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"

// jobScalars maps the wire name of each single-valued job input field to its
// place in the request message; both decoders use it.
var jobScalars = map[string]func(*restv2.JobInput) **string{
	"referenceNumber": func(j *restv2.JobInput) **string { return &j.ReferenceNumber },
	"title":           func(j *restv2.JobInput) **string { return &j.Title },
	"city":            func(j *restv2.JobInput) **string { return &j.City },
	"state":           func(j *restv2.JobInput) **string { return &j.State },
	"postalCode":      func(j *restv2.JobInput) **string { return &j.PostalCode },
	"driverType":      func(j *restv2.JobInput) **string { return &j.DriverType },
	"preference":      func(j *restv2.JobInput) **string { return &j.Preference },
	"freightType":     func(j *restv2.JobInput) **string { return &j.FreightType },
	"payAmountMin":    func(j *restv2.JobInput) **string { return &j.PayAmountMin },
	"payAmountMax":    func(j *restv2.JobInput) **string { return &j.PayAmountMax },
	"payFrequency":    func(j *restv2.JobInput) **string { return &j.PayFrequency },
	"description":     func(j *restv2.JobInput) **string { return &j.Description },
	"requirements":    func(j *restv2.JobInput) **string { return &j.Requirements },
	"twicOnly":        func(j *restv2.JobInput) **string { return &j.TwicOnly },
	"licenseClass":    func(j *restv2.JobInput) **string { return &j.LicenseClass },
}

// jobLists maps the multi-valued job input fields.
var jobLists = map[string]func(*restv2.JobInput) *[]string{
	"employmentType": func(j *restv2.JobInput) *[]string { return &j.EmploymentType },
	"routeType":      func(j *restv2.JobInput) *[]string { return &j.RouteType },
}

// setJobField stores one decoded value of field name. Unknown names are kept
// as extra fields, which the service reports as ignored values.
func setJobField(j *restv2.JobInput, name string, value *string) {
	if f, ok := jobScalars[name]; ok {
		*f(j) = value
		return
	}
	if f, ok := jobLists[name]; ok {
		if value != nil {
			*f(j) = append(*f(j), *value)
		}
		return
	}
	j.ExtraFields = append(j.ExtraFields, &restv2.ExtraField{Name: name, Value: value})
}
