package natural

import (
	"github.com/truckjobs/jobboard/domain"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
)

// Vocabulary is a closed set of labels and the enum whose values 1..n
// stand for them, in order; the zero value (UNSPECIFIED) has no label.
type Vocabulary[E ~int32] struct{ labels []string }

// Labels returns the labels in canonical spelling, in enum order.
func (v Vocabulary[E]) Labels() []string { return append([]string(nil), v.labels...) }

// Label returns the label of e; false for UNSPECIFIED or an unknown number.
func (v Vocabulary[E]) Label(e E) (string, bool) {
	if e <= 0 || int(e) > len(v.labels) {
		return "", false
	}
	return v.labels[e-1], true
}

// Value returns the enum value of a label in canonical spelling; false for
// a label outside the vocabulary.
func (v Vocabulary[E]) Value(label string) (E, bool) {
	for i, l := range v.labels {
		if l == label {
			return E(i + 1), true
		}
	}
	return 0, false
}

// The vocabularies, in the order of their enums in proto/jobboard/v2.
var (
	DriverTypes     = vocabularyOf[jobboardv2.DriverType](domain.DriverTypes())
	Preferences     = vocabularyOf[jobboardv2.Preference](domain.Preferences())
	FreightTypes    = vocabularyOf[jobboardv2.FreightType](domain.FreightTypes())
	PayFrequencies  = vocabularyOf[jobboardv2.PayFrequency](domain.PayFrequencies())
	EmploymentTypes = vocabularyOf[jobboardv2.EmploymentType](domain.EmploymentTypes())
	RouteTypes      = vocabularyOf[jobboardv2.RouteType](domain.RouteTypes())
	LicenseClasses  = vocabularyOf[jobboardv2.LicenseClass](domain.LicenseClasses())
	Certifications  = Vocabulary[jobboardv2.Certification]{[]string{"Doubles/Triples (T)", "HAZMAT (H)", "Tank Vehicles (N)", "Tanker + HAZMAT (X)"}}
	// CertificationCodes are the one-letter codes of Certifications, in the same order.
	CertificationCodes = Vocabulary[jobboardv2.Certification]{[]string{"T", "H", "N", "X"}}
	// JobImportStatuses maps domain.ImportStatuses onto the gRPC enum.
	JobImportStatuses = vocabularyOf[jobboardv2.JobImportStatus](domain.ImportStatuses())
)

// vocabularyOf is the vocabulary of a domain type's values, listed in the
// order of the enum E.
func vocabularyOf[E ~int32, T ~string](values []T) Vocabulary[E] {
	return Vocabulary[E]{domain.Names(values)}
}

// optionalLabel is the label of e as an optional text: nil for UNSPECIFIED,
// and the enum number as text for a number outside the vocabulary, which
// the validation then refuses with the value named.
func optionalLabel[E ~int32](v Vocabulary[E], e E) *string {
	if e == 0 {
		return nil
	}
	if l, ok := v.Label(e); ok {
		return &l
	}
	return new(itoa(int64(e)))
}

// labels maps a list of enum values to their labels, as optionalLabel does.
func labels[E ~int32](v Vocabulary[E], es []E) []string {
	return each(es, func(e E) string {
		if l := optionalLabel(v, e); l != nil {
			return *l
		}
		return ""
	})
}

// values maps stored labels to enum values; a label outside the
// vocabulary (never stored: the validation accepts only these) is UNSPECIFIED.
func values[E ~int32](v Vocabulary[E], ls []string) []E {
	return each(ls, func(l string) E {
		e, _ := v.Value(l)
		return e
	})
}

// each converts every element of a list, keeping their order.
func each[T, U any](in []T, convert func(T) U) []U {
	out := make([]U, len(in))
	for i, x := range in {
		out[i] = convert(x)
	}
	return out
}

// valueOf is the enum value of an optional stored label.
func valueOf[E ~int32](v Vocabulary[E], l *string) E {
	if l == nil {
		return 0
	}
	e, _ := v.Value(*l)
	return e
}
