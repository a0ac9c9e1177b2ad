package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/truckjobs/jobboard/domain"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/server/store"
)

// TestWithdrawnDriverAppliesAgainEvent: a new application from a driver
// who withdrew makes the driver new again, and the account's feed has its
// driver.status.changed event after the application's own; the driver's
// first application and the same application sent again have none.
func TestWithdrawnDriverAppliesAgainEvent(t *testing.T) {
	f := newEventsFixture(t)
	ctx := context.Background()
	ann := applicant("Ann", "Lee", "NY", "10001", "Company Driver", "0.5", "2026-01-05T10:00:00Z", "T")
	if err := f.submit(t, f.a.AccountID, ann); err != nil {
		t.Fatal(err)
	}
	var driver int64
	if err := f.st.DB().GetContext(ctx, &driver, `SELECT driver_id FROM applications WHERE account_id = $1`, f.a.AccountID); err != nil {
		t.Fatal(err)
	}
	withdrew := time.Now().UTC().Add(-time.Hour).Truncate(time.Microsecond)
	if err := f.st.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.SetDriverStatuses(ctx, f.a.AccountID, []store.StatusUpdate{{DriverID: driver,
			StatusChange: domain.StatusChange{Status: domain.LeadWithdrawn, Note: "took another offer", ChangedAt: withdrew}}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := f.submit(t, f.a.AccountID, ann); err != nil { // the same again: no event
		t.Fatal(err)
	}
	again := applicant("Ann", "Lee", "NJ", "07030", "Company Driver", "1", "2026-01-09T10:00:00Z", "T")
	if err := f.submit(t, f.a.AccountID, again); err != nil {
		t.Fatal(err)
	}
	page := f.feed(t, f.a.APIKey, "/api/v2.0/events")
	var types []string
	for _, e := range page.Data {
		types = append(types, e.Type)
	}
	want := []string{"driver.application.received", "driver.application.received", "driver.status.changed"}
	if fmt.Sprint(types) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v", types, want)
	}
	st, err := f.st.DriverStatus(ctx, f.a.AccountID, driver)
	if err != nil {
		t.Fatal(err)
	}
	wantData := fmt.Sprintf(`{"driverId":%d,"status":"new","previousStatus":"withdrawn","reason":null,"note":null,"changedAt":%q}`,
		driver, st.ChangedAt.UTC().Format("2006-01-02T15:04:05.000000Z"))
	if got := string(page.Data[2].Data); got != wantData {
		t.Errorf("event data\n%s\nwant\n%s", got, wantData)
	}
	if st.Status != domain.LeadNew || !st.ChangedAt.After(withdrew) {
		t.Errorf("status %+v, want new after %s", st.StatusChange, withdrew)
	}
	// Another account's feed has none of it.
	if other := f.feed(t, f.b.APIKey, "/api/v2.0/events"); len(other.Data) != 0 {
		t.Errorf("B's feed: %d events", len(other.Data))
	}
}

// statusFixture is the events fixture with one driver who applied to
// account A.
type statusFixture struct {
	*eventsFixture
	driver int64
}

func newStatusFixture(t *testing.T) statusFixture {
	t.Helper()
	f := newEventsFixture(t)
	ann := applicant("Ann", "Lee", "NY", "10001", "Company Driver", "0.5", "2026-01-05T10:00:00Z", "T")
	if err := f.submit(t, f.a.AccountID, ann); err != nil {
		t.Fatal(err)
	}
	var driver int64
	if err := f.st.DB().GetContext(context.Background(), &driver, `SELECT driver_id FROM applications WHERE account_id = $1`, f.a.AccountID); err != nil {
		t.Fatal(err)
	}
	return statusFixture{f, driver}
}

// put sends PUT /api/v2.0/drivers/{driver}/status with body, as key.
func (f statusFixture) put(t *testing.T, key string, driver int64, body string) (int, string) {
	t.Helper()
	code, b := f.send(t, http.MethodPut, key, fmt.Sprintf("/api/v2.0/drivers/%d/status", driver), []byte(body))
	return code, string(b)
}

// TestDriverStatusREST: GET answers the first application's new; PUT sets
// a status and answers it with the one before in the history; the same
// again is unchanged, an older one stale, each with no event; every
// problem names the field, the value and the rule; another account's
// driver is 404 to both.
func TestDriverStatusREST(t *testing.T) {
	f := newStatusFixture(t)
	path := fmt.Sprintf("/api/v2.0/drivers/%d/status", f.driver)
	code, body := f.get(t, f.a.APIKey, path)
	var got struct {
		Data struct {
			DriverID  int64   `json:"driverId"`
			Status    string  `json:"status"`
			Reason    *string `json:"reason"`
			Note      *string `json:"note"`
			ChangedAt string  `json:"changedAt"`
			History   []struct {
				Status    string  `json:"status"`
				Reason    *string `json:"reason"`
				ChangedAt string  `json:"changedAt"`
			} `json:"history"`
		} `json:"data"`
		Stale *bool `json:"stale"`
	}
	decode := func(body []byte) {
		t.Helper()
		got.Data.History, got.Stale = nil, nil
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("%v in %s", err, body)
		}
	}
	if code != http.StatusOK {
		t.Fatalf("GET: %d %s", code, body)
	}
	decode(body)
	if got.Data.DriverID != f.driver || got.Data.Status != "new" || got.Data.Reason != nil || got.Data.Note != nil ||
		got.Data.ChangedAt != "2026-01-05T10:00:00.000000Z" || len(got.Data.History) != 0 || got.Stale != nil {
		t.Fatalf("GET of a first application: %s", body)
	}

	at := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
	steps := []struct {
		name, body string
		status     string
		stale      bool
		history    int
		events     int
	}{
		{"rejected", `{"status":"rejected","reason":"psp","note":"two crashes","changedAt":"` + at.Format(time.RFC3339) + `"}`, "rejected", false, 1, 2},
		{"the same again", `{"status":"rejected","reason":"psp","note":"two crashes"}`, "rejected", false, 1, 2},
		{"older", `{"status":"hired","changedAt":"` + at.Add(-time.Hour).Format(time.RFC3339) + `"}`, "rejected", true, 1, 2},
		{"hired now", `{"status":"hired","reason":null,"note":null}`, "hired", false, 2, 3},
	}
	for _, s := range steps {
		code, body := f.put(t, f.a.APIKey, f.driver, s.body)
		if code != http.StatusOK {
			t.Fatalf("%s: %d %s", s.name, code, body)
		}
		decode([]byte(body))
		if got.Data.Status != s.status || got.Stale == nil || *got.Stale != s.stale || len(got.Data.History) != s.history {
			t.Errorf("%s: %s", s.name, body)
		}
		if n := len(f.feed(t, f.a.APIKey, "/api/v2.0/events").Data); n != s.events {
			t.Errorf("%s: %d events, want %d", s.name, n, s.events)
		}
	}
	page := f.feed(t, f.a.APIKey, "/api/v2.0/events")
	want := fmt.Sprintf(`{"driverId":%d,"status":"rejected","previousStatus":"new","reason":"psp","note":"two crashes","changedAt":%q}`,
		f.driver, at.Format("2006-01-02T15:04:05.000000Z"))
	if page.Data[1].Type != "driver.status.changed" || string(page.Data[1].Data) != want {
		t.Errorf("event %s %s, want %s", page.Data[1].Type, page.Data[1].Data, want)
	}

	for _, tt := range []struct{ name, body, want string }{
		{"no status", `{"note":"x"}`, `status: \"\" is required`},
		{"unknown status", `{"status":"ghosted"}`, `status: \"ghosted\" is not a status`},
		{"reason without rejected", `{"status":"hired","reason":"psp"}`, `reason: \"psp\" is allowed only with status rejected`},
		{"unknown reason", `{"status":"rejected","reason":"vibes"}`, `reason: \"vibes\" is not a rejection reason`},
		{"long note", `{"status":"hired","note":"` + strings.Repeat("n", 1001) + `"}`, `is 1001 characters, more than the 1000 allowed`},
		{"future", `{"status":"hired","changedAt":"` + time.Now().Add(time.Hour).UTC().Format(time.RFC3339) + `"}`, `changedAt: `},
		{"not a time", `{"status":"hired","changedAt":"yesterday"}`, `changedAt: \"yesterday\" is not a time in RFC 3339 form`},
		{"unknown member", `{"status":"hired","reson":"psp"}`, `\"reson\": unknown field`},
		{"not an object", `["hired"]`, `the body must be a JSON object`},
		{"status not text", `{"status":3}`, `status: must be a string, got a number`},
	} {
		code, body := f.put(t, f.a.APIKey, f.driver, tt.body)
		if code != http.StatusBadRequest || !strings.Contains(body, tt.want) {
			t.Errorf("%s: %d %s, want 400 with %s", tt.name, code, body, tt.want)
		}
	}
	if code, body := f.get(t, f.a.APIKey, path); code != http.StatusOK || !strings.Contains(string(body), `"status":"hired"`) {
		t.Errorf("after the refused PUTs: %d %s", code, body)
	}

	// Another account's driver, and one that does not exist.
	for _, key := range []string{f.b.APIKey} {
		if code, body := f.get(t, key, path); code != http.StatusNotFound {
			t.Errorf("B's GET: %d %s", code, body)
		}
		if code, body := f.put(t, key, f.driver, `{"status":"hired"}`); code != http.StatusNotFound {
			t.Errorf("B's PUT: %d %s", code, body)
		}
	}
	if code, body := f.put(t, f.a.APIKey, f.driver+1000, `{"status":"hired"}`); code != http.StatusNotFound {
		t.Errorf("PUT of no driver: %d %s", code, body)
	}
	if n := len(f.feed(t, f.b.APIKey, "/api/v2.0/events").Data); n != 0 {
		t.Errorf("B's feed: %d events", n)
	}
}

// TestDriverStatusGRPC: the gRPC twins under the same rules, problems
// named by the gRPC fields.
func TestDriverStatusGRPC(t *testing.T) {
	f := newStatusFixture(t)
	client := jobboardv2.NewDriverServiceClient(f.conn(t, "127.0.0.1"))
	ctx := withKey(f.a.APIKey)
	got, err := client.GetDriverStatus(ctx, &jobboardv2.GetDriverStatusRequest{DriverId: f.driver})
	if err != nil || got.GetStatus().GetStatus() != jobboardv2.LeadStatus_LEAD_STATUS_NEW {
		t.Fatalf("GetDriverStatus: %v %v", got, err)
	}
	at := time.Now().Add(-time.Minute).Truncate(time.Microsecond)
	set, err := client.SetDriverStatus(ctx, &jobboardv2.SetDriverStatusRequest{DriverId: f.driver,
		Status: jobboardv2.LeadStatus_LEAD_STATUS_REJECTED, Reason: jobboardv2.RejectionReason_REJECTION_REASON_CLEARINGHOUSE,
		ChangedAt: timestamppb.New(at)})
	if err != nil || set.GetStale() || set.GetStatus().GetReason() != jobboardv2.RejectionReason_REJECTION_REASON_CLEARINGHOUSE ||
		!set.GetStatus().GetChangedAt().AsTime().Equal(at) || len(set.GetStatus().GetHistory()) != 1 ||
		set.GetStatus().GetHistory()[0].GetStatus() != jobboardv2.LeadStatus_LEAD_STATUS_NEW {
		t.Fatalf("SetDriverStatus: %v %v", set, err)
	}
	stale, err := client.SetDriverStatus(ctx, &jobboardv2.SetDriverStatusRequest{DriverId: f.driver,
		Status: jobboardv2.LeadStatus_LEAD_STATUS_HIRED, ChangedAt: timestamppb.New(at.Add(-time.Hour))})
	if err != nil || !stale.GetStale() || stale.GetStatus().GetStatus() != jobboardv2.LeadStatus_LEAD_STATUS_REJECTED {
		t.Errorf("an older change: %v %v", stale, err)
	}
	for _, tt := range []struct {
		name  string
		req   *jobboardv2.SetDriverStatusRequest
		field string
		code  codes.Code
	}{
		{"no driver id", &jobboardv2.SetDriverStatusRequest{Status: jobboardv2.LeadStatus_LEAD_STATUS_HIRED}, "driver_id", codes.InvalidArgument},
		{"no status", &jobboardv2.SetDriverStatusRequest{DriverId: f.driver}, "status", codes.InvalidArgument},
		{"unknown status", &jobboardv2.SetDriverStatusRequest{DriverId: f.driver, Status: 99}, "status", codes.InvalidArgument},
		{"reason with hired", &jobboardv2.SetDriverStatusRequest{DriverId: f.driver, Status: jobboardv2.LeadStatus_LEAD_STATUS_HIRED,
			Reason: jobboardv2.RejectionReason_REJECTION_REASON_PSP}, "reason", codes.InvalidArgument},
		{"future", &jobboardv2.SetDriverStatusRequest{DriverId: f.driver, Status: jobboardv2.LeadStatus_LEAD_STATUS_HIRED,
			ChangedAt: timestamppb.New(time.Now().Add(time.Hour))}, "changed_at", codes.InvalidArgument},
		{"another account's driver", &jobboardv2.SetDriverStatusRequest{DriverId: f.driver + 1000,
			Status: jobboardv2.LeadStatus_LEAD_STATUS_HIRED}, "", codes.NotFound},
	} {
		_, err := client.SetDriverStatus(ctx, tt.req)
		if status.Code(err) != tt.code || !strings.Contains(status.Convert(err).Message(), tt.field) {
			t.Errorf("%s: %v, want %s naming %q", tt.name, err, tt.code, tt.field)
		}
	}
	if _, err := client.GetDriverStatus(withKey(f.b.APIKey), &jobboardv2.GetDriverStatusRequest{DriverId: f.driver}); status.Code(err) != codes.NotFound {
		t.Errorf("B's GetDriverStatus: %v", err)
	}
}

// TestEraseDriverREST: DELETE /api/v2.0/drivers/{id} is 204 and the driver
// is gone for the account: its detail, status and events are 404 or
// absent, while another driver's stay; a second DELETE is 404; another
// account cannot erase it; gRPC DeleteDriver does the same; a later
// application arrives as new, with its event.
func TestEraseDriverREST(t *testing.T) {
	f := newStatusFixture(t)
	bob := applicant("Bob", "Smith", "TX", "73301", "Student", "1", "2026-01-07T10:00:00Z")
	if err := f.submit(t, f.a.AccountID, bob); err != nil {
		t.Fatal(err)
	}
	if code, body := f.put(t, f.a.APIKey, f.driver, `{"status":"contacted"}`); code != http.StatusOK {
		t.Fatalf("PUT: %d %s", code, body)
	}
	path := fmt.Sprintf("/api/v2.0/drivers/%d", f.driver)
	if code, body := f.send(t, http.MethodDelete, f.b.APIKey, path, nil); code != http.StatusNotFound {
		t.Errorf("B's DELETE: %d %s", code, body)
	}
	code, body := f.send(t, http.MethodDelete, f.a.APIKey, path, nil)
	if code != http.StatusNoContent || len(body) != 0 {
		t.Fatalf("DELETE: %d %q", code, body)
	}
	for _, p := range []string{fmt.Sprintf("/api/v2.0/drivers.json/%d", f.driver), path + "/status"} {
		if code, body := f.get(t, f.a.APIKey, p); code != http.StatusNotFound {
			t.Errorf("GET %s after the erasure: %d %s", p, code, body)
		}
	}
	page := f.feed(t, f.a.APIKey, "/api/v2.0/events")
	if len(page.Data) != 1 || !strings.Contains(string(page.Data[0].Data), "Bob") {
		t.Errorf("events after the erasure: %+v, want Bob's application alone", page.Data)
	}
	if code, body := f.send(t, http.MethodDelete, f.a.APIKey, path, nil); code != http.StatusNotFound {
		t.Errorf("a second DELETE: %d %s", code, body)
	}
	// Ann applies again: a new driver to the account, new, with its event.
	ann := applicant("Ann", "Lee", "NY", "10001", "Company Driver", "0.5", "2026-01-05T10:00:00Z", "T")
	if err := f.submit(t, f.a.AccountID, ann); err != nil {
		t.Fatal(err)
	}
	var again int64
	if err := f.st.DB().GetContext(context.Background(), &again,
		`SELECT driver_id FROM applications WHERE account_id = $1 AND email_key = 'ann.lee@example.com'`, f.a.AccountID); err != nil {
		t.Fatal(err)
	}
	if code, body := f.get(t, f.a.APIKey, fmt.Sprintf("/api/v2.0/drivers/%d/status", again)); code != http.StatusOK ||
		!strings.Contains(string(body), `"status":"new"`) || !strings.Contains(string(body), `"history":[]`) {
		t.Errorf("Ann applying again: %d %s", code, body)
	}
	if n := len(f.feed(t, f.a.APIKey, "/api/v2.0/events").Data); n != 2 {
		t.Errorf("%d events after Ann applied again, want 2", n)
	}
	// gRPC: B's call is NOT_FOUND, A's erases, a repeat is NOT_FOUND.
	client := jobboardv2.NewDriverServiceClient(f.conn(t, "127.0.0.1"))
	if _, err := client.DeleteDriver(withKey(f.b.APIKey), &jobboardv2.DeleteDriverRequest{DriverId: again}); status.Code(err) != codes.NotFound {
		t.Errorf("B's DeleteDriver: %v", err)
	}
	if _, err := client.DeleteDriver(withKey(f.a.APIKey), &jobboardv2.DeleteDriverRequest{DriverId: again}); err != nil {
		t.Fatalf("DeleteDriver: %v", err)
	}
	if _, err := client.DeleteDriver(withKey(f.a.APIKey), &jobboardv2.DeleteDriverRequest{DriverId: again}); status.Code(err) != codes.NotFound {
		t.Errorf("DeleteDriver again: %v", err)
	}
	if _, err := client.DeleteDriver(withKey(f.a.APIKey), &jobboardv2.DeleteDriverRequest{}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("DeleteDriver without an id: %v", err)
	}
}

// TestDriverStatusBatch: a batch applies its valid entries, by id or by
// e-mail in any case, counts the unchanged and the stale, and reports each
// problem of the others with its index, driver, field, value and rule;
// only the applied changes have events; over 1,000 entries is refused.
func TestDriverStatusBatch(t *testing.T) {
	f := newStatusFixture(t)
	bob := applicant("Bob", "Smith", "TX", "73301", "Student", "1", "2026-01-07T10:00:00Z")
	cy := applicant("Cy", "Ode", "OH", "43215", "Student", "1", "2026-01-08T10:00:00Z")
	if err := f.submit(t, f.a.AccountID, bob, cy); err != nil {
		t.Fatal(err)
	}
	if err := f.submit(t, f.b.AccountID, applicant("Di", "Ray", "OH", "43215", "Student", "1", "2026-01-08T10:00:00Z")); err != nil {
		t.Fatal(err)
	}
	var bID, cID, dID int64
	ctx := context.Background()
	for _, q := range []struct {
		id    *int64
		email string
	}{{&bID, "bob.smith@example.com"}, {&cID, "cy.ode@example.com"}, {&dID, "di.ray@example.com"}} {
		if err := f.st.DB().GetContext(ctx, q.id, `SELECT id FROM drivers WHERE email_key = $1`, q.email); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().UTC().Add(-time.Hour).Format(time.RFC3339)
	if code, body := f.put(t, f.a.APIKey, cID, `{"status":"offered"}`); code != http.StatusOK {
		t.Fatalf("PUT: %d %s", code, body)
	}
	batch := fmt.Sprintf(`{"statuses":[
		{"driverId": %d, "status": "contacted"},
		{"email": "BOB.Smith@example.com", "status": "interviewing", "note": "Friday"},
		{"driverId": "%d", "status": "offered"},
		{"driverId": %d, "status": "hired", "changedAt": %q},
		{"email": "nobody@example.com", "status": "hired"},
		{"driverId": %d, "status": "hired"},
		{"driverId": %d, "status": "ghosted"},
		{"driverId": %d, "email": "bob.smith@example.com", "status": "hired"},
		{"status": "hired"},
		{"driverId": %d, "status": "rejected", "reason": "psp", "changedAt": "last week"},
		{"driverId": %d, "status": "hired"}]}`, f.driver, cID, cID, past, dID, f.driver, bID, bID, f.driver)
	code, body := f.send(t, http.MethodPost, f.a.APIKey, "/api/v2.0/driver-statuses", []byte(batch))
	if code != http.StatusOK {
		t.Fatalf("POST: %d %s", code, body)
	}
	var got struct {
		Updated, Unchanged, Stale, Errors int
		ErrorMessages                     []struct {
			Index    int     `json:"index"`
			DriverID *int64  `json:"driverId"`
			Email    *string `json:"email"`
			Field    *string `json:"field"`
			Value    *string `json:"value"`
			Message  string  `json:"message"`
		} `json:"errorMessages"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("%v in %s", err, body)
	}
	// Entries 0 and 1 apply; 2 is unchanged; 3 is a second entry for Cy,
	// an error, as are 4-10.
	if got.Updated != 2 || got.Unchanged != 1 || got.Stale != 0 || got.Errors != 8 {
		t.Errorf("counts %d updated, %d unchanged, %d stale, %d errors: %s", got.Updated, got.Unchanged, got.Stale, got.Errors, body)
	}
	var indexes []int // each entry with problems once: an entry may have several
	for _, m := range got.ErrorMessages {
		if len(indexes) == 0 || indexes[len(indexes)-1] != m.Index {
			indexes = append(indexes, m.Index)
		}
	}
	if fmt.Sprint(indexes) != "[3 4 5 6 7 8 9 10]" {
		t.Errorf("problems of entries %v: %s", indexes, body)
	}
	for _, want := range []string{`"index":4,"driverId":null,"email":"nobody@example.com","field":"email"`,
		fmt.Sprintf(`"index":5,"driverId":%d,"email":null,"field":"driverId","value":"%d","message":"is not a driver who applied to the account"`, dID, dID),
		`"field":"status","value":"ghosted"`, `names the driver by driverId and by email`, `names no driver`,
		`"field":"changedAt","value":"last week"`, fmt.Sprintf(`is a second entry for driver %d (the first is entry 0)`, f.driver)} {
		if !strings.Contains(string(body), want) {
			t.Errorf("answer lacks %s: %s", want, body)
		}
	}
	// Statuses: Ann contacted, Bob interviewing, Cy still offered; B's Di new.
	for id, want := range map[int64]string{f.driver: `"status":"contacted"`, bID: `"status":"interviewing"`, cID: `"status":"offered"`} {
		if code, b := f.get(t, f.a.APIKey, fmt.Sprintf("/api/v2.0/drivers/%d/status", id)); code != 200 || !strings.Contains(string(b), want) {
			t.Errorf("driver %d: %d %s, want %s", id, code, b, want)
		}
	}
	if code, b := f.get(t, f.b.APIKey, fmt.Sprintf("/api/v2.0/drivers/%d/status", dID)); code != 200 || !strings.Contains(string(b), `"status":"new"`) {
		t.Errorf("B's driver: %d %s", code, b)
	}
	if changes := len(f.feed(t, f.a.APIKey, "/api/v2.0/events?type=driver.status.changed").Data); changes != 3 { // the PUT and the batch's two
		t.Errorf("%d status events, want 3", changes)
	}

	var many strings.Builder
	many.WriteString(`{"statuses":[`)
	for i := range 1001 {
		if i > 0 {
			many.WriteString(",")
		}
		fmt.Fprintf(&many, `{"driverId":%d,"status":"hired"}`, f.driver)
	}
	many.WriteString(`]}`)
	if code, body := f.send(t, http.MethodPost, f.a.APIKey, "/api/v2.0/driver-statuses", []byte(many.String())); code != http.StatusBadRequest ||
		!strings.Contains(string(body), "more than 1000") {
		t.Errorf("1,001 entries: %d %.300s", code, body)
	}

	// gRPC: the same rules, the gRPC field names.
	client := jobboardv2.NewDriverServiceClient(f.conn(t, "127.0.0.1"))
	resp, err := client.SetDriverStatuses(withKey(f.a.APIKey), &jobboardv2.SetDriverStatusesRequest{Statuses: []*jobboardv2.DriverStatusBatchEntry{
		{Email: "cy.ode@example.com", Status: jobboardv2.LeadStatus_LEAD_STATUS_HIRED},
		{DriverId: dID, Status: jobboardv2.LeadStatus_LEAD_STATUS_HIRED},
		{DriverId: bID, Status: jobboardv2.LeadStatus_LEAD_STATUS_HIRED, ChangedAt: timestamppb.New(time.Now().Add(time.Hour))},
	}})
	if err != nil || resp.GetUpdated() != 1 || resp.GetErrors() != 2 || len(resp.GetErrorMessages()) != 2 ||
		resp.GetErrorMessages()[0].GetField() != "driver_id" || resp.GetErrorMessages()[1].GetField() != "changed_at" {
		t.Errorf("gRPC batch: %v %v", resp, err)
	}
}
