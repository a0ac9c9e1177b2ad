package gateway

import jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"

// jobScalars maps the wire name of each single-valued job input field to its
// place in the request message; both decoders use it.
var jobScalars = map[string]func(*jobboardv2.JobInput) **string{
	"referenceNumber": func(j *jobboardv2.JobInput) **string { return &j.ReferenceNumber },
	"title":           func(j *jobboardv2.JobInput) **string { return &j.Title },
	"city":            func(j *jobboardv2.JobInput) **string { return &j.City },
	"state":           func(j *jobboardv2.JobInput) **string { return &j.State },
	"postalCode":      func(j *jobboardv2.JobInput) **string { return &j.PostalCode },
	"driverType":      func(j *jobboardv2.JobInput) **string { return &j.DriverType },
	"preference":      func(j *jobboardv2.JobInput) **string { return &j.Preference },
	"freightType":     func(j *jobboardv2.JobInput) **string { return &j.FreightType },
	"payAmountMin":    func(j *jobboardv2.JobInput) **string { return &j.PayAmountMin },
	"payAmountMax":    func(j *jobboardv2.JobInput) **string { return &j.PayAmountMax },
	"payFrequency":    func(j *jobboardv2.JobInput) **string { return &j.PayFrequency },
	"description":     func(j *jobboardv2.JobInput) **string { return &j.Description },
	"requirements":    func(j *jobboardv2.JobInput) **string { return &j.Requirements },
	"twicOnly":        func(j *jobboardv2.JobInput) **string { return &j.TwicOnly },
	"licenseClass":    func(j *jobboardv2.JobInput) **string { return &j.LicenseClass },
}

// jobLists maps the multi-valued job input fields.
var jobLists = map[string]func(*jobboardv2.JobInput) *[]string{
	"employmentType": func(j *jobboardv2.JobInput) *[]string { return &j.EmploymentType },
	"routeType":      func(j *jobboardv2.JobInput) *[]string { return &j.RouteType },
}

// setJobField stores one decoded value of field name. Unknown names are kept
// as extra fields, which the service reports as ignored values.
func setJobField(j *jobboardv2.JobInput, name string, value *string) {
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
	j.ExtraFields = append(j.ExtraFields, &jobboardv2.ExtraField{Name: name, Value: value})
}
