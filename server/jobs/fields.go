package jobs

import (
	"strconv"

	"github.com/truckjobs/jobboard/domain"
)

// Field is one field of a submitted job, in the order the rules check
// them: a job's problems are listed in this order, one per field.
type Field int

// The fields of a job.
const (
	FieldReferenceNumber Field = iota
	FieldTitle
	FieldCity
	FieldState
	FieldPostalCode
	FieldDriverType
	FieldPreference
	FieldFreightType
	FieldPayMin
	FieldPayMax
	FieldPayFrequency
	FieldEmploymentType
	FieldRouteType
	FieldDescription
	FieldRequirements
	FieldTwicOnly
	FieldLicenseClass
	fieldCount
)

// RESTNames are the fields' names in the v2.0 API, which its error
// entries and messages use, and its pay amounts are dollars.
var RESTNames = Naming{
	Names: [fieldCount]string{"referenceNumber", "title", "city", "state", "postalCode", "driverType", "preference",
		"freightType", "payAmountMin", "payAmountMax", "payFrequency", "employmentType", "routeType", "description",
		"requirements", "twicOnly", "licenseClass"},
	Amount: func(c domain.Cents) string { return strconv.FormatInt(int64(c/100), 10) },
}

// Naming is how a caller's API speaks of a job: what it calls each field,
// and how it writes an amount in a rule.
type Naming struct {
	// Names are the fields' names, by Field.
	Names [fieldCount]string
	// Amount writes a whole amount in the API's unit.
	Amount func(domain.Cents) string
}

// Input is one submitted job: its fields in the domain's types, and what
// the caller's adapter saw of them.
type Input struct {
	domain.JobInput
	// Sent is each field's value as the caller sent it, for messages and
	// entries; nil when it was not sent. Indexed by Field.
	Sent [fieldCount]*string
	// Unread are the fields the adapter could not read into the domain's
	// types (their values in JobInput are nil), with the problem to report
	// in their place.
	Unread []Unread
	// Repeated and Extra are the members the job named more than once, and
	// those that are none of a job's (the v2.0 API reads such bodies; the
	// gRPC API has no way to send them).
	Repeated, Extra []Member
}

// Unread is a field an adapter could not read, with its problem.
type Unread struct {
	Field Field
	// Missing files the problem among the missing fields, not the invalid.
	Missing bool
	// Value is what the entry shows of the value; Message the whole message.
	Value   *string
	Message string
}

// Member is a named value of a sent job outside its fields.
type Member struct {
	Name  string
	Value *string
}
