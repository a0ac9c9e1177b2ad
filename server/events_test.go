package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/truckjobs/jobboard/server/drivers"
	"github.com/truckjobs/jobboard/server/store/storetest"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/truckjobs/jobboard/domain"
	"github.com/truckjobs/jobboard/gateway"
	"github.com/truckjobs/jobboard/gateway/render"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/intake"
	"github.com/truckjobs/jobboard/server/store"
)

// eventsFixture is the gRPC fixture with the REST gateway in front of the
// same services: accounts A and B, both ways.
type eventsFixture struct {
	*grpcFixture
	rest string // the gateway's base URL
}

func newEventsFixture(t *testing.T) *eventsFixture {
	t.Helper()
	return newEventsFixtureWith(t, Config{})
}

// newEventsFixtureWith is the events fixture over services made with cfg.
func newEventsFixtureWith(t *testing.T, cfg Config) *eventsFixture {
	t.Helper()
	f := &eventsFixture{grpcFixture: newGRPCFixture(t, cfg)}
	s := f.svcs
	h, err := gateway.New(context.Background(), gateway.Config{Jobs: s.Jobs, Drivers: s.Drivers, Imports: s.Imports,
		Webhooks: s.Webhooks, Events: s.Events, Authenticate: s.Auth.AuthenticateKey, Boundary: call.Boundary})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	f.rest = srv.URL
	return f
}

// get sends GET to a path of the gateway, or to an absolute URL, with key.
func (f *eventsFixture) get(t *testing.T, key, target string) (int, []byte) {
	t.Helper()
	return f.send(t, http.MethodGet, key, target, nil)
}

// send sends a request with a JSON body (nil for none) to a path of the
// gateway, or to an absolute URL, with key.
func (f *eventsFixture) send(t *testing.T, method, key, target string, body []byte) (int, []byte) {
	t.Helper()
	if !strings.HasPrefix(target, "http") {
		target = f.rest + target
	}
	req, err := http.NewRequest(method, target, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.SetBasicAuth(key, "")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, answer
}

// feedPage is a REST feed page with each event's data as its raw bytes.
type feedPage struct {
	Data []struct {
		ID        string          `json:"id"`
		Type      string          `json:"type"`
		CreatedAt string          `json:"createdAt"`
		Data      json.RawMessage `json:"data"`
	} `json:"data"`
	Links struct {
		Next string `json:"next"`
	} `json:"links"`
}

func (f *eventsFixture) feed(t *testing.T, key, target string) feedPage {
	t.Helper()
	code, body := f.get(t, key, target)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", target, code, body)
	}
	var page feedPage
	if err := json.Unmarshal(body, &page); err != nil {
		t.Fatalf("GET %s: %v in %s", target, err, body)
	}
	return page
}

// submit stores applications to account through the intake service.
func (f *eventsFixture) submit(t *testing.T, account int64, apps ...*intake.Application) error {
	t.Helper()
	_, err := drivers.ImportApplications(context.Background(), f.st, f.svcs.Outbox, account, apps)
	return err
}

// TestApplicationEventData: each stored application has one event whose
// data is, byte for byte, GET drivers.json/{id} at that time; two
// applications of one driver in a batch both carry the final state; a
// batch that fails stores no event.
func TestApplicationEventData(t *testing.T) {
	f := newEventsFixture(t)
	ctxA := call.WithCaller(context.Background(), call.Caller{AccountID: f.a.AccountID})
	if _, err := f.svcs.Jobs.PostJobs(ctxA, &restv2.PostJobsRequest{Jobs: []*restv2.JobInput{input("J1")}}); err != nil {
		t.Fatal(err)
	}
	ann := applicant("Ann", "Lee", "NY", "10001", "Company Driver", "0.5", "2026-01-05T10:00:00Z", "T")
	ann.JobApplications = []intake.JobApplication{{Reference: "J1", IsDirectApp: true}}
	annLater := applicant("Ann", "Lee", "NJ", "07030", "Owner Operator", "2", "2026-01-06T10:00:00Z")
	bob := applicant("Bob", "Smith", "TX", "73301", "Student", "1", "2026-01-07T10:00:00Z")
	if err := f.submit(t, f.a.AccountID, ann, annLater, bob); err != nil {
		t.Fatal(err)
	}
	bad := applicant("Cy", "Ode", "OH", "43215", "Student", "1", "2026-01-08T10:00:00Z")
	bad.JobApplications = []intake.JobApplication{{Reference: "NOPE"}}
	if err := f.submit(t, f.a.AccountID, applicant("Dee", "Ray", "OH", "43215", "Student", "1", "2026-01-08T10:00:00Z"), bad); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("a batch naming an unknown job: %v", err)
	}
	page := f.feed(t, f.a.APIKey, "/api/v2.0/events")
	if len(page.Data) != 3 {
		t.Fatalf("%d events after storing 3 applications and failing a batch of 2, want 3", len(page.Data))
	}
	var ids []int64
	for i, e := range page.Data {
		var driver struct {
			ID int64 `json:"id"`
		}
		if err := json.Unmarshal(e.Data, &driver); err != nil || e.Type != "driver.application.received" {
			t.Fatalf("event %d: %s %s (%v)", i, e.Type, e.Data, err)
		}
		ids = append(ids, driver.ID)
		code, body := f.get(t, f.a.APIKey, fmt.Sprintf("/api/v2.0/drivers.json/%d", driver.ID))
		if code != http.StatusOK || !bytes.Equal(e.Data, bytes.TrimRight(body, "\n")) {
			t.Errorf("event %d data:\n%s\nGET drivers.json/%d (%d):\n%s", i, e.Data, driver.ID, code, body)
		}
	}
	if ids[0] != ids[1] || ids[1] == ids[2] {
		t.Errorf("driver ids of the events %v: Ann twice, then Bob", ids)
	}
	// The gRPC twin carries the same data as a Struct.
	events := jobboardv2.NewEventServiceClient(f.conn(t, "127.0.0.1"))
	got, err := events.ListEvents(withKey(f.a.APIKey), &jobboardv2.ListEventsRequest{})
	if err != nil || len(got.Data) != 3 || got.NextAfter != page.Data[2].ID {
		t.Fatalf("gRPC ListEvents: %v %v", got, err)
	}
	for i, e := range got.Data {
		fromGRPC, _ := protojson.Marshal(e.Data)
		if e.Id != page.Data[i].ID || e.Type != jobboardv2.EventType_EVENT_TYPE_DRIVER_APPLICATION_RECEIVED || !sameJSON(t, fromGRPC, page.Data[i].Data) {
			t.Errorf("gRPC event %d: %v, REST %s", i, e, page.Data[i].Data)
		}
	}
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}

// someDrivers are n distinct applications.
func someDrivers(n int, tag string) []*intake.Application {
	apps := make([]*intake.Application, n)
	for i := range apps {
		apps[i] = applicant("Ann", fmt.Sprintf("Lee%s%d", tag, i), "NY", "10001", "Student", "1", "2026-01-05T10:00:00Z")
	}
	return apps
}

// TestEventFeedRequests: the feed's checks of after, type and limit, over
// REST and gRPC, and isolation between accounts.
func TestEventFeedRequests(t *testing.T) {
	f := newEventsFixture(t)
	if err := f.submit(t, f.a.AccountID, someDrivers(2, "a")...); err != nil {
		t.Fatal(err)
	}
	if err := f.submit(t, f.b.AccountID, someDrivers(1, "b")...); err != nil {
		t.Fatal(err)
	}
	aEvents := f.feed(t, f.a.APIKey, "/api/v2.0/events").Data
	aEvent := aEvents[0].ID
	tests := []struct {
		name, query  string
		want         []string // in the REST message; "" means 200
		grpc         *jobboardv2.ListEventsRequest
		grpcMentions []string
	}{
		{"limit 0", "limit=0", []string{"limit", `"0"`, "1 to 1000"}, &jobboardv2.ListEventsRequest{Limit: -1}, []string{"limit", "-1", "1 to 1000"}},
		{"limit 1001", "limit=1001", []string{"limit", `"1001"`, "1 to 1000"}, &jobboardv2.ListEventsRequest{Limit: 1001}, []string{"limit", "1001"}},
		{"limit text", "limit=ten", []string{"limit", `"ten"`}, nil, nil},
		{"limit 1000", "limit=1000", nil, &jobboardv2.ListEventsRequest{Limit: 1000}, nil},
		{"unknown type", "type=driver.created", []string{"type", `"driver.created"`, "driver.application.received, job_import.completed, webhook.test or driver.status.changed"},
			&jobboardv2.ListEventsRequest{Type: 9}, []string{"type", "9"}},
		{"malformed after", "after=evt_zz", []string{"after", `"evt_zz"`, "not one of the account's events"},
			&jobboardv2.ListEventsRequest{After: "evt_zz"}, []string{"after", "evt_zz"}},
		{"unknown after", "after=evt_" + strings.Repeat("0", 32), []string{"after", "evt_000", "not one of the account's events"},
			&jobboardv2.ListEventsRequest{After: "evt_" + strings.Repeat("0", 32)}, []string{"after"}},
		{"another account's after", "after=" + aEvent, []string{"after", aEvent, "not one of the account's events"},
			&jobboardv2.ListEventsRequest{After: aEvent}, []string{"after", aEvent}},
	}
	events := jobboardv2.NewEventServiceClient(f.conn(t, "127.0.0.1"))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := f.get(t, f.b.APIKey, "/api/v2.0/events?"+tt.query)
			if tt.want == nil && code != http.StatusOK || tt.want != nil && code != http.StatusBadRequest {
				t.Errorf("REST: %d %s", code, body)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(body), strings.ReplaceAll(w, `"`, `\"`)) {
					t.Errorf("REST message does not name %s: %s", w, body)
				}
			}
			if tt.grpc == nil {
				return
			}
			_, err := events.ListEvents(withKey(f.b.APIKey), tt.grpc)
			if tt.grpcMentions == nil && err != nil || tt.grpcMentions != nil && status.Code(err) != codes.InvalidArgument {
				t.Errorf("gRPC: %v", err)
			}
			for _, w := range tt.grpcMentions {
				if !strings.Contains(status.Convert(err).Message(), w) {
					t.Errorf("gRPC message does not name %s: %v", w, err)
				}
			}
		})
	}
	bPage := f.feed(t, f.b.APIKey, "/api/v2.0/events")
	if len(bPage.Data) != 1 || bPage.Data[0].ID == aEvents[0].ID || bPage.Data[0].ID == aEvents[1].ID {
		t.Errorf("B's feed: %+v, A's events %+v", bPage.Data, aEvents)
	}
}

// TestEventFeedPaging follows links.next from the start: every event once,
// oldest first, the type and limit kept, and a page past the end pointing
// at itself.
func TestEventFeedPaging(t *testing.T) {
	f := newEventsFixture(t)
	if err := f.submit(t, f.a.AccountID, someDrivers(7, "p")...); err != nil {
		t.Fatal(err)
	}
	all := f.feed(t, f.a.APIKey, "/api/v2.0/events").Data
	if len(all) != 7 {
		t.Fatalf("%d events, want 7", len(all))
	}
	var seen []string
	next := "/api/v2.0/events?limit=3&type=driver.application.received"
	for range 10 {
		page := f.feed(t, f.a.APIKey, next)
		u, err := url.Parse(page.Links.Next)
		if err != nil || !u.IsAbs() || u.Path != "/api/v2.0/events" || u.Query().Get("limit") != "3" ||
			u.Query().Get("type") != "driver.application.received" {
			t.Fatalf("links.next %q", page.Links.Next)
		}
		if len(page.Data) == 0 {
			if want := all[6].ID; u.Query().Get("after") != want {
				t.Errorf("an empty page's next after is %q, want the request's %s", u.Query().Get("after"), want)
			}
			break
		}
		if len(page.Data) > 3 {
			t.Errorf("a page of %d events at limit 3", len(page.Data))
		}
		if u.Query().Get("after") != page.Data[len(page.Data)-1].ID {
			t.Errorf("next after %q, want the last event returned", page.Links.Next)
		}
		for _, e := range page.Data {
			seen = append(seen, e.ID)
		}
		next = page.Links.Next
	}
	var want []string
	for _, e := range all {
		want = append(want, e.ID)
	}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("paging saw %v, want %v", seen, want)
	}
	// Another type has no events; with none before, next has no after.
	other := f.feed(t, f.a.APIKey, "/api/v2.0/events?type=webhook.test")
	if len(other.Data) != 0 || strings.Contains(other.Links.Next, "after=") {
		t.Errorf("webhook.test events: %+v", other)
	}
	events := jobboardv2.NewEventServiceClient(f.conn(t, "127.0.0.1"))
	got, err := events.ListEvents(withKey(f.a.APIKey), &jobboardv2.ListEventsRequest{After: all[4].ID, Limit: 1,
		Type: jobboardv2.EventType_EVENT_TYPE_DRIVER_APPLICATION_RECEIVED})
	if err != nil || len(got.Data) != 1 || got.Data[0].Id != all[5].ID || got.NextAfter != all[5].ID {
		t.Errorf("gRPC page after the 5th event: %v %v", got, err)
	}
}

// TestEventFeedWhileWriting: writers submit to one account while a poller
// follows links.next; it sees every event once, in the order of the final
// feed, however the writers' transactions interleave.
func TestEventFeedWhileWriting(t *testing.T) {
	f := newEventsFixture(t)
	const writers, batches, size = 4, 10, 3
	var wg sync.WaitGroup
	errs := make(chan error, writers*batches)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				ctx := call.WithCaller(context.Background(), call.Caller{AccountID: f.a.AccountID})
				apps := make([]*jobboardv2.DriverApplication, size)
				for i, a := range someDrivers(size, fmt.Sprintf("w%db%d_", w, b)) {
					apps[i] = &jobboardv2.DriverApplication{FirstName: a.FirstName, LastName: a.LastName, Address: a.Address,
						City: a.City, State: a.State, Zip: a.Zip, Email: a.Email, Phone: a.Phone,
						DriverType: jobboardv2.DriverType_DRIVER_TYPE_STUDENT, Experience: a.Experience, Sent: timestamppb.Now()}
				}
				_, err := f.svcs.Intake.SubmitApplications(ctx, &jobboardv2.SubmitApplicationsRequest{Applications: apps})
				errs <- err
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var seen []string
	next := "/api/v2.0/events?limit=7"
	for finished := false; len(seen) < writers*batches*size; {
		page := f.feed(t, f.a.APIKey, next)
		for _, e := range page.Data {
			seen = append(seen, e.ID)
		}
		next = page.Links.Next
		if len(page.Data) == 0 && finished {
			break // a writer failed: its error tells why
		}
		select {
		case <-done:
			finished = true
		default:
		}
	}
	<-done
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var want []string
	for _, e := range f.feed(t, f.a.APIKey, "/api/v2.0/events?limit=1000").Data {
		want = append(want, e.ID)
	}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("the poller saw %d events:\n%v\nthe feed holds %d:\n%v", len(seen), seen, len(want), want)
	}
}

// TestImportCompletedEvent: a completed import has one job_import.completed
// event whose data is the data member of GET job-imports/{id}, byte for
// byte, errors and ignored values included, errorsOmitted and
// ignoredValuesOmitted added (the event is written from the results in
// hand, GET reads them back from the database); the type filter tells it
// from application events.
func TestImportCompletedEvent(t *testing.T) {
	f := newImportFixture(t)
	accountA := func() int64 { c, _ := call.From(f.ctxA); return c.AccountID }()
	if _, err := drivers.ImportApplications(context.Background(), f.st, f.svcs.Outbox, accountA, someDrivers(1, "i")); err != nil {
		t.Fatal(err)
	}
	req := threeJobs("")
	req.CallbackUrl = nil
	req.Jobs[1].ExtraFields = []*restv2.ExtraField{{Name: "benefits", Value: new("Dental \u2028 «vision»")}}
	req.Jobs[2].ReferenceNumber = new("Ré\x00sumé\u2028")
	imp := f.run(t, f.ctxA, req)
	if r := imp.Results; r.Failed != 1 || len(r.Errors) != 1 || len(r.IgnoredValues) != 1 {
		t.Fatalf("results %v, want one error and one ignored value", r)
	}
	got, err := f.svcs.Imports.GetJobImport(f.ctxA, &restv2.GetJobImportRequest{Id: imp.Id})
	if err != nil {
		t.Fatal(err)
	}
	body, err := render.JSON(got)
	if err != nil {
		t.Fatal(err)
	}
	var answer struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		t.Fatal(err)
	}
	page, err := f.svcs.Events.ListEvents(f.ctxA, &restv2.ListEventsRequest{Type: "job_import.completed"})
	if err != nil {
		t.Fatal(err)
	}
	// errorsOmitted and ignoredValuesOmitted, 0 here, follow the lists they
	// count (docs/api.md 7).
	want := bytes.Replace(answer.Data, []byte(`],"ignoredValues":`), []byte(`],"errorsOmitted":0,"ignoredValues":`), 1)
	want = bytes.Replace(want, []byte(`]},"status":`), []byte(`],"ignoredValuesOmitted":0},"status":`), 1)
	if len(page.Data) != 1 || !bytes.Equal(page.Data[0].Data, want) {
		t.Fatalf("job_import.completed events %v, want one with data\n%s", page.Data, want)
	}
	all, err := f.svcs.Events.ListEvents(f.ctxA, &restv2.ListEventsRequest{})
	if err != nil || len(all.Data) != 2 || all.Data[0].Type != "driver.application.received" || all.Data[1].Id != page.Data[0].Id {
		t.Errorf("every event: %v %v", all, err)
	}
	if b, err := f.svcs.Events.ListEvents(f.ctxB, &restv2.ListEventsRequest{}); err != nil || len(b.Data) != 0 {
		t.Errorf("B's events: %v %v", b, err)
	}
}

// TestRepeatedApplicationsNoEvent: a batch sent again (a retried call, a
// file imported twice) is the same applications: stored again, no second
// event, even when the two race; anything changed (a newer sent, another
// address with the same sent) is a new application and has one.
func TestRepeatedApplicationsNoEvent(t *testing.T) {
	f := newEventsFixture(t)
	ann := applicant("Ann", "Lee", "NY", "10001", "Company Driver", "0.5", "2026-01-05T10:00:00Z", "T")
	bob := applicant("Bob", "Smith", "TX", "73301", "Student", "1", "2026-01-07T10:00:00Z")
	for _, step := range []struct {
		name string
		apps []*intake.Application
		want int
	}{
		{"first", []*intake.Application{ann, bob}, 2},
		{"the same batch again", []*intake.Application{ann, bob}, 2},
		{"Ann again, newer", []*intake.Application{applicant("Ann", "Lee", "NJ", "07030", "Student", "1", "2026-01-09T10:00:00Z")}, 3},
		{"Bob twice in one batch, newer", []*intake.Application{
			applicant("Bob", "Smith", "TX", "73301", "Student", "2", "2026-01-10T10:00:00Z"),
			applicant("Bob", "Smith", "TX", "73301", "Student", "2", "2026-01-10T10:00:00Z")}, 4},
		{"Bob corrected, same sent", []*intake.Application{
			applicant("Bob", "Smith", "TX", "75201", "Student", "2", "2026-01-10T10:00:00Z")}, 5},
	} {
		if err := f.submit(t, f.a.AccountID, step.apps...); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if got := len(f.feed(t, f.a.APIKey, "/api/v2.0/events").Data); got != step.want {
			t.Errorf("%s: %d events, want %d", step.name, got, step.want)
		}
	}
	// The same new application sent twice at once: one event.
	cy := applicant("Cy", "Ode", "OH", "43215", "Student", "1", "2026-01-11T10:00:00Z")
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f.submit(t, f.a.AccountID, cy)
		}()
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("racing submissions: %v", errs)
	}
	if got := len(f.feed(t, f.a.APIKey, "/api/v2.0/events").Data); got != 6 {
		t.Errorf("the same application sent twice at once: %d events, want 6", got)
	}
}

// TestEventFeedPageBytes: a page holds no more than about 2 MiB of event
// data whatever the limit (one event at least, however large), and paging
// on from its last event sees every event once; over gRPC, a client with
// the default 4 MiB receive limit reads a page at limit 1000.
func TestEventFeedPageBytes(t *testing.T) {
	f := newEventsFixture(t)
	sizes := []int{900 << 10, 900 << 10, 900 << 10, 900 << 10, 900 << 10, 2500 << 10, 100}
	var news []store.NewEvent
	for i, n := range sizes {
		news = append(news, store.NewEvent{Type: domain.EventApplicationReceived,
			Data: []byte(fmt.Sprintf(`{"id": %d, "notes": "%s"}`, i, strings.Repeat("x", n)))})
	}
	written := storetest.InsertEvents(t, f.st, f.a.AccountID, news)
	var seen, want, pages []string
	for _, e := range written {
		want = append(want, e.ID)
	}
	next := "/api/v2.0/events?limit=1000"
	for range len(sizes) + 1 {
		page := f.feed(t, f.a.APIKey, next)
		if len(page.Data) == 0 {
			break
		}
		total := 0
		for _, e := range page.Data {
			total += len(e.Data)
			seen = append(seen, e.ID)
		}
		pages = append(pages, fmt.Sprint(len(page.Data)))
		if len(page.Data) > 1 && total > 2<<20 {
			t.Errorf("a page of %d events and %d bytes of data", len(page.Data), total)
		}
		next = page.Links.Next
	}
	if fmt.Sprint(seen) != fmt.Sprint(want) || strings.Join(pages, ",") != "2,2,1,1,1" {
		t.Errorf("pages of %v events saw %v, want %v", pages, seen, want)
	}
	events := jobboardv2.NewEventServiceClient(f.conn(t, "127.0.0.1"))
	got, err := events.ListEvents(withKey(f.a.APIKey), &jobboardv2.ListEventsRequest{Limit: 1000})
	if err != nil || len(got.Data) != 2 || got.NextAfter != written[1].ID {
		t.Errorf("gRPC page at limit 1000: %d events, next_after %q, %v; want 2 and %s", len(got.GetData()), got.GetNextAfter(), err, written[1].ID)
	}
}

// TestInsertEventsKeepData: events written alone (their data a parameter
// of its own) or several at once (their data in an array) keep their data
// byte for byte, and are numbered in the order given, after the account's
// earlier events.
func TestInsertEventsKeepData(t *testing.T) {
	f := newImportFixture(t)
	accountA := func() int64 { c, _ := call.From(f.ctxA); return c.AccountID }()
	data := []string{`{"a" : "\u00e9 é",  "b":[1, 2] }`, `{"c":"x\\y\"z"}`, `{ }`}
	var want []string
	for _, n := range []int{1, 3, 1} {
		var news []store.NewEvent
		for i := range n {
			news = append(news, store.NewEvent{Type: domain.EventApplicationReceived, Data: []byte(data[i])})
			want = append(want, data[i])
		}
		written := storetest.InsertEvents(t, f.st, accountA, news)
		for i, e := range written {
			if e.Seq != int64(len(want)-n+i+1) || string(e.Data) != data[i] {
				t.Errorf("event %d of %d written as number %d with %s", i, n, e.Seq, e.Data)
			}
		}
	}
	page, err := f.svcs.Events.ListEvents(f.ctxA, &restv2.ListEventsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range page.Data {
		got = append(got, string(e.Data))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events read back:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
