package imports

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/truckjobs/jobboard/domain"
	"github.com/truckjobs/jobboard/gateway/render"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/server/leads"
	"github.com/truckjobs/jobboard/server/store"
)

// TestImportResultsPosition: a token's position holds both offsets, and
// anything else in its place is refused.
func TestImportResultsPosition(t *testing.T) {
	for _, at := range []importResultsPosition{{}, {errors: 1000}, {ignoredValues: 1000}, {errors: 40_000, ignoredValues: 39_000}} {
		if got, ok := parseResultsPosition(at.appendPosition(nil)); !ok || got != at {
			t.Errorf("%+v read back as %+v, %v", at, got, ok)
		}
	}
	for _, p := range [][]byte{nil, {1}, {1, 2, 3}, {0x80}, binary.AppendUvarint(binary.AppendUvarint(nil, 1<<40), 1)} {
		if got, ok := parseResultsPosition(p); ok {
			t.Errorf("%v read as %+v", p, got)
		}
	}
}

// TestImportCompletedEventBounded: the event keeps the first 1,000 errors
// and the first 1,000 ignored values, fewer when they are large (an entry
// can echo a value per field of its job), errors first, and says how many
// of each it left out; the rest of its data is GET's text.
func TestImportCompletedEventBounded(t *testing.T) {
	ob := leads.New(leads.Config{Render: render.JSON}).Outbox
	completed := time.Date(2026, 11, 2, 14, 5, 9, 0, time.UTC)
	tests := []struct {
		name                    string
		errors, errorSize       int
		ignored, ignoredSize    int
		wantErrors, wantIgnored int
	}{
		{"none", 0, 10, 0, 10, 0, 0},
		{"a few", 5, 10, 3, 10, 5, 3},
		{"exactly 1,000", 1000, 10, 1000, 10, 1000, 1000},
		{"one more", 1001, 10, 1001, 10, 1000, 1000},
		{"40,000 of each", 40_000, 10, 40_000, 10, 1000, 1000},
		{"ignored values only", 0, 10, 40_000, 10, 0, 1000},
		// 20 KB each: 2 MiB holds 104 of them.
		{"large errors", 3000, 20_000, 5, 10, 104, 5},
		{"large ignored values", 0, 10, 3000, 20_000, 0, 104},
		// The errors take the budget first; what is left holds no more.
		{"large entries in both", 3000, 20_000, 3000, 20_000, 104, 0},
		// The 104 errors leave about 12 KB: 89 small ignored values.
		{"large errors, small ignored values", 3000, 20_000, 3000, 10, 104, 89},
		// Larger than the whole budget: the event still holds one.
		{"one huge error", 2, 3 << 20, 2, 10, 1, 0},
		{"one huge ignored value", 0, 10, 2, 3 << 20, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			results := &restv2.JobImportResults{Failed: int32(tt.errors), Processed: int32(tt.errors),
				Errors: manyErrors(tt.errors, tt.errorSize), IgnoredValues: manyIgnored(tt.ignored, tt.ignoredSize)}
			imp := store.JobImport{ID: "9b2f4c1e-0000-4000-8000-000000000001", Status: domain.ImportComplete,
				RequestedAt: completed, CompletedAt: &completed, Results: storedResults(results), BaseURL: "https://jobs.example.com"}
			event, err := completedEvent(ob, imp)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Errors               []json.RawMessage `json:"errors"`
				ErrorsOmitted        *int              `json:"errorsOmitted"`
				IgnoredValues        []json.RawMessage `json:"ignoredValues"`
				IgnoredValuesOmitted *int              `json:"ignoredValuesOmitted"`
			}
			envelope := struct{ Results any }{&got}
			if err := json.Unmarshal(event.Data, &envelope); err != nil {
				t.Fatal(err)
			}
			if len(got.Errors) != tt.wantErrors || got.ErrorsOmitted == nil || *got.ErrorsOmitted != tt.errors-tt.wantErrors {
				t.Errorf("kept %d errors, errorsOmitted %v; want %d and %d", len(got.Errors), got.ErrorsOmitted, tt.wantErrors, tt.errors-tt.wantErrors)
			}
			if len(got.IgnoredValues) != tt.wantIgnored || got.IgnoredValuesOmitted == nil || *got.IgnoredValuesOmitted != tt.ignored-tt.wantIgnored {
				t.Errorf("kept %d ignored values, ignoredValuesOmitted %v; want %d and %d",
					len(got.IgnoredValues), got.IgnoredValuesOmitted, tt.wantIgnored, tt.ignored-tt.wantIgnored)
			}
			if tt.wantErrors+tt.wantIgnored > 1 && len(event.Data) > importResultsPageBytes+4096 {
				t.Errorf("event data of %d bytes", len(event.Data))
			}
			// GET's data with the same entries, and each count right
			// after its list.
			msg, _ := importMessage(imp)
			msg.Results.Errors = msg.Results.Errors[:tt.wantErrors]
			msg.Results.IgnoredValues = msg.Results.IgnoredValues[:tt.wantIgnored]
			body, _ := render.JSON(&restv2.GetJobImportResponse{Data: msg, Links: importLinks(imp)})
			data, _ := dataMember(body)
			want := bytes.Replace(data, []byte(`],"ignoredValues":`), fmt.Appendf(nil, `],"errorsOmitted":%d,"ignoredValues":`, tt.errors-tt.wantErrors), 1)
			want = bytes.Replace(want, []byte(`]},"status":`), fmt.Appendf(nil, `],"ignoredValuesOmitted":%d},"status":`, tt.ignored-tt.wantIgnored), 1)
			if !bytes.Equal(event.Data, want) {
				t.Errorf("event data\n%.400s\nwant\n%.400s", event.Data, want)
			}
		})
	}
}

// TestImportResultsPageBytes: a gRPC page holds at most the page size of
// each list, fewer once the entries, errors first, pass
// importResultsPageBytes, and at least one entry.
func TestImportResultsPageBytes(t *testing.T) {
	tests := []struct {
		name                    string
		errors, errorSize       int
		ignored, ignoredSize    int
		at                      importResultsPosition
		pageSize                int
		wantErrors, wantIgnored int
	}{
		{"small entries, default size", 2500, 10, 2500, 10, importResultsPosition{}, 1000, 1000, 1000},
		{"small entries, the last page", 2500, 10, 2500, 10, importResultsPosition{2000, 2000}, 1000, 500, 500},
		{"small entries, a smaller size", 2500, 10, 2500, 10, importResultsPosition{7, 9}, 3, 3, 3},
		{"errors exhausted", 2500, 10, 2500, 10, importResultsPosition{2500, 1000}, 1000, 0, 1000},
		{"ignored values exhausted", 2500, 10, 100, 10, importResultsPosition{1000, 100}, 1000, 1000, 0},
		{"20 KB errors", 3000, 20_000, 0, 10, importResultsPosition{}, 1000, 104, 0},
		{"20 KB ignored values", 0, 10, 3000, 20_000, importResultsPosition{}, 1000, 0, 104},
		{"20 KB entries in both", 3000, 20_000, 3000, 20_000, importResultsPosition{}, 1000, 104, 0},
		{"an error past the budget", 3, 3 << 20, 3, 10, importResultsPosition{1, 0}, 1000, 1, 0},
		{"an ignored value past the budget", 3, 10, 3, 3 << 20, importResultsPosition{3, 1}, 1000, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &restv2.JobImportResults{Errors: manyErrors(tt.errors, tt.errorSize), IgnoredValues: manyIgnored(tt.ignored, tt.ignoredSize)}
			errs, ignored := importResultsPage(r, tt.at, tt.pageSize, importProtoSizes)
			if len(errs) != tt.wantErrors || len(ignored) != tt.wantIgnored {
				t.Fatalf("page of %d errors and %d ignored values, want %d and %d", len(errs), len(ignored), tt.wantErrors, tt.wantIgnored)
			}
			if (len(errs) > 0 && errs[0] != r.Errors[tt.at.errors]) || (len(ignored) > 0 && ignored[0] != r.IgnoredValues[tt.at.ignoredValues]) {
				t.Fatalf("the page does not start at %+v", tt.at)
			}
			size := 0
			for _, e := range errs {
				size += proto.Size(e)
			}
			for _, v := range ignored {
				size += proto.Size(v)
			}
			if len(errs)+len(ignored) > 1 && size > importResultsPageBytes {
				t.Errorf("page of %d bytes", size)
			}
		})
	}
}

// TestJSONStringSize: the size an event's error entry is counted at is the
// size the REST renderer writes, escapes included.
func TestJSONStringSize(t *testing.T) {
	for _, s := range awkwardStrings {
		e := &restv2.JobImportError{Index: 12, Messages: []string{s}, ReferenceNumber: proto.String(s)}
		if s == "" {
			e.ReferenceNumber = nil
		}
		if strings.Contains(s, "\x00") {
			e.Messages = strings.Split(s, "\x00")
		}
		rendered := renderedResultsEntry(t, &restv2.JobImportResults{Errors: []*restv2.JobImportError{e}}, "errors")
		if got := importErrorJSONSize(e); got != len(rendered) {
			t.Errorf("%q: counted %d bytes, rendered %d: %s", s, got, len(rendered), rendered)
		}
	}
}

// TestIgnoredValueJSONSize: the size an event's ignored value is counted
// at is the size the REST renderer writes, unset members and escapes
// included.
func TestIgnoredValueJSONSize(t *testing.T) {
	for i, s := range awkwardStrings {
		e := &restv2.BatchEntry{Index: proto.Int32(int32(i * 1000)), ReferenceNumber: proto.String(s), Field: proto.String("benefits"),
			Value: proto.String(s), Message: "unknown field " + s + " was ignored"}
		// Every other entry leaves out what an entry may leave out.
		if i%2 == 1 {
			e.Index, e.ReferenceNumber, e.Field, e.Value = nil, nil, nil, nil
		}
		rendered := renderedResultsEntry(t, &restv2.JobImportResults{IgnoredValues: []*restv2.BatchEntry{e}}, "ignoredValues")
		if got := ignoredValueJSONSize(e); got != len(rendered) {
			t.Errorf("%q: counted %d bytes, rendered %d: %s", s, got, len(rendered), rendered)
		}
	}
}

// manyErrors is n import errors, each with a message of messageLen bytes.
func manyErrors(n, messageLen int) []*restv2.JobImportError {
	errs := make([]*restv2.JobImportError, n)
	for i := range errs {
		errs[i] = &restv2.JobImportError{Index: int32(i), ReferenceNumber: proto.String(fmt.Sprintf("R%d", i)),
			Messages: []string{fmt.Sprintf("%d: %s", i, bytes.Repeat([]byte("x"), messageLen))}}
	}
	return errs
}

// manyIgnored is n ignored values of an import, each echoing a value of
// valueLen bytes.
func manyIgnored(n, valueLen int) []*restv2.BatchEntry {
	entries := make([]*restv2.BatchEntry, n)
	for i := range entries {
		entries[i] = &restv2.BatchEntry{Index: proto.Int32(int32(i)), ReferenceNumber: proto.String(fmt.Sprintf("R%d", i)),
			Field: proto.String("benefits"), Value: proto.String(fmt.Sprintf("%d: %s", i, bytes.Repeat([]byte("v"), valueLen))),
			Message: "unknown field benefits was ignored"}
	}
	return entries
}

// renderedResultsEntry is the text GET renders for the single entry of
// results.<list> in r.
func renderedResultsEntry(t *testing.T, r *restv2.JobImportResults, list string) []byte {
	t.Helper()
	body, err := render.JSON(&restv2.GetJobImportResponse{Data: &restv2.JobImport{Results: r}})
	if err != nil {
		t.Fatal(err)
	}
	end, err := memberEnd(body, "data", "results", list)
	if err != nil {
		t.Fatal(err)
	}
	start := bytes.Index(body, []byte(`"`+list+`":[`)) + len(`"`+list+`":[`)
	return body[start : end-1]
}

// awkwardStrings are texts whose JSON escapes differ from their bytes.
var awkwardStrings = []string{"", "plain", "two\x00messages", `quote " and \ backslash`, "tab\tline\nreturn\r", "ctl \x01\x1f",
	"sep \u2028 \u2029", "bad \xff\xfe utf-8", "é 中文 🚚", "\\x00 escaped NUL"}
