package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	jobboardv2 "jobboard/gen/jobboard/v2"
)

// decodeJSON fills a request message from a JSON body. The body is read
// token by token so field order is kept and every value can be reported as
// the text the client sent.
func decodeJSON(data []byte, msg any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var err error
	switch m := msg.(type) {
	case *jobboardv2.PostJobsRequest:
		err = jsonArray(dec, "a JSON array of jobs", maxBodyItems, func(i int) error {
			j, err := jsonJob(dec, fmt.Sprintf("$[%d]", i))
			m.Jobs = append(m.Jobs, j)
			return err
		})
	case *jobboardv2.CreateJobImportRequest:
		err = jsonImport(dec, m)
	case *jobboardv2.DeleteJobsRequest:
		err = jsonArray(dec, "a JSON array of job ids", maxBodyItems, func(i int) error {
			v, err := jsonScalar(dec, fmt.Sprintf("$[%d]", i))
			m.Ids = append(m.Ids, deref(v))
			return err
		})
	case *jobboardv2.DeleteJobsByReferenceRequest:
		err = jsonArray(dec, "a JSON array of reference numbers", maxBodyItems, func(i int) error {
			v, err := jsonScalar(dec, fmt.Sprintf("$[%d]", i))
			m.ReferenceNumbers = append(m.ReferenceNumbers, deref(v))
			return err
		})
	default:
		return fmt.Errorf("this request takes no body")
	}
	if err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("malformed JSON: unexpected data after the top-level value")
	}
	return nil
}

// jsonArray reads an array of at most max elements, calling item for each.
func jsonArray(dec *json.Decoder, what string, max int, item func(i int) error) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return fmt.Errorf("the body must be %s", what)
	}
	for i := 0; dec.More(); i++ {
		if i == max {
			return tooManyItems(max)
		}
		if err := item(i); err != nil {
			return err
		}
	}
	_, err = dec.Token() // the closing ]
	return err
}

// jsonImport reads a job import: {"jobs": [...], "callbackUrl": ..., "deleteJobs": ...}.
// Other members are ignored.
func jsonImport(dec *json.Decoder, m *jobboardv2.CreateJobImportRequest) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return errors.New(`the body must be a JSON object: {"jobs": [...], "callbackUrl": "...", "deleteJobs": false}`)
	}
	sawJobs := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok.(string) {
		case "jobs":
			sawJobs = true
			if err := jsonArray(dec, "jobs: must be an array of jobs", maxImportItems, func(i int) error {
				j, err := jsonJob(dec, fmt.Sprintf("$.jobs[%d]", i))
				m.Jobs = append(m.Jobs, j)
				return err
			}); err != nil {
				if strings.HasPrefix(err.Error(), "the body must be jobs:") {
					return errors.New("jobs: must be an array of jobs")
				}
				return err
			}
		case "callbackUrl":
			v, err := jsonScalar(dec, "$.callbackUrl")
			if err != nil {
				return err
			}
			m.CallbackUrl = v
		case "deleteJobs":
			v, err := jsonScalar(dec, "$.deleteJobs")
			if err != nil {
				return err
			}
			switch strings.ToLower(deref(v)) {
			case "true", "1":
				m.DeleteJobs = true
			case "false", "0", "":
			default:
				return fmt.Errorf("deleteJobs: %q is not a boolean (true or false)", deref(v))
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return err
			}
		}
	}
	if _, err := dec.Token(); err != nil { // the closing }
		return err
	}
	if !sawJobs {
		return errors.New("jobs: is required, an array of jobs")
	}
	return nil
}

// jsonJob reads one job object; path names it in errors.
func jsonJob(dec *json.Decoder, path string) (*jobboardv2.JobInput, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("%s: each job must be a JSON object", path)
	}
	j := &jobboardv2.JobInput{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name := tok.(string) // object keys are always strings
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		path := path + "." + name
		_, scalar := jobScalars[name]
		_, list := jobLists[name]
		switch {
		case list && raw[0] == '[':
			var items []json.RawMessage
			if err := json.Unmarshal(raw, &items); err != nil {
				return nil, err
			}
			for k, item := range items {
				v, err := jsonText(item, fmt.Sprintf("%s[%d]", path, k))
				if err != nil {
					return nil, err
				}
				setJobField(j, name, v)
			}
		case scalar || list:
			v, err := jsonText(raw, path)
			if err != nil {
				return nil, err
			}
			setJobField(j, name, v)
		default: // unknown: kept as sent, compact JSON for structures
			v, err := jsonText(raw, "")
			if err != nil {
				var buf bytes.Buffer
				_ = json.Compact(&buf, raw)
				s := buf.String()
				v = &s
			}
			setJobField(j, name, v)
		}
	}
	_, err = dec.Token() // the closing }
	return j, err
}

// jsonScalar reads one value that must be a string, number, boolean or null.
func jsonScalar(dec *json.Decoder, path string) (*string, error) {
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, err
	}
	return jsonText(raw, path)
}

// jsonText returns a scalar JSON value as the text the client meant: a
// string's contents, a number's digits, true or false; nil for null. Objects
// and arrays are refused, naming the path.
func jsonText(raw json.RawMessage, path string) (*string, error) {
	switch raw[0] {
	case 'n':
		return nil, nil
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return &s, nil
	case '{':
		return nil, fmt.Errorf("%s: expected a single value, got an object", path)
	case '[':
		return nil, fmt.Errorf("%s: expected a single value, got an array", path)
	default: // number, true, false
		s := string(raw)
		return &s, nil
	}
}

// jsonError words decoder errors for people, with the byte offset.
func jsonError(err error) error {
	var syntax *json.SyntaxError
	switch {
	case errors.As(err, &syntax):
		return fmt.Errorf("malformed JSON at byte %d: %v", syntax.Offset, err)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("malformed JSON: the body ends too soon")
	}
	return err
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
