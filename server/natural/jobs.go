package natural

import (
	"strconv"

	"github.com/truckjobs/jobboard/domain"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/internal/protofield"
)

// This file moves a job between the natural messages and the other forms
// field by field, as domain.JobFieldList() lists them, each by its kind: a
// word is an enum value (1..n in the order of its words, 0 for none), an
// amount is cents, in a field whose JSON name adds "Cents".

// InputValue is one field of a natural job as sent, in the member its
// kind uses: Text for a text or HTML field, Enum for a word, Enums for
// words, Cents for an amount, Flag for a flag.
type InputValue struct {
	// Text is a text's value; nil when an optional one is not set.
	Text  *string
	Enum  int32
	Enums []int32
	Cents *int64
	Flag  bool
}

// JobField is a job field's place in the natural messages.
type JobField struct {
	domain.JobField
	// Name is its JSON name in jobboard.v2.
	Name string
	// Read returns its value in a JobInput.
	Read func(*jobboardv2.JobInput) InputValue
	// write copies its value from a domain job to a Job.
	write func(*domain.JobFields, *jobboardv2.Job)
}

// JobFieldTable holds the job fields' places in the natural messages, in
// the order of domain.JobFieldList().
var JobFieldTable = func() []JobField {
	out := make([]JobField, len(domain.JobFieldList()))
	for i, f := range domain.JobFieldList() {
		name := f.Name
		if f.Kind == domain.AmountField {
			name += "Cents"
		}
		out[i] = JobField{JobField: f, Name: name, Read: inputReader(f, name), write: jobWriter(f, name)}
	}
	return out
}()

// inputReader reads field f, named name, of a natural JobInput.
func inputReader(f domain.JobField, name string) func(*jobboardv2.JobInput) InputValue {
	switch f.Kind {
	case domain.WordField:
		p := protofield.MustFind[jobboardv2.JobInput, int32](name)
		return func(in *jobboardv2.JobInput) InputValue { return InputValue{Enum: *p.In(in)} }
	case domain.WordsField:
		p := protofield.MustFind[jobboardv2.JobInput, []int32](name)
		return func(in *jobboardv2.JobInput) InputValue { return InputValue{Enums: *p.In(in)} }
	case domain.AmountField:
		p := protofield.MustFind[jobboardv2.JobInput, *int64](name)
		return func(in *jobboardv2.JobInput) InputValue { return InputValue{Cents: *p.In(in)} }
	case domain.FlagField:
		p := protofield.MustFind[jobboardv2.JobInput, bool](name)
		return func(in *jobboardv2.JobInput) InputValue { return InputValue{Flag: *p.In(in)} }
	}
	if fd := (&jobboardv2.JobInput{}).ProtoReflect().Descriptor().Fields().ByJSONName(name); fd != nil && !fd.HasPresence() {
		// A text the message always has: what it holds was sent, empty or not.
		p := protofield.MustFind[jobboardv2.JobInput, string](name)
		return func(in *jobboardv2.JobInput) InputValue { return InputValue{Text: p.In(in)} }
	}
	p := protofield.MustFind[jobboardv2.JobInput, *string](name)
	return func(in *jobboardv2.JobInput) InputValue { return InputValue{Text: *p.In(in)} }
}

// jobWriter copies field f, named name, of a domain job to a natural Job.
func jobWriter(f domain.JobField, name string) func(*domain.JobFields, *jobboardv2.Job) {
	switch {
	case f.Kind == domain.WordField:
		p := protofield.MustFind[jobboardv2.Job, int32](name)
		return func(j *domain.JobFields, m *jobboardv2.Job) { w, _ := f.Text(j); *p.In(m) = EnumOf(f, w) }
	case f.Kind == domain.WordsField:
		p := protofield.MustFind[jobboardv2.Job, []int32](name)
		return func(j *domain.JobFields, m *jobboardv2.Job) {
			words := f.WordList(j)
			enums := make([]int32, len(words))
			for k := range words {
				enums[k] = EnumOf(f, words[k])
			}
			*p.In(m) = enums
		}
	case f.Kind == domain.AmountField:
		p := protofield.MustFind[jobboardv2.Job, *int64](name)
		return func(j *domain.JobFields, m *jobboardv2.Job) {
			if c := f.Amount(j); c != nil {
				*p.In(m) = new(int64(*c))
			}
		}
	case f.Kind == domain.FlagField:
		p := protofield.MustFind[jobboardv2.Job, bool](name)
		return func(j *domain.JobFields, m *jobboardv2.Job) { *p.In(m) = f.Flag(j) }
	case f.Required:
		p := protofield.MustFind[jobboardv2.Job, string](name)
		return func(j *domain.JobFields, m *jobboardv2.Job) { *p.In(m), _ = f.Text(j) }
	default:
		p := protofield.MustFind[jobboardv2.Job, *string](name)
		return func(j *domain.JobFields, m *jobboardv2.Job) { *p.In(m) = f.OptionalText(j) }
	}
}

// EnumOf is the enum value of one of field f's words: UNSPECIFIED for
// none (""), and for a word outside them (never stored: the rules accept
// only these).
func EnumOf(f domain.JobField, word string) int32 {
	e, _ := Vocabulary[int32]{f.Words}.Value(word)
	return e
}

// WordOf is the word of enum value e of field f; false for UNSPECIFIED
// and for a number outside its words.
func WordOf(f domain.JobField, e int32) (string, bool) { return Vocabulary[int32]{f.Words}.Label(e) }

// textPlaces are where each field lies in the v2.0 text form's JobInput:
// a list or a single text.
var textPlaces = func() []func(*restv2.JobInput, JobField, InputValue) {
	out := make([]func(*restv2.JobInput, JobField, InputValue), len(JobFieldTable))
	for i, f := range JobFieldTable {
		if f.Kind == domain.WordsField {
			p := protofield.MustFind[restv2.JobInput, []string](f.JobField.Name)
			out[i] = func(m *restv2.JobInput, f JobField, v InputValue) {
				texts := make([]string, len(v.Enums))
				for k, e := range v.Enums {
					texts[k] = enumText(f, e)
				}
				*p.In(m) = texts
			}
			continue
		}
		p := protofield.MustFind[restv2.JobInput, *string](f.JobField.Name)
		out[i] = func(m *restv2.JobInput, f JobField, v InputValue) { *p.In(m) = valueText(f, v) }
	}
	return out
}()

// enumText is an enum value as the text form writes it: its word, or its
// digits for a number outside the words, which the rules then refuse by
// name; UNSPECIFIED is empty.
func enumText(f JobField, e int32) string {
	if e == 0 {
		return ""
	}
	if w, ok := WordOf(f.JobField, e); ok {
		return w
	}
	return itoa(int64(e))
}

// valueText is a single value as the text form writes it; nil when not
// sent.
func valueText(f JobField, v InputValue) *string {
	switch f.Kind {
	case domain.WordField:
		if v.Enum == 0 {
			return nil
		}
		return new(enumText(f, v.Enum))
	case domain.AmountField:
		if v.Cents == nil {
			return nil
		}
		return new(domain.Cents(*v.Cents).Decimal())
	case domain.FlagField:
		return new(strconv.FormatBool(v.Flag))
	}
	if v.Text == nil {
		return nil
	}
	return new(*v.Text)
}

// JobText is a natural job in the v2.0 text form, as an import stores its
// jobs until it runs (store.ImportJob): an enum number outside its
// vocabulary is kept as its digits, which the rules then refuse by name.
func JobText(in *jobboardv2.JobInput) *restv2.JobInput {
	out := &restv2.JobInput{}
	for i, f := range JobFieldTable {
		textPlaces[i](out, f, f.Read(in))
	}
	return out
}

// JobTexts converts a list of jobs.
func JobTexts(in []*jobboardv2.JobInput) []*restv2.JobInput { return each(in, JobText) }

// Job is a stored job in the natural form: its words as enum values, its
// pay as cents, straight from the domain's.
func Job(j *domain.Job) *jobboardv2.Job {
	out := &jobboardv2.Job{Id: j.ID, Date: j.PostedOn}
	for _, f := range JobFieldTable {
		f.write(&j.JobFields, out)
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
