package store

import (
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/lib/pq"

	"github.com/truckjobs/jobboard/domain"
)

// jobFieldTable is the one list of the employer-controlled job columns. The
// select list, the batch statements' columns, unnest names, casts and
// arrays, and JobFields.Equal all come from it, so a new job field is a
// row here (besides its JobFields member, migration, proto and rules).
var jobFieldTable = []jobField{
	text("reference_number", "ref", func(j *JobFields) *string { return &j.ReferenceNumber }),
	text("title", "title", func(j *JobFields) *string { return &j.Title }),
	optionalText("city", "city", func(j *JobFields) **string { return &j.City }),
	text("state", "state", func(j *JobFields) *string { return &j.State }),
	optionalText("postal_code", "postal", func(j *JobFields) **string { return &j.PostalCode }),
	text("driver_type", "dtype", func(j *JobFields) *domain.DriverType { return &j.DriverType }),
	optionalText("preference", "pref", func(j *JobFields) **domain.Preference { return &j.Preference }),
	text("freight_type", "ftype", func(j *JobFields) *domain.FreightType { return &j.FreightType }),
	cents("pay_amount_min", "pmin", func(j *JobFields) **domain.Cents { return &j.PayMin }),
	cents("pay_amount_max", "pmax", func(j *JobFields) **domain.Cents { return &j.PayMax }),
	optionalText("pay_frequency", "pfreq", func(j *JobFields) **domain.PayFrequency { return &j.PayFrequency }),
	list("employment_type", "emp", func(j *JobFields) *[]domain.EmploymentType { return &j.EmploymentType }),
	list("route_type", "route", func(j *JobFields) *[]domain.RouteType { return &j.RouteType }),
	text("description", "descr", func(j *JobFields) *string { return &j.Description }),
	optionalText("requirements", "req", func(j *JobFields) **string { return &j.Requirements }),
	flag("twic_only", "twic", func(j *JobFields) *bool { return &j.TwicOnly }),
	optionalText("license_class", "lic", func(j *JobFields) **domain.LicenseClass { return &j.LicenseClass }),
}

// jobField is one column of JobFields and how each statement handles it.
type jobField struct {
	column string
	// read is the select expression, named column.
	read string
	// unnest names the column in a batch statement's unnest(...) AS u(...).
	unnest string
	// arrayType is the SQL type of the array parameter the batch sends.
	arrayType string
	// write turns u.<unnest> back into a column value.
	write string
	// newArray starts the column's batch array, for capacity jobs.
	newArray func(capacity int) fieldArray
	// equal reports whether two jobs have the same value.
	equal func(a, b *JobFields) bool
	// dest is where Rows.Scan puts the column read by read.
	dest func(j *JobFields) any
}

// fieldArray collects one column of a batch of jobs.
type fieldArray interface {
	add(j *JobFields)
	// param is the array as a statement parameter.
	param() any
}

// columnArray is a fieldArray whose elements are encode(get(job)), sent
// as array(elements).
type columnArray[V, E any] struct {
	get    func(*JobFields) *V
	encode func(V) E
	array  func([]E) textArray[E]
	values []E
}

func (a *columnArray[V, E]) add(j *JobFields) { a.values = append(a.values, a.encode(*a.get(j))) }
func (a *columnArray[V, E]) param() any       { return a.array(a.values) }

// newField makes the row of a column read and written as it is, whose
// batch array holds encode(value) as elements of SQL type elemType, sent
// as array(elements).
func newField[V, E any](column, unnest, elemType string, get func(*JobFields) *V, encode func(V) E,
	array func([]E) textArray[E], equal func(a, b V) bool) jobField {
	return jobField{
		column: column, read: column, unnest: unnest, arrayType: elemType + "[]", write: "u." + unnest,
		newArray: func(capacity int) fieldArray {
			return &columnArray[V, E]{get: get, encode: encode, array: array, values: make([]E, 0, capacity)}
		},
		equal: func(a, b *JobFields) bool { return equal(*get(a), *get(b)) },
		dest:  func(j *JobFields) any { return get(j) },
	}
}

// database/sql assigns a column without reflection only to a *string, a
// *bool, a *[]byte or a Scanner; a word type, an optional value or cents go
// through reflect (and an optional value through a recursive assignment).
// The scanners below fill each job column directly: in the CPU profile of
// GET by id of the 2026-12-07T072620Z report, convertAssignRows took 0.20 s
// of Row.Scan's 0.53 s.

// textInto scans a NOT NULL text column into a string-kinded value.
type textInto[T ~string] struct{ dst *T }

func (d textInto[T]) Scan(src any) error {
	s, err := scannedText(src)
	*d.dst = T(s)
	return err
}

// optionalTextInto scans a nullable text column: NULL is nil.
type optionalTextInto[T ~string] struct{ dst **T }

func (d optionalTextInto[T]) Scan(src any) error {
	if src == nil {
		*d.dst = nil
		return nil
	}
	s, err := scannedText(src)
	v := T(s)
	*d.dst = &v
	return err
}

// centsInto scans a nullable bigint column of cents: NULL is nil.
type centsInto struct{ dst **domain.Cents }

func (d centsInto) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*d.dst = nil
	case int64:
		c := domain.Cents(v)
		*d.dst = &c
	default:
		return fmt.Errorf("cents: cannot scan %T", src)
	}
	return nil
}

// scannedText is a text column's value as the driver hands it over.
func scannedText(src any) (string, error) {
	switch v := src.(type) {
	case string:
		return v, nil
	case []byte:
		return string(v), nil
	}
	return "", fmt.Errorf("text: cannot scan %T", src)
}

func same[V comparable](v V) V        { return v }
func equal[V comparable](a, b V) bool { return a == b }

// text is a NOT NULL text column.
func text[T ~string](column, unnest string, get func(*JobFields) *T) jobField {
	f := newField(column, unnest, "text", get, func(v T) string { return string(v) }, stringArray, equal[T])
	f.dest = func(j *JobFields) any { return textInto[T]{get(j)} }
	return f
}

// flag is a boolean column.
func flag(column, unnest string, get func(*JobFields) *bool) jobField {
	return newField(column, unnest, "boolean", get, same[bool], boolArray, equal[bool])
}

// optionalText is a nullable text column.
func optionalText[T ~string](column, unnest string, get func(*JobFields) **T) jobField {
	f := newField(column, unnest, "text", get, nullText[T], nullStringArray, equalOptional[T])
	f.dest = func(j *JobFields) any { return optionalTextInto[T]{get(j)} }
	return f
}

// cents is a nullable numeric(9,2) column of dollars, read and written as
// whole cents, so the amount stays exact both ways.
func cents(column, unnest string, get func(*JobFields) **domain.Cents) jobField {
	f := newField(column, unnest, "bigint", get, nullCents, nullInt64Array, equalOptional[domain.Cents])
	f.read = "(" + column + " * 100)::bigint AS " + column
	f.write = "u." + unnest + "::numeric / 100"
	f.dest = func(j *JobFields) any { return centsInto{get(j)} }
	return f
}

// list is a text[] column. Its batch array carries each list comma-joined
// because unnest flattens nested arrays; the values are canonical enum
// spellings, none of which contains a comma.
func list[T ~string](column, unnest string, get func(*JobFields) *[]T) jobField {
	f := newField(column, unnest, "text", get, joinWords[T], stringArray, slices.Equal[[]T])
	f.write = "string_to_array(u." + unnest + ", ',')"
	f.dest = func(j *JobFields) any { return wordList[T]{get(j)} }
	return f
}

func joinWords[T ~string](v []T) string { return strings.Join(domain.NamesView(v), ",") }

// wordList scans a text[] column into a list of words.
type wordList[T ~string] struct{ dst *[]T }

func (l wordList[T]) Scan(src any) error {
	var words pq.StringArray
	if err := words.Scan(src); err != nil {
		return err
	}
	*l.dst = domain.WordsView[T](words)
	return nil
}

func nullText[T ~string](p *T) sql.NullString {
	if p == nil {
		return sql.NullString{}
	}
	return sql.NullString{String: string(*p), Valid: true}
}

func nullCents(p *domain.Cents) sql.NullInt64 {
	if p == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: int64(*p), Valid: true}
}

func equalOptional[T comparable](a, b *T) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// joinFields joins one property of every field with ", ".
func joinFields(property func(jobField) string) string {
	parts := make([]string, len(jobFieldTable))
	for i, f := range jobFieldTable {
		parts[i] = property(f)
	}
	return strings.Join(parts, ", ")
}

// unnestParams lists the batch's array parameters, $first onwards, with
// their casts: one per field, after the leading ones (say "bigint[]" for ids).
func unnestParams(first int, leading ...string) string {
	types := append(slices.Clip(leading), make([]string, 0, len(jobFieldTable))...)
	for _, f := range jobFieldTable {
		types = append(types, f.arrayType)
	}
	parts := make([]string, len(types))
	for i, t := range types {
		parts[i] = fmt.Sprintf("$%d::%s", first+i, t)
	}
	return strings.Join(parts, ", ")
}

// jobArrays holds a batch of jobs column by column, the shape unnest takes,
// in jobFieldTable order.
type jobArrays []fieldArray

func newJobArrays(capacity int) jobArrays {
	a := make(jobArrays, len(jobFieldTable))
	for i, f := range jobFieldTable {
		a[i] = f.newArray(capacity)
	}
	return a
}

func (a jobArrays) add(j *JobFields) {
	for _, column := range a {
		column.add(j)
	}
}

// params returns the arrays as statement parameters, after leading ones.
func (a jobArrays) params(leading ...any) []any {
	out := append(slices.Clip(leading), make([]any, 0, len(a))...)
	for _, column := range a {
		out = append(out, column.param())
	}
	return out
}

// SameJob reports whether two jobs have the same content: an upsert of
// one over the other leaves it unchanged.
func SameJob(f, o JobFields) bool {
	for _, field := range jobFieldTable {
		if !field.equal(&f, &o) {
			return false
		}
	}
	return true
}
