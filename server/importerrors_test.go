package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/truckjobs/jobboard/gateway"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/internal/testfix"
	"github.com/truckjobs/jobboard/server/store"
)

// grpcDefaultReceive is the most a gRPC client with default settings
// takes in one answer (contract §9, §10).
const grpcDefaultReceive = 4 << 20

// importedFailures is how many jobs the large import of
// TestImportErrorsPastFourMiB lists, every one lacking fields: the
// review's shape, whose results.errors are 4,263,655 bytes of protobuf.
const importedFailures = 40_000

// failingImportBody is a REST import of n jobs that carry only a
// reference number, so each fails with four "is required" messages.
func failingImportBody(n int, callbackURL string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"callbackUrl":` + fmt.Sprintf("%q", callbackURL) + `,"jobs":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"referenceNumber":"R%06d","title":"Driver"}`, i)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// importResultsJSON is what a test reads of an import's JSON.
type importResultsJSON struct {
	Status  string `json:"status"`
	Results struct {
		Failed        int               `json:"failed"`
		Errors        []json.RawMessage `json:"errors"`
		ErrorsOmitted *int              `json:"errorsOmitted"`
	} `json:"results"`
}

func decodeImport(t *testing.T, what string, data []byte) importResultsJSON {
	t.Helper()
	var imp importResultsJSON
	if err := json.Unmarshal(data, &imp); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return imp
}

// TestImportErrorsPastFourMiB: an import whose results.errors pass 4 MiB
// (40,000 jobs each lacking fields, a 2 MB request) is read whole by REST
// and its callback, a page of at most 1,000 errors at a time by a gRPC
// client with default settings, and its job_import.completed event holds
// the first 1,000 errors and errorsOmitted, so a poller asking one event
// at a time reads past it, and the webhook delivery carries the same.
func TestImportErrorsPastFourMiB(t *testing.T) {
	f := newEventsFixtureWith(t, Config{Now: nowFunc, AllowPrivateCallbacks: true,
		CallbackRetrySchedule: []time.Duration{50 * time.Millisecond}, CallbackTimeout: 5 * time.Second})
	if err := f.svcs.Queue.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = f.svcs.Queue.Stop(ctx)
	})
	callback, hook := newReceiver(t, http.StatusNoContent), newReceiver(t, http.StatusNoContent)
	ctxA := ContextWithCaller(context.Background(), Caller{AccountID: f.a.AccountID})
	if _, err := f.svcs.Webhooks.CreateWebhook(ctxA, &restv2.CreateWebhookRequest{Webhook: &restv2.WebhookInput{
		Url: hook.srv.URL, Events: []string{"job_import.completed"}}}); err != nil {
		t.Fatal(err)
	}

	body := failingImportBody(importedFailures, callback.srv.URL+"/done")
	code, answer := f.send(t, http.MethodPost, f.a.APIKey, "/api/v2.0/job-imports", body)
	var created struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(answer, &created); code != http.StatusAccepted || err != nil {
		t.Fatalf("POST job-imports: %d %s", code, answer)
	}
	id := created.Data.ID
	var rest []byte
	if !testfix.Eventually(120*time.Second, func() bool {
		var code int
		code, rest = f.get(t, f.a.APIKey, "/api/v2.0/job-imports/"+id)
		return code == http.StatusOK && bytes.Contains(rest, []byte(`"status":"complete"`))
	}) {
		t.Fatalf("import not complete: %.300s", rest)
	}
	var whole struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(rest, &whole); err != nil {
		t.Fatal(err)
	}
	restImport := decodeImport(t, "REST GET", whole.Data)
	if len(restImport.Results.Errors) != importedFailures || restImport.Results.ErrorsOmitted != nil {
		t.Fatalf("REST GET: %d errors, errorsOmitted %v; want all %d and no errorsOmitted",
			len(restImport.Results.Errors), restImport.Results.ErrorsOmitted, importedFailures)
	}
	t.Logf("figures: a %d-byte request; REST GET answers %d bytes", len(body), len(rest))

	t.Run("gRPC pages", func(t *testing.T) {
		imports := jobboardv2.NewJobImportServiceClient(f.conn(t, "127.0.0.1"))
		req := &jobboardv2.GetJobImportRequest{Id: id}
		var errs []*jobboardv2.JobImportError
		largest, pages := 0, 0
		for {
			page, err := imports.GetJobImport(withKey(f.a.APIKey), req)
			if err != nil {
				t.Fatalf("GetJobImport page %d: %v", pages+1, err)
			}
			pages++
			largest = max(largest, proto.Size(page))
			if n := len(page.Data.Results.Errors); n == 0 || n > maxImportErrorsPage {
				t.Fatalf("page %d holds %d errors", pages, n)
			}
			if page.TotalSize != importedFailures || page.Data.Results.Failed != importedFailures {
				t.Errorf("page %d: total_size %d, failed %d", pages, page.TotalSize, page.Data.Results.Failed)
			}
			errs = append(errs, page.Data.Results.Errors...)
			if page.NextPageToken == "" {
				break
			}
			req.PageToken = page.NextPageToken
		}
		t.Logf("figures: %d pages, the largest answer %d bytes", pages, largest)
		if len(errs) != len(restImport.Results.Errors) || largest >= grpcDefaultReceive {
			t.Fatalf("%d errors over gRPC, REST has %d; largest page %d bytes", len(errs), len(restImport.Results.Errors), largest)
		}
		for i, e := range errs {
			if int(e.Index) != i || e.GetReferenceNumber() != fmt.Sprintf("R%06d", i) || len(e.Messages) != 4 {
				t.Fatalf("error %d over gRPC: %v", i, e)
			}
		}
	})

	// The event's data is GET's with the errors cut and the count of those
	// left out: the same text otherwise, and the same first 1,000 errors.
	var eventData []byte
	t.Run("REST feed", func(t *testing.T) {
		page := f.feed(t, f.a.APIKey, "/api/v2.0/events?type=job_import.completed")
		if len(page.Data) != 1 {
			t.Fatalf("%d job_import.completed events", len(page.Data))
		}
		eventData = page.Data[0].Data
		got := decodeImport(t, "event data", eventData)
		if len(got.Results.Errors) != maxImportErrorsPage || got.Results.ErrorsOmitted == nil ||
			*got.Results.ErrorsOmitted != importedFailures-maxImportErrorsPage || got.Results.Failed != importedFailures {
			t.Fatalf("event: %d errors, errorsOmitted %v, failed %d", len(got.Results.Errors), got.Results.ErrorsOmitted, got.Results.Failed)
		}
		for i, e := range got.Results.Errors {
			if !bytes.Equal(e, restImport.Results.Errors[i]) {
				t.Fatalf("event error %d: %s, GET has %s", i, e, restImport.Results.Errors[i])
			}
		}
		t.Logf("figures: the event's data is %d bytes", len(eventData))
	})

	t.Run("gRPC feed one at a time", func(t *testing.T) {
		events := jobboardv2.NewEventServiceClient(f.conn(t, "127.0.0.1"))
		req := &jobboardv2.ListEventsRequest{Limit: 1}
		for range 5 {
			page, err := events.ListEvents(withKey(f.a.APIKey), req)
			if err != nil {
				t.Fatalf("ListEvents limit 1 after %q: %v", req.After, err)
			}
			if len(page.Data) == 0 {
				t.Fatal("the feed ended before the job_import.completed event")
			}
			e := page.Data[0]
			req.After = page.NextAfter
			if e.Type != jobboardv2.EventType_EVENT_TYPE_JOB_IMPORT_COMPLETED {
				continue
			}
			results := e.Data.Fields["results"].GetStructValue()
			if n := len(results.Fields["errors"].GetListValue().GetValues()); n != maxImportErrorsPage {
				t.Errorf("the event over gRPC holds %d errors", n)
			}
			if n := results.Fields["errorsOmitted"].GetNumberValue(); n != importedFailures-maxImportErrorsPage {
				t.Errorf("errorsOmitted over gRPC %v", n)
			}
			t.Logf("figures: ListEvents limit 1 answers the event in %d bytes", proto.Size(page))
			if _, err := events.ListEvents(withKey(f.a.APIKey), req); err != nil {
				t.Fatalf("ListEvents past the event: %v", err)
			}
			return
		}
		t.Fatal("no job_import.completed event in the first 5")
	})

	t.Run("callback keeps every error", func(t *testing.T) {
		if !testfix.Eventually(20*time.Second, func() bool { callback.mu.Lock(); defer callback.mu.Unlock(); return len(callback.bodies) > 0 }) {
			t.Fatal("no callback")
		}
		callback.mu.Lock()
		got := callback.bodies[0]
		callback.mu.Unlock()
		if !bytes.Equal(got, rest) {
			t.Errorf("callback body (%d bytes) differs from REST GET (%d bytes)", len(got), len(rest))
		}
	})

	t.Run("webhook delivery is the event", func(t *testing.T) {
		if !testfix.Eventually(20*time.Second, func() bool { hook.mu.Lock(); defer hook.mu.Unlock(); return len(hook.bodies) > 0 }) {
			t.Fatal("no delivery")
		}
		hook.mu.Lock()
		got := hook.bodies[0]
		hook.mu.Unlock()
		var event struct {
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(got, &event); err != nil || eventData == nil || !bytes.Equal(event.Data, eventData) {
			t.Errorf("delivery's data (%d bytes, %v) is not the feed's (%d bytes)", len(event.Data), err, len(eventData))
		}
		if len(got) >= grpcDefaultReceive {
			t.Errorf("delivery of %d bytes", len(got))
		}
	})
}

// TestGRPCGetJobImportPaging: the errors of an import come a page_size at
// a time, in order, each page with the import's counts; tokens only work
// for the import and account they were answered for.
func TestGRPCGetJobImportPaging(t *testing.T) {
	f := newGRPCFixture(t, Config{Now: nowFunc})
	if err := f.svcs.Queue.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = f.svcs.Queue.Stop(ctx)
	})
	imports := jobboardv2.NewJobImportServiceClient(f.conn(t, "127.0.0.1"))
	run := func(key string, jobs ...*jobboardv2.JobInput) string {
		created, err := imports.CreateJobImport(withKey(key), &jobboardv2.CreateJobImportRequest{Jobs: jobs})
		if err != nil {
			t.Fatal(err)
		}
		if !testfix.Eventually(20*time.Second, func() bool {
			got, err := imports.GetJobImport(withKey(key), &jobboardv2.GetJobImportRequest{Id: created.Data.Id})
			return err == nil && got.Data.Status == jobboardv2.JobImportStatus_JOB_IMPORT_STATUS_COMPLETE
		}) {
			t.Fatal("import not complete")
		}
		return created.Data.Id
	}
	bad := func(ref string) *jobboardv2.JobInput { return &jobboardv2.JobInput{ReferenceNumber: ref} }
	five := run(f.a.APIKey, bad("E0"), naturalJob("OK1"), bad("E1"), bad("E2"), bad("E3"), bad("E4"))
	other := run(f.a.APIKey, bad("X0"), bad("X1"), bad("X2"))
	ofB := run(f.b.APIKey, bad("B0"), bad("B1"), bad("B2"))

	req := &jobboardv2.GetJobImportRequest{Id: five, PageSize: 2}
	var refs []string
	var tokens []string
	for {
		page, err := imports.GetJobImport(withKey(f.a.APIKey), req)
		if err != nil {
			t.Fatal(err)
		}
		r := page.Data.Results
		if page.TotalSize != 5 || r.Failed != 5 || r.Added != 1 || len(r.Errors) > 2 {
			t.Fatalf("page: total_size %d, results %v", page.TotalSize, r)
		}
		for _, e := range r.Errors {
			refs = append(refs, e.GetReferenceNumber())
		}
		if page.NextPageToken == "" {
			break
		}
		tokens = append(tokens, page.NextPageToken)
		req.PageToken = page.NextPageToken
	}
	if fmt.Sprint(refs) != "[E0 E1 E2 E3 E4]" || len(tokens) != 2 {
		t.Fatalf("errors %v over %d tokens", refs, len(tokens))
	}
	if page, err := imports.GetJobImport(withKey(f.a.APIKey), &jobboardv2.GetJobImportRequest{Id: five}); err != nil ||
		len(page.Data.Results.Errors) != 5 || page.NextPageToken != "" {
		t.Errorf("the default page: %v %v", page, err)
	}

	ofBPage, err := imports.GetJobImport(withKey(f.b.APIKey), &jobboardv2.GetJobImportRequest{Id: ofB, PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	refused := []struct {
		name string
		key  string
		req  *jobboardv2.GetJobImportRequest
		code codes.Code
		text string
	}{
		{"a token of another import", f.a.APIKey, &jobboardv2.GetJobImportRequest{Id: other, PageToken: tokens[0]}, codes.InvalidArgument, "page_token: "},
		{"a token of another account", f.a.APIKey, &jobboardv2.GetJobImportRequest{Id: five, PageToken: ofBPage.NextPageToken}, codes.InvalidArgument, "page_token: "},
		{"an altered token", f.a.APIKey, &jobboardv2.GetJobImportRequest{Id: five, PageToken: tokens[0] + "A"}, codes.InvalidArgument, "page_token: "},
		{"not a token", f.a.APIKey, &jobboardv2.GetJobImportRequest{Id: five, PageToken: "2"}, codes.InvalidArgument, "page_token: "},
		{"a negative page size", f.a.APIKey, &jobboardv2.GetJobImportRequest{Id: five, PageSize: -1}, codes.InvalidArgument, "page_size: "},
		{"another account's import with its token", f.b.APIKey, &jobboardv2.GetJobImportRequest{Id: five, PageToken: tokens[0]}, codes.NotFound, ""},
		{"another account's import", f.b.APIKey, &jobboardv2.GetJobImportRequest{Id: five}, codes.NotFound, ""},
	}
	for _, c := range refused {
		_, err := imports.GetJobImport(withKey(c.key), c.req)
		if st := status.Convert(err); st.Code() != c.code || !bytes.HasPrefix([]byte(st.Message()), []byte(c.text)) {
			t.Errorf("%s: %v, want %s starting %q", c.name, err, c.code, c.text)
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

// TestImportCompletedEventBounded: the event keeps the first 1,000 errors,
// fewer when they are large (an entry can echo a value per field of its
// job), and says how many it left out; the rest of its data is GET's text.
func TestImportCompletedEventBounded(t *testing.T) {
	ob := &Outbox{render: gateway.RenderJSON}
	completed := time.Date(2026, 11, 2, 14, 5, 9, 0, time.UTC)
	tests := []struct {
		name         string
		errors, size int
		wantKept     int
	}{
		{"none", 0, 10, 0},
		{"a few", 5, 10, 5},
		{"exactly 1,000", 1000, 10, 1000},
		{"one more", 1001, 10, 1000},
		{"40,000", 40_000, 10, 1000},
		// 20 KB each: 2 MiB holds 104 of them.
		{"large entries", 3000, 20_000, 104},
		// Larger than the whole budget: the page still holds one.
		{"one huge entry", 2, 3 << 20, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := manyErrors(tt.errors, tt.size)
			results := &restv2.JobImportResults{Failed: int32(tt.errors), Processed: int32(tt.errors), Errors: errs}
			imp := store.JobImport{ID: "9b2f4c1e-0000-4000-8000-000000000001", Status: store.ImportComplete,
				RequestedAt: completed, CompletedAt: &completed, Results: storedResults(results), BaseURL: "https://jobs.example.com"}
			event, err := ob.importCompletedEvent(imp)
			if err != nil {
				t.Fatal(err)
			}
			got := decodeImport(t, "event data", event.Data)
			if len(got.Results.Errors) != tt.wantKept || got.Results.ErrorsOmitted == nil || *got.Results.ErrorsOmitted != tt.errors-tt.wantKept {
				t.Fatalf("kept %d errors, errorsOmitted %v; want %d and %d", len(got.Results.Errors), got.Results.ErrorsOmitted, tt.wantKept, tt.errors-tt.wantKept)
			}
			if tt.wantKept > 1 && len(event.Data) > importErrorsPageBytes+4096 {
				t.Errorf("event data of %d bytes", len(event.Data))
			}
			// GET's data with the same errors, and errorsOmitted after them.
			msg, _ := importMessage(imp)
			msg.Results.Errors = msg.Results.Errors[:tt.wantKept]
			body, _ := gateway.RenderJSON(&restv2.GetJobImportResponse{Data: msg, Links: importLinks(imp)})
			data, _ := dataMember(body)
			want := bytes.Replace(data, []byte(`],"ignoredValues":`), fmt.Appendf(nil, `],"errorsOmitted":%d,"ignoredValues":`, tt.errors-tt.wantKept), 1)
			if !bytes.Equal(event.Data, want) {
				t.Errorf("event data\n%.400s\nwant\n%.400s", event.Data, want)
			}
		})
	}
}

// TestImportErrorsPageBytes: a gRPC page of errors holds at most the page
// size, fewer once the entries pass importErrorsPageBytes, at least one.
func TestImportErrorsPageBytes(t *testing.T) {
	tests := []struct {
		name                 string
		errors, size, offset int
		pageSize, want       int
	}{
		{"small entries, default size", 2500, 10, 0, 1000, 1000},
		{"small entries, the last page", 2500, 10, 2000, 1000, 500},
		{"small entries, a smaller size", 2500, 10, 7, 3, 3},
		{"20 KB entries", 3000, 20_000, 0, 1000, 104},
		{"an entry past the budget", 3, 3 << 20, 1, 1000, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := manyErrors(tt.errors, tt.size)
			page := importErrorsPage(errs, tt.offset, tt.pageSize, importErrorProtoSize)
			if len(page) != tt.want || page[0] != errs[tt.offset] {
				t.Fatalf("page of %d from %d, want %d", len(page), page[0].Index, tt.want)
			}
			size := 0
			for _, e := range page {
				size += proto.Size(e)
			}
			if len(page) > 1 && size > importErrorsPageBytes {
				t.Errorf("page of %d bytes", size)
			}
		})
	}
}

// TestJSONStringSize: the size an event's error entry is counted at is the
// size the REST renderer writes, escapes included.
func TestJSONStringSize(t *testing.T) {
	for _, s := range []string{"", "plain", "two\x00messages", `quote " and \ backslash`, "tab\tline\nreturn\r", "ctl \x01\x1f",
		"sep \u2028 \u2029", "bad \xff\xfe utf-8", "é 中文 🚚", "\\x00 escaped NUL"} {
		e := &restv2.JobImportError{Index: 12, Messages: []string{s}, ReferenceNumber: proto.String(s)}
		if s == "" {
			e.ReferenceNumber = nil
		}
		if strings.Contains(s, "\x00") {
			e.Messages = strings.Split(s, "\x00")
		}
		body, err := gateway.RenderJSON(&restv2.GetJobImportResponse{Data: &restv2.JobImport{
			Results: &restv2.JobImportResults{Errors: []*restv2.JobImportError{e}}}})
		if err != nil {
			t.Fatal(err)
		}
		end, err := memberEnd(body, "data", "results", "errors")
		if err != nil {
			t.Fatal(err)
		}
		start := bytes.Index(body, []byte(`"errors":[`)) + len(`"errors":[`)
		if got, want := importErrorJSONSize(e), end-1-start; got != want {
			t.Errorf("%q: counted %d bytes, rendered %d", s, got, want)
		}
	}
}

// TestWithErrorsOmitted: errorsOmitted goes right after results.errors,
// wherever the members are, and never inside another member or a string.
func TestWithErrorsOmitted(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"GET's order", `{"id":"a","results":{"failed":1,"errors":[{"m":"],\"x\":"}],"ignoredValues":[]},"status":"complete"}`,
			`{"id":"a","results":{"failed":1,"errors":[{"m":"],\"x\":"}],"errorsOmitted":7,"ignoredValues":[]},"status":"complete"}`},
		{"errors last", `{"errors":1,"results":{"x":{"errors":[]},"errors":[]}}`, `{"errors":1,"results":{"x":{"errors":[]},"errors":[],"errorsOmitted":7}}`},
		{"no results", `{"id":"a","results":null}`, ""},
		{"no errors", `{"results":{"failed":0}}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := withErrorsOmitted([]byte(tt.data), 7)
			if string(got) != tt.want || (err == nil) != (tt.want != "") {
				t.Errorf("withErrorsOmitted(%s) = %s, %v; want %s", tt.data, got, err, tt.want)
			}
		})
	}
}
