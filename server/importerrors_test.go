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

	"github.com/truckjobs/jobboard/server/imports"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/internal/testfix"
	"github.com/truckjobs/jobboard/server/call"
)

// grpcDefaultReceive is the most a gRPC client with default settings
// takes in one answer (docs/api.md 4.4 and 7.3).
const grpcDefaultReceive = 4 << 20

// importedFailures is how many jobs the large import of
// TestImportErrorsPastFourMiB lists, every one lacking fields and sending
// a member no job has: its results.errors are 4,263,655 bytes of protobuf,
// its results.ignoredValues 40,000 entries more.
const importedFailures = 40_000

// unknownMember is a member no job has, which each job of the large
// import sends: one results.ignoredValues entry per job.
const unknownMember = `"benefits":"Dental, vision and 401k match"`

// failingImportBody is a REST import of n jobs that carry only a
// reference number, a title and the members extra, so each fails with four
// "is required" messages and has an ignored value per member of extra.
func failingImportBody(n int, callbackURL, extra string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"callbackUrl":` + fmt.Sprintf("%q", callbackURL) + `,"jobs":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"referenceNumber":"R%06d","title":"Driver"%s}`, i, extra)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// importResultsJSON is what a test reads of an import's JSON.
type importResultsJSON struct {
	Status  string `json:"status"`
	Results struct {
		Failed               int               `json:"failed"`
		Errors               []json.RawMessage `json:"errors"`
		ErrorsOmitted        *int              `json:"errorsOmitted"`
		IgnoredValues        []json.RawMessage `json:"ignoredValues"`
		IgnoredValuesOmitted *int              `json:"ignoredValuesOmitted"`
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
// (40,000 jobs each lacking fields and sending an unknown member, a 3.6 MB
// request) is read whole by REST and its callback, a page of at most 1,000
// errors and 1,000 ignored values at a time by a gRPC client with default
// settings, and its job_import.completed event holds the first 1,000 of
// each list and the numbers left out (errorsOmitted,
// ignoredValuesOmitted), so a poller asking one event at a time reads past
// it, and the webhook delivery carries the same.
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
	ctxA := call.WithCaller(context.Background(), call.Caller{AccountID: f.a.AccountID})
	if _, err := f.svcs.Webhooks.CreateWebhook(ctxA, &restv2.CreateWebhookRequest{Webhook: &restv2.WebhookInput{
		Url: hook.srv.URL, Events: []string{"job_import.completed"}}}); err != nil {
		t.Fatal(err)
	}

	body := failingImportBody(importedFailures, callback.srv.URL+"/done", ","+unknownMember)
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
	if r := restImport.Results; len(r.Errors) != importedFailures || r.ErrorsOmitted != nil ||
		len(r.IgnoredValues) != importedFailures || r.IgnoredValuesOmitted != nil {
		t.Fatalf("REST GET: %d errors, errorsOmitted %v, %d ignored values, ignoredValuesOmitted %v; want all %d and no counts",
			len(r.Errors), r.ErrorsOmitted, len(r.IgnoredValues), r.IgnoredValuesOmitted, importedFailures)
	}
	t.Logf("figures: a %d-byte request; REST GET answers %d bytes", len(body), len(rest))

	t.Run("gRPC pages", func(t *testing.T) {
		client := jobboardv2.NewJobImportServiceClient(f.conn(t, "127.0.0.1"))
		req := &jobboardv2.GetJobImportRequest{Id: id}
		var errs []*jobboardv2.JobImportError
		var ignored []*jobboardv2.BatchEntry
		largest, pages := 0, 0
		var slowest time.Duration
		started := time.Now()
		for {
			asked := time.Now()
			page, err := client.GetJobImport(withKey(f.a.APIKey), req)
			slowest = max(slowest, time.Since(asked))
			if err != nil {
				t.Fatalf("GetJobImport page %d: %v", pages+1, err)
			}
			pages++
			largest = max(largest, proto.Size(page))
			r := page.Data.Results
			if len(r.Errors)+len(r.IgnoredValues) == 0 || len(r.Errors) > imports.MaxResultsPage || len(r.IgnoredValues) > imports.MaxResultsPage {
				t.Fatalf("page %d holds %d errors and %d ignored values", pages, len(r.Errors), len(r.IgnoredValues))
			}
			if page.TotalSize != importedFailures || page.IgnoredValuesTotalSize != importedFailures || r.Failed != importedFailures {
				t.Errorf("page %d: total_size %d, ignored_values_total_size %d, failed %d", pages, page.TotalSize, page.IgnoredValuesTotalSize, r.Failed)
			}
			errs = append(errs, r.Errors...)
			ignored = append(ignored, r.IgnoredValues...)
			if page.NextPageToken == "" {
				break
			}
			req.PageToken = page.NextPageToken
		}
		t.Logf("figures: %d pages, the largest answer %d bytes; all pages in %v, the slowest in %v",
			pages, largest, time.Since(started).Round(time.Millisecond), slowest.Round(time.Millisecond))
		if len(errs) != len(restImport.Results.Errors) || len(ignored) != len(restImport.Results.IgnoredValues) || largest >= grpcDefaultReceive {
			t.Fatalf("%d errors and %d ignored values over gRPC, REST has %d and %d; largest page %d bytes",
				len(errs), len(ignored), len(restImport.Results.Errors), len(restImport.Results.IgnoredValues), largest)
		}
		for i, e := range errs {
			if int(e.Index) != i || e.GetReferenceNumber() != fmt.Sprintf("R%06d", i) || len(e.Messages) != 4 {
				t.Fatalf("error %d over gRPC: %v", i, e)
			}
		}
		for i, v := range ignored {
			if int(v.GetIndex()) != i || v.GetReferenceNumber() != fmt.Sprintf("R%06d", i) || v.GetField() != "benefits" {
				t.Fatalf("ignored value %d over gRPC: %v", i, v)
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
		r := got.Results
		if len(r.Errors) != imports.MaxResultsPage || r.ErrorsOmitted == nil || *r.ErrorsOmitted != importedFailures-imports.MaxResultsPage ||
			len(r.IgnoredValues) != imports.MaxResultsPage || r.IgnoredValuesOmitted == nil ||
			*r.IgnoredValuesOmitted != importedFailures-imports.MaxResultsPage || r.Failed != importedFailures {
			t.Errorf("event: %d errors, errorsOmitted %v, %d ignored values, ignoredValuesOmitted %v, failed %d",
				len(r.Errors), r.ErrorsOmitted, len(r.IgnoredValues), r.IgnoredValuesOmitted, r.Failed)
		}
		for i, e := range r.Errors {
			if !bytes.Equal(e, restImport.Results.Errors[i]) {
				t.Fatalf("event error %d: %s, GET has %s", i, e, restImport.Results.Errors[i])
			}
		}
		for i, v := range r.IgnoredValues {
			if !bytes.Equal(v, restImport.Results.IgnoredValues[i]) {
				t.Fatalf("event ignored value %d: %s, GET has %s", i, v, restImport.Results.IgnoredValues[i])
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
			for list, count := range map[string]string{"errors": "errorsOmitted", "ignoredValues": "ignoredValuesOmitted"} {
				if n := len(results.Fields[list].GetListValue().GetValues()); n != imports.MaxResultsPage {
					t.Errorf("the event over gRPC holds %d %s", n, list)
				}
				if n := results.Fields[count].GetNumberValue(); n != importedFailures-imports.MaxResultsPage {
					t.Errorf("%s over gRPC %v", count, n)
				}
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

// TestGRPCGetJobImportPaging: the errors and ignored values of an import
// come a page_size of each at a time, in order, each page with the
// import's counts, until both lists are exhausted; tokens only work for the
// import and account they were answered for.
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
	client := jobboardv2.NewJobImportServiceClient(f.conn(t, "127.0.0.1"))
	run := func(key string, jobs ...*jobboardv2.JobInput) string {
		created, err := client.CreateJobImport(withKey(key), &jobboardv2.CreateJobImportRequest{Jobs: jobs})
		if err != nil {
			t.Fatal(err)
		}
		if !testfix.Eventually(20*time.Second, func() bool {
			got, err := client.GetJobImport(withKey(key), &jobboardv2.GetJobImportRequest{Id: created.Data.Id})
			return err == nil && got.Data.Status == jobboardv2.JobImportStatus_JOB_IMPORT_STATUS_COMPLETE
		}) {
			t.Fatal("import not complete")
		}
		return created.Data.Id
	}
	bad := func(ref string) *jobboardv2.JobInput { return &jobboardv2.JobInput{ReferenceNumber: ref} }
	// A job saved with one ignored value: the script is removed from its
	// description.
	scripted := func(ref string) *jobboardv2.JobInput {
		j := naturalJob(ref)
		j.Description = "<p>Home weekly.</p><script>alert(1)</script>"
		return j
	}
	five := run(f.a.APIKey, bad("E0"), scripted("I0"), bad("E1"), scripted("I1"), bad("E2"), bad("E3"), bad("E4"), scripted("I2"))
	other := run(f.a.APIKey, bad("X0"), scripted("Y0"), scripted("Y1"), scripted("Y2"))
	ofB := run(f.b.APIKey, bad("B0"), bad("B1"), bad("B2"))

	// walk reads every page of an import, two entries of each list at a
	// time, and says what each page held: "E0 E1 | I0 I1".
	walk := func(id string) (pages, tokens []string) {
		req := &jobboardv2.GetJobImportRequest{Id: id, PageSize: 2}
		for {
			page, err := client.GetJobImport(withKey(f.a.APIKey), req)
			if err != nil {
				t.Fatal(err)
			}
			r := page.Data.Results
			if int(page.TotalSize) != int(r.Failed) || page.IgnoredValuesTotalSize != r.Added {
				t.Fatalf("page: total_size %d, ignored_values_total_size %d, results %v", page.TotalSize, page.IgnoredValuesTotalSize, r)
			}
			var refs []string
			for _, e := range r.Errors {
				refs = append(refs, e.GetReferenceNumber())
			}
			refs = append(refs, "|")
			for _, v := range r.IgnoredValues {
				refs = append(refs, v.GetReferenceNumber())
			}
			pages = append(pages, strings.Join(refs, " "))
			if page.NextPageToken == "" {
				return pages, tokens
			}
			tokens = append(tokens, page.NextPageToken)
			req.PageToken = page.NextPageToken
		}
	}
	walks := []struct {
		name, id string
		want     string
	}{
		{"errors outlast ignored values", five, "[E0 E1 | I0 I1, E2 E3 | I2, E4 |]"},
		{"ignored values outlast errors", other, "[X0 | Y0 Y1, | Y2]"},
	}
	var tokens []string
	for _, w := range walks {
		pages, ts := walk(w.id)
		if fmt.Sprintf("[%s]", strings.Join(pages, ", ")) != w.want {
			t.Errorf("%s: pages %q, want %s", w.name, pages, w.want)
		}
		if w.id == five {
			tokens = ts
		}
	}
	if len(tokens) != 2 {
		t.Fatalf("%d tokens", len(tokens))
	}
	if page, err := client.GetJobImport(withKey(f.a.APIKey), &jobboardv2.GetJobImportRequest{Id: five}); err != nil ||
		len(page.Data.Results.Errors) != 5 || len(page.Data.Results.IgnoredValues) != 3 || page.NextPageToken != "" {
		t.Errorf("the default page: %v %v", page, err)
	}

	ofBPage, err := client.GetJobImport(withKey(f.b.APIKey), &jobboardv2.GetJobImportRequest{Id: ofB, PageSize: 1})
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
		_, err := client.GetJobImport(withKey(c.key), c.req)
		if st := status.Convert(err); st.Code() != c.code || !bytes.HasPrefix([]byte(st.Message()), []byte(c.text)) {
			t.Errorf("%s: %v, want %s starting %q", c.name, err, c.code, c.text)
		}
	}
}
