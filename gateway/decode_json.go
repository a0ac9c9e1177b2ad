package gateway

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/go-json-experiment/json/jsontext"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/internal/rules"
)

// decodeJSON fills a request message from a JSON body. The body is read
// token by token with a streaming tokenizer, so field order is kept, every
// value can be reported as the text the client sent, and a feed of
// thousands of jobs is read in one pass.
func decodeJSON(data []byte, msg any) error {
	return decodeJSONFrom(bytes.NewReader(data), msg)
}

// decodeJSONFrom is decodeJSON of a body read from r.
func decodeJSONFrom(r io.Reader, msg any) error {
	dec := jsontext.NewDecoder(r,
		// As encoding/json did: the last of repeated names wins, and an
		// escaped lone surrogate becomes U+FFFD rather than an error.
		jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	var err error
	switch m := msg.(type) {
	case *restv2.PostJobsRequest:
		err = jsonArray(dec, "the body must be a JSON array of jobs", listItems, func(i int) error {
			j, err := jsonJob(dec, func() string { return fmt.Sprintf("$[%d]", i) })
			m.Jobs = append(m.Jobs, j)
			return err
		})
	case *restv2.CreateJobImportRequest:
		err = jsonImport(dec, m)
	case *restv2.Webhook:
		err = jsonWebhook(dec, m)
	case *restv2.DeleteJobsRequest:
		err = jsonArray(dec, "the body must be a JSON array of job ids", listItems, func(i int) error {
			v, err := jsonScalar(dec, func() string { return fmt.Sprintf("$[%d]", i) })
			m.Ids = append(m.Ids, rules.OrEmpty(v))
			return err
		})
	case *restv2.DeleteJobsByReferenceRequest:
		err = jsonArray(dec, "the body must be a JSON array of reference numbers", listItems, func(i int) error {
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
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return err
		}
		switch name.String() {
		case "jobs":
			sawJobs = true
			if err := jsonArray(dec, "jobs: must be an array of jobs", importJobs, func(i int) error {
				j, err := jsonJob(dec, func() string { return fmt.Sprintf("$.jobs[%d]", i) })
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
			if err := dec.SkipValue(); err != nil {
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

// jsonJob reads one job object; at names it in errors.
func jsonJob(dec *jsontext.Decoder, at path) (*restv2.JobInput, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	if tok.Kind() != '{' {
		return nil, fmt.Errorf("%s: each job must be a JSON object", at())
	}
	j := &restv2.JobInput{}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		name := tok.String() // object names are always strings
		_, scalar := jobScalars[name]
		_, list := jobLists[name]
		switch kind := dec.PeekKind(); {
		case list && kind == '[':
			if _, err := dec.ReadToken(); err != nil {
				return nil, err
			}
			for k := 0; dec.PeekKind() != ']'; k++ {
				v, err := jsonScalar(dec, at.field(name).index(k))
				if err != nil {
					return nil, err
				}
				setJobField(j, name, v)
			}
			if _, err := dec.ReadToken(); err != nil {
				return nil, err
			}
		case scalar || list:
			v, err := jsonScalar(dec, at.field(name))
			if err != nil {
				return nil, err
			}
			setJobField(j, name, v)
		case kind == '{' || kind == '[': // unknown structure: kept as compact JSON
			raw, err := dec.ReadValue()
			if err != nil {
				return nil, err
			}
			// The value is the decoder's own buffer: compact a copy.
			raw = bytes.Clone(raw)
			if err := raw.Compact(); err != nil {
				return nil, err
			}
			s := string(raw)
			setJobField(j, name, &s)
		default: // unknown scalar: kept as sent
			v, err := jsonScalar(dec, nil)
			if err != nil {
				return nil, err
			}
			setJobField(j, name, v)
		}
	}
	_, err = dec.ReadToken() // the closing }
	return j, err
}

// jsonScalar reads one value that must be a string, number, boolean or null
// and returns it as the text the client meant: a string's contents, a
// number's digits, true or false; nil for null. Objects and arrays are
// refused, naming the place.
func jsonScalar(dec *jsontext.Decoder, at path) (*string, error) {
	switch dec.PeekKind() {
	case '{', '[':
		what := "an object"
		if dec.PeekKind() == '[' {
			what = "an array"
		}
		if at == nil {
			return nil, fmt.Errorf("expected a single value, got %s", what)
		}
		return nil, fmt.Errorf("%s: expected a single value, got %s", at(), what)
	case 'n':
		_, err := dec.ReadToken()
		return nil, err
	case '"':
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		s := tok.String()
		return &s, nil
	default: // number, true, false: the literal as written
		raw, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		s := string(raw)
		return &s, nil
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
