package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
)

// statusListFixture is account A with three drivers, Ann hired, Bob
// rejected and Cy new, and account B with a hired driver of its own.
type statusListFixture struct {
	*eventsFixture
	ann, bob, cy int64
}

func newStatusListFixture(t *testing.T) statusListFixture {
	t.Helper()
	f := statusListFixture{eventsFixture: newEventsFixture(t)}
	err := f.submit(t, f.a.AccountID,
		applicant("Ann", "Lee", "NY", "10001", "Company Driver", "2", "2026-01-05T10:00:00Z"),
		applicant("Bob", "Ray", "NY", "10001", "Student", "0.5", "2026-01-06T10:00:00Z"),
		applicant("Cy", "Dunn", "TX", "75201", "Owner Operator", "9", "2026-01-07T10:00:00Z"))
	if err == nil {
		err = f.submit(t, f.b.AccountID, applicant("Dee", "Fox", "OH", "43004", "Student", "1", "2026-01-08T10:00:00Z"))
	}
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]*int64{"ann.lee@example.com": &f.ann, "bob.ray@example.com": &f.bob, "cy.dunn@example.com": &f.cy}
	rows, err := f.st.DB().QueryContext(context.Background(), `SELECT email, driver_id FROM applications WHERE account_id = $1`, f.a.AccountID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var email string
		var id int64
		if err := rows.Scan(&email, &id); err != nil {
			t.Fatal(err)
		}
		*ids[email] = id
	}
	body := fmt.Sprintf(`{"statuses": [{"driverId": %d, "status": "hired"}, {"driverId": %d, "status": "rejected", "reason": "psp"}]}`, f.ann, f.bob)
	if code, b := f.send(t, http.MethodPost, f.a.APIKey, "/api/v2.0/driver-statuses", []byte(body)); code != http.StatusOK {
		t.Fatalf("A's statuses: HTTP %d %s", code, b)
	}
	var dee int64
	if err := f.st.DB().GetContext(context.Background(), &dee, `SELECT driver_id FROM applications WHERE account_id = $1`, f.b.AccountID); err != nil {
		t.Fatal(err)
	}
	if code, b := f.send(t, http.MethodPut, f.b.APIKey, fmt.Sprintf("/api/v2.0/drivers/%d/status", dee), []byte(`{"status": "hired"}`)); code != http.StatusOK {
		t.Fatalf("B's status: HTTP %d %s", code, b)
	}
	return f
}

// listed is the ids and statuses of a REST drivers list in JSON, and
// whether any item had a status member.
func (f statusListFixture) listed(t *testing.T, query string) (ids []int64, statuses []string, withStatus bool) {
	t.Helper()
	code, body := f.get(t, f.a.APIKey, "/api/v2.0/drivers.json?"+query)
	if code != http.StatusOK {
		t.Fatalf("%s: HTTP %d %s", query, code, body)
	}
	var items []map[string]json.RawMessage
	if err := json.Unmarshal(body, &items); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	for _, it := range items {
		var id int64
		var st string
		if err := json.Unmarshal(it["id"], &id); err != nil {
			t.Fatal(err)
		}
		if raw, ok := it["status"]; ok {
			withStatus = true
			if err := json.Unmarshal(raw, &st); err != nil {
				t.Fatal(err)
			}
		}
		ids, statuses = append(ids, id), append(statuses, st)
	}
	return ids, statuses, withStatus
}

// TestDriversByStatusREST: the drivers list's status filter, alone, with
// another filter and naming every status; include=status on the list and
// the detail, absent otherwise; bad values named with the rule; another
// account's statuses never counted.
func TestDriversByStatusREST(t *testing.T) {
	f := newStatusListFixture(t)
	for _, tt := range []struct {
		query      string
		ids        []int64
		statuses   []string
		withStatus bool
	}{
		{"status=hired", []int64{f.ann}, []string{""}, false},
		{"status=Rejected,%20hired&include=status", []int64{f.ann, f.bob}, []string{"hired", "rejected"}, true},
		{"status=new&include=status", []int64{f.cy}, []string{"new"}, true},
		{"status=new,hired&state=NY&include=status", []int64{f.ann}, []string{"hired"}, true},
		{"status=offered", nil, nil, false},
		{"status=new,reviewing,contacted,interviewing,offered,hired,rejected,withdrawn&sort=name&include=status",
			[]int64{f.cy, f.ann, f.bob}, []string{"new", "hired", "rejected"}, true},
		{"include=status&sort=-id", []int64{f.cy, f.bob, f.ann}, []string{"new", "rejected", "hired"}, true},
	} {
		ids, statuses, withStatus := f.listed(t, tt.query)
		if fmt.Sprint(ids) != fmt.Sprint(tt.ids) || fmt.Sprint(statuses) != fmt.Sprint(tt.statuses) || withStatus != tt.withStatus {
			t.Errorf("%s: ids %v statuses %q (member %v), want %v %q (%v)", tt.query, ids, statuses, withStatus, tt.ids, tt.statuses, tt.withStatus)
		}
	}
	code, body := f.get(t, f.a.APIKey, fmt.Sprintf("/api/v2.0/drivers.xml/%d?include=status", f.bob))
	if code != http.StatusOK || !strings.Contains(string(body), "<is_premium/><status>rejected</status></driver></drivers>") {
		t.Errorf("Bob's XML detail with status: HTTP %d %s", code, body)
	}
	if code, body := f.get(t, f.a.APIKey, fmt.Sprintf("/api/v2.0/drivers.json/%d", f.bob)); code != http.StatusOK || strings.Contains(string(body), `"status"`) {
		t.Errorf("Bob's detail without include: HTTP %d %s", code, body)
	}
	for _, tt := range []struct{ query, want string }{
		{"status=hired,fired", `status: \"hired,fired\" holds \"fired\", which is not a status`},
		{"status=" + strings.Repeat("new,", 10) + "new", `status: \"` + strings.Repeat("new,", 10) + `new\" names 11 statuses; at most 10`},
		{"status=hired&include=history", `include: \"history\" is not valid; \"history\" is not a member to include; allowed: status`},
	} {
		code, body := f.get(t, f.a.APIKey, "/api/v2.0/drivers.json?"+tt.query)
		if code != http.StatusBadRequest || !strings.Contains(string(body), tt.want) {
			t.Errorf("%s: HTTP %d %s, want 400 saying %s", tt.query, code, body, tt.want)
		}
	}
	// B's one driver is hired; A's list of hired drivers and its count hold Ann alone.
	code, body = f.get(t, f.b.APIKey, "/api/v2.0/drivers.json?status=hired&include=status")
	if code != http.StatusOK || strings.Contains(string(body), "Ann") || !strings.Contains(string(body), "Dee") {
		t.Errorf("B's hired drivers: HTTP %d %s", code, body)
	}
	if code, body := f.get(t, f.b.APIKey, fmt.Sprintf("/api/v2.0/drivers.json/%d?include=status", f.ann)); code != http.StatusNotFound {
		t.Errorf("A's driver to B with include=status: HTTP %d %s", code, body)
	}
}

// TestDriversByStatusGRPC: list items and details always carry the status;
// the statuses filter pages by token; an UNSPECIFIED or unknown status and
// more than 10 are named.
func TestDriversByStatusGRPC(t *testing.T) {
	f := newStatusListFixture(t)
	client := jobboardv2.NewDriverServiceClient(f.conn(t, "127.0.0.1"))
	ctx := withKey(f.a.APIKey)
	all, err := client.ListDrivers(ctx, &jobboardv2.ListDriversRequest{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]jobboardv2.LeadStatus{}
	for _, d := range all.GetDrivers() {
		got[d.GetId()] = d.GetStatus()
	}
	want := map[int64]jobboardv2.LeadStatus{f.ann: jobboardv2.LeadStatus_LEAD_STATUS_HIRED,
		f.bob: jobboardv2.LeadStatus_LEAD_STATUS_REJECTED, f.cy: jobboardv2.LeadStatus_LEAD_STATUS_NEW}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("statuses of the list %v, want %v", got, want)
	}
	req := &jobboardv2.ListDriversRequest{PageSize: 1, Statuses: []jobboardv2.LeadStatus{
		jobboardv2.LeadStatus_LEAD_STATUS_REJECTED, jobboardv2.LeadStatus_LEAD_STATUS_HIRED}}
	var paged []int64
	for range 3 {
		page, err := client.ListDrivers(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if page.GetTotalSize() != 2 {
			t.Errorf("total %d, want 2", page.GetTotalSize())
		}
		for _, d := range page.GetDrivers() {
			paged = append(paged, d.GetId())
		}
		if req.PageToken = page.GetNextPageToken(); req.PageToken == "" {
			break
		}
	}
	if fmt.Sprint(paged) != fmt.Sprint([]int64{f.ann, f.bob}) {
		t.Errorf("paged %v, want Ann then Bob", paged)
	}
	// A token of the statuses filter does not continue another filter.
	first, err := client.ListDrivers(ctx, &jobboardv2.ListDriversRequest{PageSize: 1, Statuses: []jobboardv2.LeadStatus{jobboardv2.LeadStatus_LEAD_STATUS_HIRED,
		jobboardv2.LeadStatus_LEAD_STATUS_NEW}})
	if err != nil || first.GetNextPageToken() == "" {
		t.Fatalf("a first page: %v %v", first, err)
	}
	if _, err := client.ListDrivers(ctx, &jobboardv2.ListDriversRequest{PageSize: 1, PageToken: first.GetNextPageToken()}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("a token of statuses [hired new] without them: %v", err)
	}
	detail, err := client.GetDriver(ctx, &jobboardv2.GetDriverRequest{Id: f.bob})
	if err != nil || detail.GetDriver().GetStatus() != jobboardv2.LeadStatus_LEAD_STATUS_REJECTED {
		t.Errorf("Bob's detail: %v %v", detail, err)
	}
	for _, tt := range []struct {
		name     string
		statuses []jobboardv2.LeadStatus
		want     string
	}{
		{"unspecified", []jobboardv2.LeadStatus{jobboardv2.LeadStatus_LEAD_STATUS_HIRED, jobboardv2.LeadStatus_LEAD_STATUS_UNSPECIFIED},
			`statuses: "hired,LEAD_STATUS_UNSPECIFIED" holds "LEAD_STATUS_UNSPECIFIED", which is not a status`},
		{"unknown", []jobboardv2.LeadStatus{42}, `statuses: "42" holds "42", which is not a status`},
		{"eleven", make([]jobboardv2.LeadStatus, 11), "names 11 statuses; at most 10"},
	} {
		_, err := client.ListDrivers(ctx, &jobboardv2.ListDriversRequest{Statuses: tt.statuses})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), tt.want) {
			t.Errorf("%s: %v, want INVALID_ARGUMENT saying %s", tt.name, err, tt.want)
		}
	}
}
