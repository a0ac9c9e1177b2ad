package domain

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unsafe"
)

// A job field is declared once, as a member of JobFields and of JobInput
// tagged with its name (`job:"payAmountMin"`). The adapters that move a
// job between forms (the v2.0 text, the natural messages, the stored
// import) walk JobFieldList instead of naming each field, so a new field
// is its two members in job.go, a column in the store's table, a field in
// each proto and, when it has one, a rule of its own.

// FieldKind is the shape of a job field's value, which decides how every
// form reads and writes it.
type FieldKind int

// The kinds of job field.
const (
	// TextField is free text: *string, or string when it is required.
	TextField FieldKind = iota
	// HTMLField is text of the basic HTML tags (tagged ",html").
	HTMLField
	// WordField is one of a closed field's words.
	WordField
	// WordsField is a list of a closed field's words.
	WordsField
	// AmountField is an amount of money in cents (*Cents).
	AmountField
	// FlagField is a boolean.
	FlagField
)

// JobField is one field of a job, as JobFields and JobInput declare it.
type JobField struct {
	// Name is the field's name in the v2.0 API, which is also the JSON name
	// of its field in both APIs' messages, but for a natural amount, whose
	// JSON name adds "Cents".
	Name string
	Kind FieldKind
	// Required fields are never empty in JobFields.
	Required bool
	// Words are a closed field's words, in the order of its gRPC enum.
	Words []string
	// Where the field lies in JobFields and in JobInput.
	stored, input uintptr
}

// JobFieldList returns the job's fields in the order JobInput declares
// them, which is the order the job rules report their problems in. The
// list is the caller's; the words in it are shared, and not to be changed.
func JobFieldList() []JobField { return slices.Clone(jobFieldList) }

// JobFieldNamed returns the field of that v2.0 name.
func JobFieldNamed(name string) (JobField, bool) {
	for _, f := range jobFieldList {
		if f.Name == name {
			return f, true
		}
	}
	return JobField{}, false
}

var jobFieldList = describeJobFields()

// describeJobFields reads the tags of JobInput and JobFields. A field
// whose members disagree, or whose type no kind fits, stops the program
// at its start rather than misplacing a value later.
func describeJobFields() []JobField {
	stored := map[string]reflect.StructField{}
	storedType := reflect.TypeFor[JobFields]()
	for i := range storedType.NumField() {
		sf := storedType.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("job"), ",")
		stored[name] = sf
	}
	inputType := reflect.TypeFor[JobInput]()
	if inputType.NumField() != len(stored) {
		panic(fmt.Sprintf("domain: JobInput has %d fields, JobFields %d", inputType.NumField(), len(stored)))
	}
	fields := make([]JobField, inputType.NumField())
	for i := range fields {
		in := inputType.Field(i)
		name := in.Tag.Get("job")
		sf, ok := stored[name]
		if !ok || name == "" {
			panic(fmt.Sprintf("domain: JobInput.%s (job %q) has no member of JobFields", in.Name, name))
		}
		f := JobField{Name: name, stored: sf.Offset, input: in.Offset}
		f.Kind, f.Words, f.Required = kindOf(sf, in.Type)
		fields[i] = f
	}
	return fields
}

// kindOf is a field's kind from its stored member and its input's type.
func kindOf(sf reflect.StructField, input reflect.Type) (kind FieldKind, words []string, required bool) {
	t, required := sf.Type, sf.Type.Kind() != reflect.Pointer && sf.Type.Kind() != reflect.Slice
	if !required {
		t = t.Elem()
	}
	want := reflect.PointerTo(t)
	switch words = vocabularies[t]; {
	case t == reflect.TypeFor[bool]():
		kind, required, want = FlagField, false, t
	case t == reflect.TypeFor[Cents]():
		kind = AmountField
	case words != nil && sf.Type.Kind() == reflect.Slice:
		kind, want = WordsField, sf.Type
	case words != nil:
		kind = WordField
	case t == reflect.TypeFor[string]() && strings.HasSuffix(sf.Tag.Get("job"), ",html"):
		kind = HTMLField
	case t == reflect.TypeFor[string]():
		kind = TextField
	default:
		panic(fmt.Sprintf("domain: JobFields.%s: no kind of job field is a %s", sf.Name, sf.Type))
	}
	if input != want {
		panic(fmt.Sprintf("domain: JobInput's %s is a %s, not the %s its kind takes", sf.Name, input, want))
	}
	return kind, words, required
}

// The accessors below reach a member by its offset: the layouts were
// checked by describeJobFields, and a word type's underlying type is
// string, so a word is read and written as one. Each first checks that
// the field is of a kind it serves, so that a mistake is a panic, never a
// value read through another type.

// is panics unless f is of one of kinds.
func (f JobField) is(kinds ...FieldKind) {
	if !slices.Contains(kinds, f.Kind) {
		panic(fmt.Sprintf("domain: job field %s (kind %d) reached through another kind's accessor", f.Name, f.Kind))
	}
}

var textKinds = []FieldKind{TextField, HTMLField, WordField}

func (f JobField) storedIn(j *JobFields) unsafe.Pointer {
	return unsafe.Add(unsafe.Pointer(j), f.stored)
}
func (f JobField) inputIn(in *JobInput) unsafe.Pointer {
	return unsafe.Add(unsafe.Pointer(in), f.input)
}

// Text is a text, HTML or word field's value in j, and whether it was
// given (a required one always is).
func (f JobField) Text(j *JobFields) (string, bool) {
	f.is(textKinds...)
	if f.Required {
		return *(*string)(f.storedIn(j)), true
	}
	if p := *(**string)(f.storedIn(j)); p != nil {
		return *p, true
	}
	return "", false
}

// OptionalText is an optional text, HTML or word field's value in j, nil
// when not given: the pointer j holds, for a message to share.
func (f JobField) OptionalText(j *JobFields) *string {
	f.is(textKinds...)
	if f.Required {
		panic("domain: job field " + f.Name + " is required: read it with Text")
	}
	return *(**string)(f.storedIn(j))
}

// WordList is a words field's value in j, sharing j's array.
func (f JobField) WordList(j *JobFields) []string {
	f.is(WordsField)
	return *(*[]string)(f.storedIn(j))
}

// Amount is an amount field's value in j; nil when not given.
func (f JobField) Amount(j *JobFields) *Cents {
	f.is(AmountField)
	return *(**Cents)(f.storedIn(j))
}

// Flag is a flag field's value in j.
func (f JobField) Flag(j *JobFields) bool {
	f.is(FlagField)
	return *(*bool)(f.storedIn(j))
}

// SetText sets a text, HTML or word field of in; a word must be one of
// f.Words, which the job rules check again.
func (f JobField) SetText(in *JobInput, v *string) {
	f.is(textKinds...)
	*(**string)(f.inputIn(in)) = v
}

// SetWordList sets a words field of in.
func (f JobField) SetWordList(in *JobInput, v []string) {
	f.is(WordsField)
	*(*[]string)(f.inputIn(in)) = v
}

// SetAmount sets an amount field of in.
func (f JobField) SetAmount(in *JobInput, v *Cents) {
	f.is(AmountField)
	*(**Cents)(f.inputIn(in)) = v
}

// SetFlag sets a flag field of in.
func (f JobField) SetFlag(in *JobInput, v bool) {
	f.is(FlagField)
	*(*bool)(f.inputIn(in)) = v
}

// PutText sets a text, HTML or word field of j; a required field takes
// *v, and v must not be nil.
func (f JobField) PutText(j *JobFields, v *string) {
	f.is(textKinds...)
	if f.Required {
		*(*string)(f.storedIn(j)) = *v
		return
	}
	*(**string)(f.storedIn(j)) = v
}

// PutWordList sets a words field of j.
func (f JobField) PutWordList(j *JobFields, v []string) {
	f.is(WordsField)
	*(*[]string)(f.storedIn(j)) = v
}

// PutAmount sets an amount field of j.
func (f JobField) PutAmount(j *JobFields, v *Cents) {
	f.is(AmountField)
	*(**Cents)(f.storedIn(j)) = v
}

// PutFlag sets a flag field of j.
func (f JobField) PutFlag(j *JobFields, v bool) {
	f.is(FlagField)
	*(*bool)(f.storedIn(j)) = v
}

// InputText is a text, HTML or word field's value in in; nil when not
// sent.
func (f JobField) InputText(in *JobInput) *string {
	f.is(textKinds...)
	return *(**string)(f.inputIn(in))
}

// InputWordList is a words field's value in in.
func (f JobField) InputWordList(in *JobInput) []string {
	f.is(WordsField)
	return *(*[]string)(f.inputIn(in))
}

// InputAmount is an amount field's value in in; nil when not sent.
func (f JobField) InputAmount(in *JobInput) *Cents {
	f.is(AmountField)
	return *(**Cents)(f.inputIn(in))
}

// InputFlag is a flag field's value in in.
func (f JobField) InputFlag(in *JobInput) bool {
	f.is(FlagField)
	return *(*bool)(f.inputIn(in))
}
