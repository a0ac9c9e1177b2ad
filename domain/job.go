package domain

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// The words of a job's closed fields. Each list is in the order of its
// gRPC enum (proto/jobboard/v2/jobs.proto), whose values 1..n stand for
// them; the values are the spellings the v2.0 API shows and the store
// keeps.
type (
	// DriverType is who may drive the job.
	DriverType string
	// Preference is the kind of arrangement the job offers.
	Preference string
	// FreightType is what the job hauls.
	FreightType string
	// PayFrequency is what a pay amount is paid for.
	PayFrequency string
	// EmploymentType is a kind of employment the job offers.
	EmploymentType string
	// RouteType is a kind of route the job drives.
	RouteType string
	// LicenseClass is the commercial driver's license the job needs.
	LicenseClass string
)

var (
	driverTypes     = []DriverType{"Owner Operator", "Company Driver", "Student"}
	preferences     = []Preference{"Lease Purchase", "Team", "Team Solo", "Lease Purchase Team", "Lease Purchase Team Solo"}
	freightTypes    = []FreightType{"Box", "Car Hauler", "Drop and Hook", "Dry Bulk", "Dry Van", "Flatbed", "Hopper Bottom", "Intermodal", "Oil Field", "Oversize Load", "Refrigerated", "Tanker", "Yard Spotter"}
	payFrequencies  = []PayFrequency{"Hourly", "Weekly", "Per Mile"}
	employmentTypes = []EmploymentType{"Full-Time", "Part-Time", "Temporary", "Permanent"}
	routeTypes      = []RouteType{"Dedicated", "Local", "LTL", "OTR", "Regional"}
	licenseClasses  = []LicenseClass{"A", "B", "C", "None"}
)

// vocabularies are the word types' words, by type: the job fields of a
// word type (domain.JobFieldList) take theirs from here.
var vocabularies = map[reflect.Type][]string{
	reflect.TypeFor[DriverType]():     Names(driverTypes),
	reflect.TypeFor[Preference]():     Names(preferences),
	reflect.TypeFor[FreightType]():    Names(freightTypes),
	reflect.TypeFor[PayFrequency]():   Names(payFrequencies),
	reflect.TypeFor[EmploymentType](): Names(employmentTypes),
	reflect.TypeFor[RouteType]():      Names(routeTypes),
	reflect.TypeFor[LicenseClass]():   Names(licenseClasses),
}

// DriverTypes returns every driver type, in enum order.
func DriverTypes() []DriverType { return slices.Clone(driverTypes) }

// Preferences returns every preference, in enum order.
func Preferences() []Preference { return slices.Clone(preferences) }

// FreightTypes returns every freight type, in enum order.
func FreightTypes() []FreightType { return slices.Clone(freightTypes) }

// PayFrequencies returns every pay frequency, in enum order.
func PayFrequencies() []PayFrequency { return slices.Clone(payFrequencies) }

// EmploymentTypes returns every employment type, in enum order.
func EmploymentTypes() []EmploymentType { return slices.Clone(employmentTypes) }

// RouteTypes returns every route type, in enum order.
func RouteTypes() []RouteType { return slices.Clone(routeTypes) }

// LicenseClasses returns every license class, in enum order.
func LicenseClasses() []LicenseClass { return slices.Clone(licenseClasses) }

// jobStates are the USPS codes of the 50 states, DC and the five inhabited
// territories: where a job may be.
var jobStates = []string{"AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "FL", "GA", "HI", "ID", "IL", "IN", "IA", "KS", "KY", "LA", "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM", "NY", "NC", "ND", "OH", "OK", "OR", "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA", "WV", "WI", "WY", "DC", "PR", "VI", "GU", "AS", "MP"}

// JobStates returns the codes of every place a job may be, as IsJobState
// takes them.
func JobStates() []string { return slices.Clone(jobStates) }

// IsJobState reports whether code is the upper-case USPS code of a place a
// job may be (a state, DC or an inhabited territory).
func IsJobState(code string) bool { return slices.Contains(jobStates, code) }

// Cents is an amount of money in hundredths of a dollar: pay is exact, so
// it is never a float.
type Cents int64

// MaxPay bounds a pay amount: $1,000,000.00, well above any real wage and
// inside the store's numeric(9,2) column.
const MaxPay Cents = 1_000_000_00

// Decimal writes c as dollars with two decimal places ("18.50"), the form
// the v2.0 API has always answered; a negative amount keeps its sign.
func (c Cents) Decimal() string {
	// One allocation: every answer listing jobs writes two amounts a job.
	var buf [24]byte
	b := buf[:0]
	u := uint64(c)
	if c < 0 {
		b, u = append(b, '-'), uint64(-c)
	}
	b = strconv.AppendUint(b, u/100, 10)
	b = append(b, '.', byte('0'+u%100/10), byte('0'+u%10))
	return string(b)
}

// JobFields are what an employer says of a job, once the job rules have
// accepted them: every closed field holds one of its words, pay amounts
// are cents, and optional fields not given are nil.
type JobFields struct {
	// ReferenceNumber is the employer's own key of the job: 1-64 letters
	// and digits, unique among the account's active jobs.
	ReferenceNumber string  `job:"referenceNumber"`
	Title           string  `job:"title"`
	City            *string `job:"city"`
	// State is a USPS code, upper case.
	State string `job:"state"`
	// PostalCode is a ZIP code, 12345 or 12345-6789.
	PostalCode   *string       `job:"postalCode"`
	DriverType   DriverType    `job:"driverType"`
	Preference   *Preference   `job:"preference"`
	FreightType  FreightType   `job:"freightType"`
	PayMin       *Cents        `job:"payAmountMin"`
	PayMax       *Cents        `job:"payAmountMax"`
	PayFrequency *PayFrequency `job:"payFrequency"`
	// EmploymentType and RouteType hold each word once, in the order sent.
	EmploymentType []EmploymentType `job:"employmentType"`
	RouteType      []RouteType      `job:"routeType"`
	// Description and Requirements are sanitised HTML of the basic tags.
	Description  string        `job:"description,html"`
	Requirements *string       `job:"requirements,html"`
	TwicOnly     bool          `job:"twicOnly"`
	LicenseClass *LicenseClass `job:"licenseClass"`
}

// Job is a stored, active job.
type Job struct {
	ID int64
	JobFields
	// PostedOn is the UTC day the job was added, as YYYY-MM-DD.
	PostedOn string
}

// ParseCents reads a non-negative decimal of at most two places, as the
// job rules have matched it ("18.5", "18.50", "0018"), as cents. An amount
// too long for any column comes out huge rather than wrapping, so a range
// check still refuses it.
func ParseCents(decimal string) Cents {
	whole, frac, _ := strings.Cut(decimal, ".")
	whole = strings.TrimLeft(whole, "0")
	if len(whole) > 12 {
		return 1 << 62
	}
	w, _ := strconv.ParseInt("0"+whole, 10, 64)
	f, _ := strconv.ParseInt((frac + "00")[:2], 10, 64)
	return Cents(w*100 + f)
}

// JobInput is a job as a client sent it, read into the domain's types but
// not yet checked by the job rules: texts as sent (untrimmed), nil for a
// field not sent or not readable, closed fields as words. The rules turn
// it into JobFields.
type JobInput struct {
	ReferenceNumber *string          `job:"referenceNumber"`
	Title           *string          `job:"title"`
	City            *string          `job:"city"`
	State           *string          `job:"state"`
	PostalCode      *string          `job:"postalCode"`
	DriverType      *DriverType      `job:"driverType"`
	Preference      *Preference      `job:"preference"`
	FreightType     *FreightType     `job:"freightType"`
	PayMin          *Cents           `job:"payAmountMin"`
	PayMax          *Cents           `job:"payAmountMax"`
	PayFrequency    *PayFrequency    `job:"payFrequency"`
	EmploymentType  []EmploymentType `job:"employmentType"`
	RouteType       []RouteType      `job:"routeType"`
	Description     *string          `job:"description"`
	Requirements    *string          `job:"requirements"`
	TwicOnly        bool             `job:"twicOnly"`
	LicenseClass    *LicenseClass    `job:"licenseClass"`
}
