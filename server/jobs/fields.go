package jobs

import (
	"strconv"

	"github.com/truckjobs/jobboard/domain"
)

// Field is one field of a submitted job: its place in
// domain.JobFieldList(), the order the rules check them in, so a job's
// problems are listed in this order, one per field.
type Field int

// fields are the job's fields, by Field.
var fields = domain.JobFieldList()

// FieldNamed is the field of that v2.0 name; it panics for a name no
// field has, which is a mistake in the program.
func FieldNamed(name string) Field {
	for i, f := range fields {
		if f.Name == name {
			return Field(i)
		}
	}
	panic("jobs: no job field is named " + strconv.Quote(name))
}

// RESTNames are the fields' names in the v2.0 API, which its error
// entries and messages use, and its pay amounts are dollars.
var RESTNames = Naming{
	Names:  fieldNames(""),
	Amount: func(c domain.Cents) string { return strconv.FormatInt(int64(c/100), 10) },
}

// GRPCNames are the fields' names in jobboard.v2.JobInput, whose pay
// amounts are cents, named so.
var GRPCNames = Naming{
	Names:  fieldNames("Cents"),
	Amount: func(c domain.Cents) string { return strconv.FormatInt(int64(c), 10) },
}

// fieldNames are the fields' v2.0 names, an amount's with amountSuffix.
func fieldNames(amountSuffix string) []string {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name
		if f.Kind == domain.AmountField {
			names[i] += amountSuffix
		}
	}
	return names
}

// Naming is how a caller's API speaks of a job: what it calls each field,
// and how it writes an amount in a rule.
type Naming struct {
	// Names are the fields' names, by Field.
	Names []string
	// Amount writes a whole amount in the API's unit.
	Amount func(domain.Cents) string
}

// Input is one submitted job: its fields in the domain's types, and what
// the caller's adapter saw of them.
type Input struct {
	domain.JobInput
	// Sent is each field's value as the caller sent it, for messages and
	// entries; nil when it was not sent. Indexed by Field.
	Sent []*string
	// Unread are the fields the adapter could not read into the domain's
	// types (their values in JobInput are nil), with the problem to report
	// in their place.
	Unread []Unread
	// Repeated and Extra are the members the job named more than once, and
	// those that are none of a job's (the v2.0 API reads such bodies; the
	// gRPC API has no way to send them).
	Repeated, Extra []Member
}

// NewInput is an input with nothing sent yet.
func NewInput() Input { return Input{Sent: make([]*string, len(fields))} }

// Unread is a field an adapter could not read, with its problem.
type Unread struct {
	Field Field
	// Value is what the entry shows of the value; Message the whole message.
	Value   *string
	Message string
}

// Member is a named value of a sent job outside its fields.
type Member struct {
	Name  string
	Value *string
}
