package server

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"google.golang.org/protobuf/proto"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
)

// An import's results.errors hold one entry per failed job, up to 50,000
// of them: tens of megabytes. REST's GET and the callback carry them all;
// a gRPC answer and a job_import.completed event carry one page, so that
// neither passes the 4 MiB a gRPC client takes by default (contract §10).
const (
	// maxImportErrorsPage is the most entries a page holds: the default
	// and largest page_size of GetJobImport, and what an event keeps.
	maxImportErrorsPage = 1000
	// importErrorsPageBytes bounds the entries of a page by their size.
	// An entry holds a message per field of its job, each echoing up to
	// 1,024 characters, so 1,000 of them can pass 4 MiB; the page then
	// holds fewer.
	importErrorsPageBytes = 2 << 20
)

// importErrorsPage is the page of errs that starts at offset: at most size
// entries, and no more than fit importErrorsPageBytes as sizeOf measures
// them (at least one).
func importErrorsPage(errs []*restv2.JobImportError, offset, size int, sizeOf func(*restv2.JobImportError) int) []*restv2.JobImportError {
	end := min(len(errs), offset+size)
	total := 0
	for i := offset; i < end; i++ {
		if total += sizeOf(errs[i]); i > offset && total > importErrorsPageBytes {
			return errs[offset:i]
		}
	}
	return errs[offset:end]
}

// importErrorProtoSize is an entry's size in a gRPC answer: the natural
// message has the same fields and numbers.
func importErrorProtoSize(e *restv2.JobImportError) int { return proto.Size(e) }

// importErrorJSONSize is an entry's size as the REST renderer writes it in
// an event's data: {"index":N,"messages":[...],"referenceNumber":...}.
func importErrorJSONSize(e *restv2.JobImportError) int {
	n := len(`{"index":,"messages":[],"referenceNumber":}`) + len(strconv.Itoa(int(e.Index)))
	for i, m := range e.Messages {
		if i > 0 {
			n++ // the comma
		}
		n += jsonStringSize(m)
	}
	if e.ReferenceNumber == nil {
		return n + len("null")
	}
	return n + jsonStringSize(*e.ReferenceNumber)
}

// jsonStringSize is the size of s as a JSON string with the escapes the
// REST renderer writes: \uXXXX for control characters, U+2028, U+2029 and
// invalid UTF-8 (as U+FFFD), two bytes for quotes, backslashes and the
// usual control characters.
func jsonStringSize(s string) int {
	n := 2
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t':
			n += 2
		case r < 0x20 || r == '\u2028' || r == '\u2029' || (r == utf8.RuneError && size == 1):
			n += 6
		default:
			n += size
		}
	}
	return n
}

// importErrorsScope is the scope of the page tokens of an import's errors:
// a token walks the errors of the import it was answered for only.
func importErrorsScope(importID string) string { return "job-import-errors|" + importID }

// withErrorsOmitted is an import's JSON (the data member of GET) with
// results.errorsOmitted written right after results.errors, the text
// otherwise unchanged.
func withErrorsOmitted(data []byte, omitted int) ([]byte, error) {
	end, err := memberEnd(data, "results", "errors")
	if err != nil {
		return nil, fmt.Errorf("results.errors: %w", err)
	}
	out := make([]byte, 0, len(data)+32)
	out = append(out, data[:end]...)
	out = append(out, `,"errorsOmitted":`...)
	out = strconv.AppendInt(out, int64(omitted), 10)
	return append(out, data[end:]...), nil
}

// memberEnd is the offset in the JSON object data just past the value of
// the member path names (each name a member of the object before).
func memberEnd(data []byte, path ...string) (int, error) {
	dec := jsontext.NewDecoder(bytes.NewBuffer(data)) // read in place, not copied
	for depth, name := range path {
		if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
			return 0, fmt.Errorf("%s is not an object: %v", name, err)
		}
		for {
			if dec.PeekKind() != '"' {
				return 0, errors.New("no member " + name)
			}
			tok, err := dec.ReadToken()
			if err != nil {
				return 0, err
			}
			if tok.String() == name {
				break
			}
			if err := dec.SkipValue(); err != nil {
				return 0, err
			}
		}
		if depth == len(path)-1 {
			if err := dec.SkipValue(); err != nil {
				return 0, err
			}
		}
	}
	return int(dec.InputOffset()), nil
}
