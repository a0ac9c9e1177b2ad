package imports

import (
	"encoding/binary"
	"strconv"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/server/store"
)

// An import's results hold two lists that grow with its jobs:
// results.errors, one entry per failed job (up to 50,000, tens of
// megabytes), and results.ignoredValues, one entry per value a job sent
// that the import did not use (any number per job). REST's GET and the
// callback carry both whole; a gRPC answer and a job_import.completed
// event carry one page of each, so that neither passes the 4 MiB a gRPC
// client takes by default (docs/api.md 7).
const (
	// MaxResultsPage is the most entries a page holds of each list:
	// the default and largest page_size of GetJobImport, and what an event
	// keeps.
	MaxResultsPage = 1000
	// importResultsPageBytes bounds the entries of a page, both lists
	// together, by their size. An error entry holds a message per field of
	// its job and an ignored value echoes what was sent, each up to 1,024
	// characters, so 1,000 of either can pass 4 MiB; the page then holds
	// fewer. Shared by the two lists, it keeps a page under 4 MiB whatever
	// the mix.
	importResultsPageBytes = 2 << 20
)

// importEntrySizes measures the entries of both lists as one kind of
// answer writes them.
type importEntrySizes struct {
	errorSize   func(*restv2.JobImportError) int
	ignoredSize func(*restv2.BatchEntry) int
}

var (
	// importProtoSizes are the entries' sizes in a gRPC answer: the
	// natural messages have the same fields and numbers (a renamed field
	// of an ignored value can differ by a few bytes, far within the
	// margin between the budget and 4 MiB).
	importProtoSizes = importEntrySizes{
		errorSize:   func(e *restv2.JobImportError) int { return proto.Size(e) },
		ignoredSize: func(e *restv2.BatchEntry) int { return proto.Size(e) },
	}
	// importJSONSizes are the entries' sizes as the REST renderer writes
	// them in an event's data.
	importJSONSizes = importEntrySizes{errorSize: importErrorJSONSize, ignoredSize: ignoredValueJSONSize}
)

// importResultsPosition is where a page starts in each list.
type importResultsPosition struct{ errors, ignoredValues int }

// importResultsPage is the page of r's lists that starts at at: at most
// size entries of each, and, errors first, no more than fit
// importResultsPageBytes as sizes measures them. A page holds at least one
// entry while either list has any left, so paging always moves on.
func importResultsPage(r *restv2.JobImportResults, at importResultsPosition, size int, sizes importEntrySizes) ([]*restv2.JobImportError, []*restv2.BatchEntry) {
	errs, left := pageWithin(r.GetErrors(), at.errors, size, importResultsPageBytes, sizes.errorSize, true)
	ignored, _ := pageWithin(r.GetIgnoredValues(), at.ignoredValues, size, left, sizes.ignoredSize, len(errs) == 0)
	return errs, ignored
}

// pageWithin is list from offset on, cut to at most size entries and to
// what fits budget as sizeOf measures them (the first entry too when
// atLeastOne), and the budget left after it.
func pageWithin[T any](list []T, offset, size, budget int, sizeOf func(T) int, atLeastOne bool) ([]T, int) {
	if offset >= len(list) {
		return nil, budget
	}
	end := min(len(list), offset+size)
	for i := offset; i < end; i++ {
		n := sizeOf(list[i])
		if n > budget && (i > offset || !atLeastOne) {
			return list[offset:i], budget
		}
		budget -= n
	}
	return list[offset:end], budget
}

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

// ignoredValueJSONSize is an entry of results.ignoredValues as the REST
// renderer writes it in an event's data, unset members as null:
// {"index":N,"referenceNumber":...,"field":...,"value":...,"message":...}.
func ignoredValueJSONSize(e *restv2.BatchEntry) int {
	n := len(`{"index":,"referenceNumber":,"field":,"value":,"message":}`) + jsonStringSize(e.Message)
	if e.Index == nil {
		n += len("null")
	} else {
		n += len(strconv.Itoa(int(*e.Index)))
	}
	for _, s := range []*string{e.ReferenceNumber, e.Field, e.Value} {
		if s == nil {
			n += len("null")
		} else {
			n += jsonStringSize(*s)
		}
	}
	return n
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

// importResultsScope is the scope of the page tokens of an import's
// results: a token walks the lists of the import it was answered for only.
func importResultsScope(importID string) string { return "job-import-results|" + importID }

// appendPosition is the token position of at: its two offsets as varints.
func (at importResultsPosition) appendPosition(b []byte) []byte {
	return binary.AppendUvarint(binary.AppendUvarint(b, uint64(at.errors)), uint64(at.ignoredValues))
}

// within says whether a token's position at fits lists of lengths n, with
// entries left in one of them: a token answered for them always does.
func (at importResultsPosition) within(n store.ResultsLengths) bool {
	return at.errors <= n.Errors && at.ignoredValues <= n.IgnoredValues &&
		(at.errors < n.Errors || at.ignoredValues < n.IgnoredValues)
}

// parseResultsPosition reads a position appendPosition wrote.
func parseResultsPosition(p []byte) (importResultsPosition, bool) {
	errs, n := binary.Uvarint(p)
	if n <= 0 || errs > 1<<31 {
		return importResultsPosition{}, false
	}
	ignored, m := binary.Uvarint(p[n:])
	if m <= 0 || n+m != len(p) || ignored > 1<<31 {
		return importResultsPosition{}, false
	}
	return importResultsPosition{errors: int(errs), ignoredValues: int(ignored)}, true
}
