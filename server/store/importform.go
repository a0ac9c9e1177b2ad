package store

import (
	"bytes"
	"compress/gzip"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/truckjobs/jobboard/domain"
)

// The stored form of an import is the store's own JSON, not a message's: a
// job's members are named as the job's fields are in the v2.0 API
// (domain.JobFieldList), which its clients fix, and the rest by the tags of
// the types below. A new job field is stored with no change here; a change
// of the stored form itself is a change of these types (and, for the
// payload, of its payload_form).

// The payload_form of an import's payload (migration 0011).
const (
	// payloadFormJSON is {"jobs": [...]} of ImportJob's JSON.
	payloadFormJSON = "json"
	// payloadFormProto is the jobs.v2 PostJobsRequest in protobuf binary,
	// which imports queued before the store owned the form still hold.
	payloadFormProto = "proto"
)

// ImportJob is one job of an import as it was sent: nothing is checked or
// made canonical until the import runs. Its JSON is an object of the
// fields sent by their v2.0 names (domain.JobFieldList), a text each or a
// list of texts for a words field, with the members outside the job's
// fields under "extraFields" and "repeatedFields".
type ImportJob struct {
	// Fields are the values sent, by the field's place in
	// domain.JobFieldList(); the zero ImportValue is a field not sent.
	Fields      []ImportValue
	ExtraFields []ImportExtraField
	// RepeatedFields are the members the job named more than once, each
	// with its first repeated value; a job with any is not saved.
	RepeatedFields []ImportExtraField
}

// ImportValue is one field of a stored job: a text (nil when not sent),
// or a words field's list.
type ImportValue struct {
	Text *string
	List []string
}

// NewImportJob is a stored job with nothing sent yet.
func NewImportJob() ImportJob { return ImportJob{Fields: make([]ImportValue, len(importFields))} }

// reset empties j for the next job, keeping its array of fields.
func (j *ImportJob) reset() {
	if len(j.Fields) != len(importFields) {
		*j = NewImportJob()
		return
	}
	clear(j.Fields)
	j.ExtraFields, j.RepeatedFields = nil, nil
}

// Field is the value of the field of that v2.0 name; nil for a name no
// field has.
func (j *ImportJob) Field(name string) *ImportValue {
	for i, f := range importFields {
		if f.Name == name && i < len(j.Fields) {
			return &j.Fields[i]
		}
	}
	return nil
}

// importFields are the job's fields, by their place in an ImportJob.
var importFields = domain.JobFieldList()

// appendJSON writes j as its JSON object: a text that was sent is written
// even when empty, an empty list is left out, as encoding/json's
// omitempty wrote them before.
func (j *ImportJob) appendJSON(b []byte) []byte {
	o := jsonObject{b: append(b, '{')}
	for i, v := range j.Fields {
		f := importFields[i]
		if f.Kind == domain.WordsField {
			o.array(f.Name, len(v.List), func(b []byte, k int) []byte {
				b, _ = jsontext.AppendQuote(b, v.List[k])
				return b
			})
			continue
		}
		o.optionalText(f.Name, v.Text)
	}
	for _, list := range []struct {
		name   string
		fields []ImportExtraField
	}{{"extraFields", j.ExtraFields}, {"repeatedFields", j.RepeatedFields}} {
		o.array(list.name, len(list.fields), func(b []byte, k int) []byte {
			x := jsonObject{b: append(b, '{')}
			x.text("name", list.fields[k].Name)
			x.optionalText("value", list.fields[k].Value)
			return append(x.b, '}')
		})
	}
	return append(o.b, '}')
}

// decode reads one stored job as encoding/json read its struct before:
// names matched whatever their case, members of no field skipped, null a
// member not sent, a repeated name's last value kept. A null in a list,
// which it read as a blank value, is dropped: the job's reader skips
// blank values.
func (j *ImportJob) decode(dec *jsontext.Decoder) error {
	j.reset()
	tok, err := dec.ReadToken()
	if err != nil || tok.Kind() == 'n' {
		return err
	}
	if tok.Kind() != '{' {
		return fmt.Errorf("job: %v where an object belongs", tok)
	}
	texts := make([]string, len(importFields))
	for dec.PeekKind() != '}' {
		name, err := dec.ReadValue()
		if err != nil {
			return err
		}
		if err := j.decodeMember(dec, name, texts); err != nil {
			return fmt.Errorf("job member %s: %w", name, err)
		}
	}
	_, err = dec.ReadToken()
	return err
}

// decodeMember reads the value of the member named by the quoted name. A
// job's texts share one array, texts, rather than one allocation each.
func (j *ImportJob) decodeMember(dec *jsontext.Decoder, quoted jsontext.Value, texts []string) error {
	i, ok := importFieldIndex(quoted)
	if ok && importFields[i].Kind == domain.WordsField {
		j.Fields[i].List = nil
		return eachElement(dec, importFields[i].Name, func(dec *jsontext.Decoder) error {
			s, given, err := decodeText(dec)
			if given {
				j.Fields[i].List = append(j.Fields[i].List, s)
			}
			return err
		})
	}
	if ok {
		s, given, err := decodeText(dec)
		j.Fields[i].Text = nil
		if given {
			texts[i] = s
			j.Fields[i].Text = &texts[i]
		}
		return err
	}
	switch name := unquote(quoted); {
	case strings.EqualFold(name, "extraFields"):
		return jsonv2.UnmarshalDecode(dec, &j.ExtraFields, payloadReading)
	case strings.EqualFold(name, "repeatedFields"):
		return jsonv2.UnmarshalDecode(dec, &j.RepeatedFields, payloadReading)
	}
	return dec.SkipValue()
}

// importFieldIndex finds the field a quoted member name names, in any
// case. A plain ASCII name, which is what is stored, is looked up without
// an allocation: a job's members are read 17 at a time, 50,000 jobs an
// import.
func importFieldIndex(quoted jsontext.Value) (int, bool) {
	var lower [32]byte
	raw := quoted[1 : len(quoted)-1]
	plain := len(raw) <= len(lower)
	for k := 0; plain && k < len(raw); k++ {
		c := raw[k]
		switch {
		case c >= 0x80 || c == '\\':
			plain = false
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		lower[k] = c
	}
	if plain {
		i, ok := importFieldByLowerName[string(lower[:len(raw)])]
		return i, ok
	}
	name := unquote(quoted)
	for i, f := range importFields {
		if strings.EqualFold(name, f.Name) {
			return i, true
		}
	}
	return 0, false
}

// importFieldByLowerName maps the fields' names, lower case, to their place.
var importFieldByLowerName = func() map[string]int {
	m := make(map[string]int, len(importFields))
	for i, f := range importFields {
		m[strings.ToLower(f.Name)] = i
	}
	return m
}()

// unquote is a quoted JSON string's text.
func unquote(quoted jsontext.Value) string {
	var s string
	_ = jsonv2.Unmarshal(quoted, &s, payloadReading)
	return s
}

// decodeText reads a string; given is false for null. A string without
// escapes, as nearly all are, is copied straight from the input.
func decodeText(dec *jsontext.Decoder) (s string, given bool, err error) {
	v, err := dec.ReadValue()
	switch {
	case err != nil || v.Kind() == 'n':
		return "", false, err
	case v.Kind() != '"':
		return "", false, fmt.Errorf("%s where a string belongs", v)
	}
	raw := v[1 : len(v)-1]
	if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return string(raw), true, nil
	}
	return unquote(v), true, nil
}

// ImportExtraField is a field of a sent job that is not one of the job's.
type ImportExtraField struct {
	Name  string  `json:"name"`
	Value *string `json:"value,omitempty"`
}

// ImportPayload is an import's jobs as stored.
//
// The bytes of payload_form json are {"jobs": [...]}, gzip-compressed
// since imports of 50,000 jobs were measured: such an import's 38 MB of
// jobs is stored in a few MB, written and read as a stream, one job at a
// time, so neither the request nor the worker holds it whole as text.
// Payloads written before are the JSON itself. A gzip stream starts with
// the bytes 1f 8b, which no JSON text does, so both read alike.
type ImportPayload struct {
	form string
	data []byte
}

// gzipMagic starts every gzip stream (RFC 1952).
var gzipMagic = []byte{0x1f, 0x8b}

// NewImportPayload is the stored form of jobs.
func NewImportPayload(jobs []ImportJob) (ImportPayload, error) {
	return EncodePayload(len(jobs), func(i int, _ *ImportJob) *ImportJob { return &jobs[i] })
}

// EncodePayload is the stored form of n jobs, the i'th of which job gives:
// either a job of its own, or scratch, emptied for it and filled. Each part
// has one scratch job, so a caller that fills it makes no garbage a job
// (50,000 of them for an import of 50,000);
// job is called from several goroutines at once.
//
// A large payload is written in parts side by side, one for each core,
// each part its own gzip member: a gzip stream may hold several members
// one after the other (RFC 1952), which read back as their texts joined,
// so the parts join into the one JSON text. An import of 50,000 jobs took
// 120 ms to encode and compress on one core, while its request waited.
func EncodePayload(n int, job func(i int, scratch *ImportJob) *ImportJob) (ImportPayload, error) {
	parts := max(1, min(runtime.GOMAXPROCS(0), n/minJobsPerPart))
	written := make([][]byte, parts)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for k := range parts {
		wg.Go(func() {
			from, to := k*n/parts, (k+1)*n/parts
			written[k], errs[k] = encodePart(from, to, n, job)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return ImportPayload{}, fmt.Errorf("encode import payload: %w", err)
	}
	return ImportPayload{form: payloadFormJSON, data: bytes.Join(written, nil)}, nil
}

// minJobsPerPart is the fewest jobs a part of a payload is written with:
// below it, starting a goroutine and a compressor costs more than it saves.
const minJobsPerPart = 2000

// encodePart writes jobs [from, to) of n as one gzip member: the payload's
// opening before the first job, and its closing after the last.
func encodePart(from, to, n int, job func(i int, scratch *ImportJob) *ImportJob) ([]byte, error) {
	var data bytes.Buffer
	// The fastest level: the jobs of a feed repeat the same words and markup,
	// so it already stores them in about a tenth of their size.
	zip, err := gzip.NewWriterLevel(&data, gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	// Descriptions are HTML: jsontext leaves <, > and & as they are, where
	// escaping them would take six bytes each, and a payload up to six
	// times its request.
	var line []byte
	scratch := NewImportJob()
	if from == 0 {
		_, err = io.WriteString(zip, `{"jobs":[`)
	}
	for i := from; i < to && err == nil; i++ {
		if i > 0 {
			_, err = io.WriteString(zip, ",")
		}
		if err == nil {
			scratch.reset()
			line = job(i, &scratch).appendJSON(line[:0])
			_, err = zip.Write(line)
		}
	}
	if err == nil && to == n {
		_, err = io.WriteString(zip, "]}")
	}
	if err == nil {
		err = zip.Close()
	}
	return data.Bytes(), err
}

// Proto returns the payload of an import queued before the store owned the
// form: a PostJobsRequest in protobuf binary, which the caller decodes.
func (p ImportPayload) Proto() ([]byte, bool) { return p.data, p.form == payloadFormProto }

// ErrProtoPayload is Jobs of a payload in the protobuf form (see Proto).
var ErrProtoPayload = errors.New("import payload stored as protobuf")

// Jobs decodes the payload.
func (p ImportPayload) Jobs() ([]ImportJob, error) {
	var jobs []ImportJob
	err := p.EachJob(func(j *ImportJob) error {
		kept := *j
		kept.Fields = slices.Clone(j.Fields)
		jobs = append(jobs, kept)
		return nil
	})
	return jobs, err
}

// EachJob decodes the payload's jobs in order, calling fn with each as it
// is read: the payload is never decoded, nor decompressed, whole. The job
// is read into the same ImportJob each time: fn may keep what its fields
// point to (texts, lists), not the job itself.
func (p ImportPayload) EachJob(fn func(*ImportJob) error) error {
	if p.form == payloadFormProto {
		return ErrProtoPayload
	}
	// A completed import's payload is emptied: it holds no jobs any more,
	// and a worker that runs it again finds it complete and does nothing.
	if len(p.data) == 0 {
		return nil
	}
	job := &ImportJob{}
	err := p.eachValue(func(dec *jsontext.Decoder) error {
		if err := job.decode(dec); err != nil {
			return err
		}
		return fn(job)
	})
	if err != nil {
		return fmt.Errorf("decode import payload: %w", err)
	}
	return nil
}

// payloadReading decodes a payload as encoding/json, which wrote it,
// would: names matched whatever their case, invalid UTF-8 replaced, a
// repeated name's last value kept. encoding/json took 7.4 ms per 1,000
// jobs to read them back (BenchmarkImportPayload), this 3.3 ms: half the
// import worker's CPU was that decoding.
var payloadReading = jsonv2.JoinOptions(jsonv2.MatchCaseInsensitiveNames(true),
	jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))

// eachValue reads the payload's JSON, {"jobs": [...]}, calling item to
// decode each element of the jobs list. Other members are skipped, as
// encoding/json's decoding skipped them.
func (p ImportPayload) eachValue(item func(dec *jsontext.Decoder) error) error {
	var r io.Reader = bytes.NewReader(p.data)
	if bytes.HasPrefix(p.data, gzipMagic) {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return err
		}
		r = zr
	}
	dec := jsontext.NewDecoder(r, payloadReading)
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return err
		}
		if !strings.EqualFold(name.String(), "jobs") {
			if err := dec.SkipValue(); err != nil {
				return err
			}
			continue
		}
		if err := eachElement(dec, "jobs", item); err != nil {
			return err
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return errors.New("unexpected data after the payload")
	}
	return nil
}

// eachElement reads the array (or null) of the member named name, calling
// item for each element.
func eachElement(dec *jsontext.Decoder, name string, item func(dec *jsontext.Decoder) error) error {
	tok, err := dec.ReadToken()
	if err != nil || tok.Kind() == 'n' {
		return err
	}
	if tok.Kind() != '[' {
		return fmt.Errorf("%s: %v where a list belongs", name, tok)
	}
	for dec.PeekKind() != ']' {
		if err := item(dec); err != nil {
			return err
		}
	}
	return expectDelim(dec, ']')
}

func expectDelim(dec *jsontext.Decoder, want jsontext.Kind) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() != want {
		return fmt.Errorf("%v where %v belongs", tok, want)
	}
	return nil
}

// JobCount counts the jobs of a payload in the JSON form without decoding
// them, so that jobs that do not decode count too; 0 when even the list
// cannot be read.
func (p ImportPayload) JobCount() int {
	n := 0
	err := p.eachValue(func(dec *jsontext.Decoder) error {
		n++
		return dec.SkipValue()
	})
	if err != nil {
		return 0
	}
	return n
}

// ImportResults are what an import did, as stored once it is complete.
// Imports completed before the store owned the form hold the same names
// (the API's JSON of its results message), so both read alike; unknown
// names are ignored.
type ImportResults struct {
	Added         int32                `json:"added,omitempty"`
	Updated       int32                `json:"updated,omitempty"`
	Unchanged     int32                `json:"unchanged,omitempty"`
	Deleted       int32                `json:"deleted,omitempty"`
	Failed        int32                `json:"failed,omitempty"`
	Processed     int32                `json:"processed,omitempty"`
	Errors        []ImportError        `json:"errors,omitempty"`
	IgnoredValues []ImportIgnoredValue `json:"ignoredValues,omitempty"`
}

// ImportError is a job of an import that could not be saved, or (with no
// reference and Index 0) why none of them could.
type ImportError struct {
	Index           int32    `json:"index,omitempty"`
	Messages        []string `json:"messages,omitempty"`
	ReferenceNumber *string  `json:"referenceNumber,omitempty"`
}

// ImportIgnoredValue is a sent value the import did not use.
type ImportIgnoredValue struct {
	Index *int32 `json:"index,omitempty"`
	// ID is written as a JSON string, as the results of older imports hold it.
	ID              *int64  `json:"id,string,omitempty"`
	ReferenceNumber *string `json:"referenceNumber,omitempty"`
	Field           *string `json:"field,omitempty"`
	Value           *string `json:"value,omitempty"`
	Message         string  `json:"message,omitempty"`
}

// Scan reads the results column.
func (r *ImportResults) Scan(src any) error {
	var data []byte
	switch v := src.(type) {
	case []byte:
		data = v
	case string:
		data = []byte(v)
	default:
		return fmt.Errorf("import results: cannot read %T", src)
	}
	// Read as the payload is (payloadReading): encoding/json took twice as
	// long to read the 6 MB of results of an import with 40,000 errors (94
	// ms against 47 in one run of BenchmarkImportResults), which every GET
	// of the import waits for.
	if err := jsonv2.Unmarshal(data, r, payloadReading); err != nil {
		return fmt.Errorf("decode import results: %w", err)
	}
	return nil
}

// ResultsWindow is the part of an import's result lists a reader of one
// page wants decoded: at most Limit entries of errors from ErrorsFrom, and
// at most Limit of ignored values from IgnoredFrom.
type ResultsWindow struct {
	ErrorsFrom, IgnoredFrom, Limit int
}

// ResultsLengths are how many entries an import's result lists hold.
type ResultsLengths struct {
	Errors, IgnoredValues int
}

// decodeResultsWindow reads stored results as Scan does, but decodes only
// w's entries of the two lists and skips over the others, counting them:
// a page of 1,000 need not build the 80,000 entries of an import of 40,000
// failed jobs that each sent an unknown member. The text is still read
// through, being one JSON value.
func decodeResultsWindow(data []byte, w ResultsWindow) (*ImportResults, ResultsLengths, error) {
	var r ImportResults
	var n ResultsLengths
	lists := jsonv2.JoinUnmarshalers(
		jsonv2.UnmarshalFromFunc(func(dec *jsontext.Decoder, list *[]ImportError) error {
			return decodeListWindow(dec, list, w.ErrorsFrom, w.Limit, &n.Errors)
		}),
		jsonv2.UnmarshalFromFunc(func(dec *jsontext.Decoder, list *[]ImportIgnoredValue) error {
			return decodeListWindow(dec, list, w.IgnoredFrom, w.Limit, &n.IgnoredValues)
		}))
	if err := jsonv2.Unmarshal(data, &r, payloadReading, jsonv2.WithUnmarshalers(lists)); err != nil {
		return nil, ResultsLengths{}, fmt.Errorf("decode import results: %w", err)
	}
	return &r, n, nil
}

// decodeListWindow decodes the entries of the JSON array at dec from from
// on, at most limit, into list, skips the others and counts them all into
// count. A name given twice keeps its last value, as Scan does.
func decodeListWindow[T any](dec *jsontext.Decoder, list *[]T, from, limit int, count *int) error {
	*list, *count = nil, 0
	if dec.PeekKind() == 'n' {
		_, err := dec.ReadToken()
		return err
	}
	if tok, err := dec.ReadToken(); err != nil {
		return err
	} else if tok.Kind() != '[' {
		return fmt.Errorf("want an array, found %v", tok.Kind())
	}
	for dec.PeekKind() != ']' {
		if *count >= from && *count < from+limit {
			var e T
			if err := jsonv2.UnmarshalDecode(dec, &e); err != nil {
				return err
			}
			*list = append(*list, e)
		} else if err := dec.SkipValue(); err != nil {
			return err
		}
		*count++
	}
	_, err := dec.ReadToken()
	return err
}

// Value writes the results column. The pool sends []byte arguments in
// binary format (see openPool), and json's binary form is its text, so the
// JSON goes as it was written. As a string it was copied twice more on the
// way (to the string, then back to bytes by the driver): 6 MB each time for
// an import with 40,000 errors. (Before migration 0019 the column was
// jsonb, whose binary form is not text; migrations run before the store
// serves.)
func (r *ImportResults) Value() (driver.Value, error) {
	if r == nil {
		return nil, nil
	}
	return r.appendJSON(make([]byte, 0, r.sizeHint())), nil
}

// sizeHint is about the length of r's JSON: sized once, the buffer is not
// copied again and again as it grows (by a quarter at a time past 256 KB).
func (r *ImportResults) sizeHint() int {
	n := 128
	for _, e := range r.Errors {
		n += 64 + textLen(e.ReferenceNumber)
		for _, m := range e.Messages {
			n += len(m) + 4
		}
	}
	for _, v := range r.IgnoredValues {
		n += 128 + textLen(v.ReferenceNumber) + textLen(v.Field) + textLen(v.Value) + len(v.Message)
	}
	return n
}

// appendJSON writes r as encoding/json would from its tags (which Scan
// reads with), but field by field: an import's results hold an entry for
// each job it refused, 40,000 in bench scenario 5, and encoding them
// through reflection took 8% of the server's CPU time in that import.
func (r *ImportResults) appendJSON(b []byte) []byte {
	o := jsonObject{b: append(b, '{')}
	o.int("added", int64(r.Added))
	o.int("updated", int64(r.Updated))
	o.int("unchanged", int64(r.Unchanged))
	o.int("deleted", int64(r.Deleted))
	o.int("failed", int64(r.Failed))
	o.int("processed", int64(r.Processed))
	o.array("errors", len(r.Errors), func(b []byte, i int) []byte { return r.Errors[i].appendJSON(b) })
	o.array("ignoredValues", len(r.IgnoredValues), func(b []byte, i int) []byte { return r.IgnoredValues[i].appendJSON(b) })
	return append(o.b, '}')
}

func (e ImportError) appendJSON(b []byte) []byte {
	o := jsonObject{b: append(b, '{')}
	o.int("index", int64(e.Index))
	o.array("messages", len(e.Messages), func(b []byte, i int) []byte {
		b, _ = jsontext.AppendQuote(b, e.Messages[i]) // as text does
		return b
	})
	o.optionalText("referenceNumber", e.ReferenceNumber)
	return append(o.b, '}')
}

func (v ImportIgnoredValue) appendJSON(b []byte) []byte {
	o := jsonObject{b: append(b, '{')}
	if v.Index != nil {
		o.name("index")
		o.b = strconv.AppendInt(o.b, int64(*v.Index), 10)
	}
	if v.ID != nil {
		o.name("id")
		o.b = append(strconv.AppendInt(append(o.b, '"'), *v.ID, 10), '"')
	}
	o.optionalText("referenceNumber", v.ReferenceNumber)
	o.optionalText("field", v.Field)
	o.optionalText("value", v.Value)
	if v.Message != "" {
		o.text("message", v.Message)
	}
	return append(o.b, '}')
}

func textLen(s *string) int {
	if s == nil {
		return 0
	}
	return len(*s)
}

// jsonObject appends the members of an object, the comma between them
// included, with omitempty's rule left to the caller or its methods.
type jsonObject struct {
	b    []byte
	more bool
}

func (o *jsonObject) name(n string) {
	if o.more {
		o.b = append(o.b, ',')
	}
	o.more = true
	o.b = append(append(append(o.b, '"'), n...), '"', ':')
}

// array writes a member whose value is an array of n items, left out when
// n is 0; item appends the i'th to b.
func (o *jsonObject) array(name string, n int, item func(b []byte, i int) []byte) {
	if n == 0 {
		return
	}
	o.name(name)
	o.b = append(o.b, '[')
	for i := range n {
		if i > 0 {
			o.b = append(o.b, ',')
		}
		o.b = item(o.b, i)
	}
	o.b = append(o.b, ']')
}

// int writes a number member, left out when zero.
func (o *jsonObject) int(n string, v int64) {
	if v != 0 {
		o.name(n)
		o.b = strconv.AppendInt(o.b, v, 10)
	}
}

func (o *jsonObject) text(n, v string) {
	o.name(n)
	// Invalid UTF-8 is written as U+FFFD, as encoding/json does; the error
	// only reports that it was.
	o.b, _ = jsontext.AppendQuote(o.b, v)
}

// optionalText writes a string member, left out when nil.
func (o *jsonObject) optionalText(n string, v *string) {
	if v != nil {
		o.text(n, *v)
	}
}
