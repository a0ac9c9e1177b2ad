package decode

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/internal/rules"
)

// JSON fills a request message from a JSON body. The body is read
// token by token with a streaming tokenizer, so field order is kept, every
// value can be reported as the text the client sent, and a feed of
// thousands of jobs is read in one pass.
func JSON(data []byte, msg any) error {
	// A bytes.Buffer the decoder parses in place, without a copy of the body.
	return JSONFrom(bytes.NewBuffer(data), msg)
}

// JSONFrom is JSON of a body read from r.
func JSONFrom(r io.Reader, msg any) error {
	dec := jsontext.NewDecoder(r,
		// A repeated name is told by the readers below, which know what
		// it means where it is (a job's invalid entry, or a 400), rather
		// than by the decoder, whose error would end the body; and, as
		// encoding/json did, an escaped lone surrogate becomes U+FFFD
		// rather than an error.
		jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	var err error
	switch m := msg.(type) {
	case *restv2.PostJobsRequest:
		jobs := jobReader{dec: dec}
		err = jsonArray(dec, "the body must be a JSON array of jobs", listItems, func(i int) error {
			j, err := jobs.job(func() string { return fmt.Sprintf("$[%d]", i) })
			m.Jobs = append(m.Jobs, j)
			return err
		})
	case *restv2.CreateJobImportRequest:
		err = jsonImport(dec, m)
	case *restv2.WebhookInput:
		err = jsonWebhook(dec, m)
	case *restv2.DriverStatusInput:
		err = jsonStatus(dec, m)
	case *restv2.SetDriverStatusesRequest:
		err = jsonStatusBatch(dec, m)
	case *restv2.DeleteJobsRequest:
		err = jsonArray(dec, "the body must be a JSON array of job ids", deleteItems, func(i int) error {
			v, err := jsonScalar(dec, func() string { return fmt.Sprintf("$[%d]", i) })
			m.Ids = append(m.Ids, rules.OrEmpty(v))
			return err
		})
	case *restv2.DeleteJobsByReferenceRequest:
		err = jsonArray(dec, "the body must be a JSON array of reference numbers", deleteItems, func(i int) error {
			v, err := jsonScalar(dec, func() string { return fmt.Sprintf("$[%d]", i) })
			m.ReferenceNumbers = append(m.ReferenceNumbers, rules.OrEmpty(v))
			return err
		})
	default:
		return fmt.Errorf("this request takes no body")
	}
	if err != nil {
		return jsonError(err)
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return errors.New("malformed JSON: unexpected data after the top-level value")
	}
	return nil
}

// path names a place in the body for an error message; it is a func so the
// text is only built when there is an error to report.
type path func() string

func (p path) field(name string) path { return func() string { return p() + "." + name } }
func (p path) index(i int) path       { return func() string { return fmt.Sprintf("%s[%d]", p(), i) } }

// jsonArray reads an array of at most limit.max elements, calling item for each;
// notArray is the message for a value that is not an array.
func jsonArray(dec *jsontext.Decoder, notArray string, limit itemLimit, item func(i int) error) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() != '[' {
		return errors.New(notArray)
	}
	for i := 0; dec.PeekKind() != ']'; i++ {
		if i == limit.max {
			return limit.exceeded()
		}
		if err := item(i); err != nil {
			return err
		}
	}
	_, err = dec.ReadToken() // the closing ], or the error that stopped the loop
	return err
}

// jsonImport reads a job import: {"jobs": [...], "callbackUrl": ..., "deleteJobs": ...}.
// Other members are ignored.
func jsonImport(dec *jsontext.Decoder, m *restv2.CreateJobImportRequest) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() != '{' {
		return errors.New(`the body must be a JSON object: {"jobs": [...], "callbackUrl": "...", "deleteJobs": false}`)
	}
	sawJobs := false
	named := map[string]bool{}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		name := tok.String()
		if named[name] {
			return repeatedMemberError("", name)
		}
		named[name] = true
		switch name {
		case "jobs":
			sawJobs = true
			jobs := jobReader{dec: dec}
			if err := jsonArray(dec, "jobs: must be an array of jobs", importJobs, func(i int) error {
				j, err := jobs.job(func() string { return fmt.Sprintf("$.jobs[%d]", i) })
				m.Jobs = append(m.Jobs, j)
				return err
			}); err != nil {
				return err
			}
		case "callbackUrl":
			v, err := jsonScalar(dec, func() string { return "$.callbackUrl" })
			if err != nil {
				return err
			}
			m.CallbackUrl = v
		case "deleteJobs":
			v, err := jsonScalar(dec, func() string { return "$.deleteJobs" })
			if err != nil {
				return err
			}
			del, ok := rules.Bool(rules.OrEmpty(v))
			if !ok {
				return fmt.Errorf("deleteJobs: %q is not a boolean (true or false)", rules.OrEmpty(v))
			}
			m.DeleteJobs = del
		default:
			if err := skipChecked(dec, name); err != nil {
				return err
			}
		}
	}
	if _, err := dec.ReadToken(); err != nil { // the closing }
		return err
	}
	if !sawJobs {
		return errors.New("jobs: is required, an array of jobs")
	}
	return nil
}

// jobReader reads job objects from one body. The values of a job are
// unquoted back to back into one buffer and become one string, which the
// fields share: a feed of thousands of jobs would otherwise cost an
// allocation for each name and two for each value.
type jobReader struct {
	dec    *jsontext.Decoder
	text   []byte        // the current job's values, unquoted
	values []memberValue // and where each member's value is in text, in order
	named  namedMembers  // the current job's member names so far
}

// memberValue is one decoded value of a job member: text[start:end] of
// field (nil for an unknown name, kept under name).
type memberValue struct {
	field      *jobField
	name       string
	start, end int
	null       bool
}

// job reads one job object; at names it in errors.
func (r *jobReader) job(at path) (*restv2.JobInput, error) {
	tok, err := r.dec.ReadToken()
	if err != nil {
		return nil, err
	}
	if tok.Kind() != '{' {
		return nil, fmt.Errorf("%s: each job must be a JSON object", at())
	}
	r.text, r.values = r.text[:0], r.values[:0]
	r.named.reset()
	for r.dec.PeekKind() != '}' {
		quoted, err := r.dec.ReadValue() // object names are always strings
		if err != nil {
			return nil, err
		}
		field, name := memberField(quoted)
		if r.named.again(field, name) {
			// The first value stays; the job is refused for the repeat.
			value, err := jsonValueText(r.dec)
			if err != nil {
				return nil, err
			}
			r.named.repeat(name, value)
			continue
		}
		if err := r.member(at, field, name); err != nil {
			return nil, err
		}
	}
	if _, err := r.dec.ReadToken(); err != nil { // the closing }
		return nil, err
	}
	j := r.build()
	j.RepeatedFields = r.named.repeated
	return j, nil
}

// memberField looks a member's quoted name up without making a string of
// it, unless it is unknown or escaped.
func memberField(quoted []byte) (*jobField, string) {
	if bytes.IndexByte(quoted, '\\') < 0 {
		if f := jobFields[string(quoted[1:len(quoted)-1])]; f != nil {
			return f, f.name
		}
	}
	// As a decoded token: escapes resolved, invalid UTF-8 as U+FFFD.
	unquoted, _ := jsontext.AppendUnquote(nil, quoted)
	name := string(unquoted)
	return jobFields[name], name
}

// member reads the value of one member whose name has been read.
func (r *jobReader) member(at path, field *jobField, name string) error {
	note := func(start int, null bool) {
		r.values = append(r.values, memberValue{field: field, name: name, start: start, end: len(r.text), null: null})
	}
	start := len(r.text)
	switch kind := r.dec.PeekKind(); {
	case field != nil && field.list != nil && kind == '[':
		if _, err := r.dec.ReadToken(); err != nil {
			return err
		}
		for k := 0; r.dec.PeekKind() != ']'; k++ {
			start := len(r.text)
			var null bool
			var err error
			if r.text, null, err = appendScalar(r.dec, r.text, at.field(name).index(k)); err != nil {
				return err
			}
			note(start, null)
		}
		_, err := r.dec.ReadToken()
		return err
	case field != nil:
		var null bool
		var err error
		if r.text, null, err = appendScalar(r.dec, r.text, at.field(name)); err != nil {
			return err
		}
		note(start, null)
	case kind == '{' || kind == '[': // unknown structure: kept as compact JSON
		raw, err := r.dec.ReadValue()
		if err != nil {
			return err
		}
		compact, repeated, err := compactJSON(raw)
		if err != nil {
			return err
		}
		if repeated != "" {
			r.named.repeat(name+repeated, nil)
		}
		r.text = append(r.text, compact...)
		note(start, false)
	default: // unknown scalar: kept as sent
		var null bool
		var err error
		if r.text, null, err = appendScalar(r.dec, r.text, nil); err != nil {
			return err
		}
		note(start, null)
	}
	return nil
}

// build makes the job of the values read, in the order they came.
func (r *jobReader) build() *restv2.JobInput {
	j := &restv2.JobInput{}
	all := string(r.text)
	strs := make([]string, len(r.values))
	for i, v := range r.values {
		var value *string
		if !v.null {
			strs[i] = all[v.start:v.end]
			value = &strs[i]
		}
		v.field.set(j, v.name, value)
	}
	return j
}

// jsonValueText reads any value as the text an entry shows: a scalar as
// jsonScalar reads it, an object or array as compact JSON; nil for null.
func jsonValueText(dec *jsontext.Decoder) (*string, error) {
	if k := dec.PeekKind(); k != '{' && k != '[' {
		return jsonScalar(dec, nil)
	}
	raw, err := dec.ReadValue()
	if err != nil {
		return nil, err
	}
	compact, _, err := compactJSON(raw)
	if err != nil {
		return nil, err
	}
	s := string(compact)
	return &s, nil
}

// compactJSON is a compact copy of the object or array raw (which is the
// decoder's own buffer), and the place of the first member one of its
// objects names twice, as a path from raw (".dental", ".0.name"), or "".
// The check costs nothing more than the compacting, which reads it all.
func compactJSON(raw []byte) (compact []byte, repeated string, err error) {
	v := jsontext.Value(bytes.Clone(raw))
	err = v.Compact(jsontext.AllowDuplicateNames(false))
	var syntax *jsontext.SyntacticError
	if !errors.Is(err, jsontext.ErrDuplicateName) || !errors.As(err, &syntax) {
		return v, "", err
	}
	v = jsontext.Value(bytes.Clone(raw))
	return v, dottedPath(syntax.JSONPointer), v.Compact()
}

// dottedPath writes a JSON pointer (/benefits/0/name) as the dotted path
// messages name members by (.benefits.0.name).
func dottedPath(p jsontext.Pointer) string {
	var b strings.Builder
	for _, token := range strings.Split(string(p), "/")[1:] {
		token = strings.ReplaceAll(strings.ReplaceAll(token, "~1", "/"), "~0", "~")
		b.WriteString("." + token)
	}
	return b.String()
}

// skipChecked skips the value of a member a body does not use, refusing it
// when an object in it names a member twice.
func skipChecked(dec *jsontext.Decoder, name string) error {
	if k := dec.PeekKind(); k != '{' && k != '[' {
		return dec.SkipValue()
	}
	raw, err := dec.ReadValue()
	if err != nil {
		return err
	}
	_, repeated, err := compactJSON(raw)
	if err == nil && repeated != "" {
		return repeatedMemberError("", name+repeated)
	}
	return err
}

// repeatedMemberError refuses a body naming a member twice; prefix places
// the object in the body ("auth.").
func repeatedMemberError(prefix, name string) error {
	return fmt.Errorf("%s%s: is named twice in one object; a JSON object names each member once", prefix, quoteName(name))
}

// jsonScalar reads one value that must be a string, number, boolean or null
// and returns it as the text the client meant: a string's contents, a
// number's digits, true or false; nil for null. Objects and arrays are
// refused, naming the place.
func jsonScalar(dec *jsontext.Decoder, at path) (*string, error) {
	b, null, err := appendScalar(dec, nil, at)
	if err != nil || null {
		return nil, err
	}
	s := string(b)
	return &s, nil
}

// appendScalar is jsonScalar appending the text to dst; null reports a null.
func appendScalar(dec *jsontext.Decoder, dst []byte, at path) (_ []byte, null bool, _ error) {
	switch dec.PeekKind() {
	case '{', '[':
		what := "an object"
		if dec.PeekKind() == '[' {
			what = "an array"
		}
		if at == nil {
			return dst, false, fmt.Errorf("expected a single value, got %s", what)
		}
		return dst, false, fmt.Errorf("%s: expected a single value, got %s", at(), what)
	case 'n':
		_, err := dec.ReadToken()
		return dst, true, err
	case '"':
		raw, err := dec.ReadValue()
		if err != nil {
			return dst, false, err
		}
		// As a decoded token: invalid UTF-8 and lone surrogates become U+FFFD.
		dst, _ = jsontext.AppendUnquote(dst, raw)
		return dst, false, nil
	default: // number, true, false: the literal as written
		raw, err := dec.ReadValue()
		if err != nil {
			return dst, false, err
		}
		return append(dst, raw...), false, nil
	}
}

// jsonError words decoder errors for people, with the byte offset.
func jsonError(err error) error {
	var syntax *jsontext.SyntacticError
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("malformed JSON: the body ends too soon")
	case errors.As(err, &syntax):
		return fmt.Errorf("malformed JSON at byte %d: %v", syntax.ByteOffset, syntax.Err)
	}
	return err
}
