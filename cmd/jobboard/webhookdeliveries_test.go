package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/truckjobs/jobboard/domain"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/webhook"
)

// hookReceiver records the deliveries it gets and answers 200.
type hookReceiver struct {
	mu     sync.Mutex
	ids    []string
	bodies [][]byte
	heads  []http.Header
	srv    *httptest.Server
}

func newHookReceiver(t *testing.T) *hookReceiver {
	r := &hookReceiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.ids = append(r.ids, req.Header.Get("webhook-id"))
		r.bodies = append(r.bodies, body)
		r.heads = append(r.heads, req.Header.Clone())
		r.mu.Unlock()
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// wait returns the webhook-ids of the first n deliveries.
func (r *hookReceiver) wait(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r.mu.Lock()
		got := append([]string(nil), r.ids...)
		r.mu.Unlock()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d deliveries, want %d", len(got), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// hookDB writes endpoints and events the way the endpoint API and the
// outbox do: a test fixture for the delivery actions.
type hookDB struct{ db *sqlx.DB }

func openHookDB(t *testing.T, env []string) hookDB {
	t.Helper()
	url := strings.TrimPrefix(env[0], "DATABASE_URL=")
	db, err := sqlx.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return hookDB{db}
}

// endpoint stores an enabled endpoint and returns its we_ id and secret.
func (h hookDB) endpoint(t *testing.T, account int64, url string) (string, string) {
	t.Helper()
	secret := webhook.NewSecret()
	var id string
	err := h.db.QueryRow(`INSERT INTO webhook_endpoints (account_id, url, events, secret) VALUES ($1, $2, $3, $4) RETURNING id`,
		account, url, pq.Array([]string{string(domain.EventApplicationReceived)}), secret).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return store.EndpointID(id), secret
}

func (h hookDB) setEnabled(t *testing.T, publicID string, enabled bool) {
	t.Helper()
	id, _ := store.ParseEndpointID(publicID)
	q := `UPDATE webhook_endpoints SET enabled = false, disabled_at = now(), disabled_reason = 'manual' WHERE id = $1`
	if enabled {
		q = `UPDATE webhook_endpoints SET enabled = true, disabled_at = NULL, disabled_reason = NULL, generation = generation + 1 WHERE id = $1`
	}
	if _, err := h.db.Exec(q, id); err != nil {
		t.Fatal(err)
	}
}

// event stores an application event of account without queueing any
// delivery, as one created while the account's endpoints were disabled.
func (h hookDB) event(t *testing.T, account int64) string {
	t.Helper()
	var id string
	err := h.db.QueryRow(`INSERT INTO events (account_id, seq, type, data) VALUES ($1, 1000, $2, '{"id": 7}') RETURNING id`,
		account, domain.EventApplicationReceived).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return store.EventID(id)
}

// TestWebhookDeliveryActions: the test action, the deliveries log and
// redelivery over REST and gRPC, with their errors and access log lines.
func TestWebhookDeliveryActions(t *testing.T) {
	env := migratedEnv(t)
	a, b := createAccount(t, env, "Hooks"), createAccount(t, env, "Other")
	svc := startService(t, append(env, "JOBBOARD_CALLBACK_ALLOW_PRIVATE=true", "JOBBOARD_CALLBACK_RETRY_SCHEDULE=10ms,20ms"))
	db := openHookDB(t, env)
	r := newHookReceiver(t)
	we, secret := db.endpoint(t, a.ID, r.srv.URL)
	otherWe, _ := db.endpoint(t, b.ID, r.srv.URL)
	base := "/api/v2.0/webhooks/" + we

	code, head, body := svc.request("bearer", a.APIKey, "POST", base+"/test", "")
	var test struct {
		Data struct {
			EventID string `json:"eventId"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &test); code != 202 || err != nil || !regexp.MustCompile(`^evt_[0-9a-f]{32}$`).MatchString(test.Data.EventID) {
		t.Fatalf("test: %d %s", code, body)
	}
	if !strings.HasPrefix(head.Get("Content-Type"), "application/json") {
		t.Errorf("test answered Content-Type %q", head.Get("Content-Type"))
	}
	if got := r.wait(t, 1); got[0] != test.Data.EventID {
		t.Errorf("delivered webhook-id %q, want %q", got[0], test.Data.EventID)
	}
	checkTestDelivery(t, r, secret, test.Data.EventID, we)
	checkDeliveriesLog(t, svc, a.APIKey, base, test.Data.EventID)

	// Redelivery: the same webhook-id again; an event from a disabled time too.
	if code, head, body := svc.request("bearer", a.APIKey, "POST", base+"/deliveries/"+test.Data.EventID+"/redeliver", ""); code != 202 || body != "" || head.Get("Content-Type") != "" {
		t.Errorf("redeliver: %d %q %q, want 202 without a body", code, head.Get("Content-Type"), body)
	}
	r.wait(t, 2) // before disabling, which would drop it
	db.setEnabled(t, we, false)
	missed := db.event(t, a.ID)
	db.setEnabled(t, we, true)
	if code, _, body := svc.request("bearer", a.APIKey, "POST", base+"/deliveries/"+missed+"/redeliver", ""); code != 202 {
		t.Errorf("redeliver an event from while disabled: %d %s", code, body)
	}
	if got := r.wait(t, 3); got[1] != test.Data.EventID || got[2] != missed {
		t.Errorf("webhook-ids %v, want the test event twice, then %s", got, missed)
	}
	checkDeliveryErrors(t, svc, db, a.APIKey, we, otherWe, test.Data.EventID)
	checkDeliveryGRPC(t, svc, db, a.APIKey, we, missed, r)

	time.Sleep(100 * time.Millisecond)
	logs := svc.stderr.String()
	for _, want := range []string{`"route":"/api/v2.0/webhooks/{id}/test","status":202`,
		`"route":"/api/v2.0/webhooks/{id}/deliveries","status":200`,
		`"route":"/api/v2.0/webhooks/{id}/deliveries/{event_id}/redeliver","status":202`,
		`"msg":"rpc","method":"/jobboard.v2.WebhookService/TestWebhook","code":"OK"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("no access line with %s:\n%s", want, logs)
		}
	}
	if _, _, metrics := svc.scrape(); !strings.Contains(metrics, `jobboard_webhook_deliveries_total{outcome="delivered"} 5`) ||
		!strings.Contains(metrics, `jobboard_queue_jobs{kind="webhook_delivery",state="available"}`) {
		t.Errorf("metrics lack 5 deliveries or the delivery queue:\n%s", grepLines(metrics, "webhook"))
	}
}

// checkTestDelivery: the test event's delivery is signed for the endpoint
// and carries {"webhookId": ...}.
func checkTestDelivery(t *testing.T, r *hookReceiver, secret, eventID, we string) {
	t.Helper()
	r.mu.Lock()
	body, head := r.bodies[0], r.heads[0]
	r.mu.Unlock()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(body, head); err != nil {
		t.Errorf("test delivery does not verify: %v", err)
	}
	var event struct {
		ID, Type string
		Data     map[string]string
	}
	if err := json.Unmarshal(body, &event); err != nil || event.ID != eventID || event.Type != "webhook.test" || event.Data["webhookId"] != we {
		t.Errorf("test delivery body %s", body)
	}
}

// checkDeliveriesLog: the attempt is listed with every field, limit is
// checked.
func checkDeliveriesLog(t *testing.T, svc *service, key, base, eventID string) {
	t.Helper()
	var body string
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(body, eventID) && time.Now().Before(deadline) {
		_, _, body = svc.request("bearer", key, "GET", base+"/deliveries", "")
		time.Sleep(20 * time.Millisecond)
	}
	entry := regexp.MustCompile(`^\{"data":\[\{"eventId":"` + eventID + `","eventType":"webhook.test","attempt":1,` +
		`"attemptedAt":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z","statusCode":200,"error":null,"durationMs":\d+\}\]\}\n$`)
	if !entry.MatchString(body) {
		t.Errorf("deliveries log %q", body)
	}
	for _, bad := range []string{"0", "1001", "ten"} {
		code, _, body := svc.request("bearer", key, "GET", base+"/deliveries?limit="+bad, "")
		if code != 400 || !strings.Contains(body, `limit: \"`+bad+`\" is not valid; allowed: a whole number from 1 to 1000`) {
			t.Errorf("limit=%s: %d %s", bad, code, body)
		}
	}
	if code, _, body := svc.request("bearer", key, "GET", base+"/deliveries?limit=1", ""); code != 200 || !entry.MatchString(body) {
		t.Errorf("limit=1: %d %s", code, body)
	}
}

// checkDeliveryErrors: unknown, malformed and other accounts' ids are 404,
// a disabled endpoint 422.
func checkDeliveryErrors(t *testing.T, svc *service, db hookDB, key, we, otherWe, eventID string) {
	t.Helper()
	unknown := "we_" + strings.Repeat("0", 32)
	for _, tt := range []struct {
		method, path string
		code         int
	}{
		{"POST", "/api/v2.0/webhooks/" + unknown + "/test", 404},
		{"POST", "/api/v2.0/webhooks/not-an-id/test", 404},
		{"POST", "/api/v2.0/webhooks/" + otherWe + "/test", 404},
		{"GET", "/api/v2.0/webhooks/" + otherWe + "/deliveries", 404},
		{"GET", "/api/v2.0/webhooks/we_123/deliveries", 404},
		{"POST", "/api/v2.0/webhooks/" + otherWe + "/deliveries/" + eventID + "/redeliver", 404},
		{"POST", "/api/v2.0/webhooks/" + we + "/deliveries/evt_" + strings.Repeat("a", 32) + "/redeliver", 404},
		{"POST", "/api/v2.0/webhooks/" + we + "/deliveries/nonsense/redeliver", 404},
	} {
		if code, _, body := svc.request("bearer", key, tt.method, tt.path, ""); code != tt.code {
			t.Errorf("%s %s: %d %s, want %d", tt.method, tt.path, code, body, tt.code)
		}
	}
	db.setEnabled(t, we, false)
	defer db.setEnabled(t, we, true)
	for _, path := range []string{"/test", "/deliveries/" + eventID + "/redeliver"} {
		code, _, body := svc.request("bearer", key, "POST", "/api/v2.0/webhooks/"+we+path, "")
		if code != 422 || !strings.Contains(body, "FAILED_PRECONDITION") || !strings.Contains(body, "enable it first") {
			t.Errorf("%s on a disabled endpoint: %d %s, want 422 saying to enable it first", path, code, body)
		}
	}
}

// checkDeliveryGRPC: the gRPC twins over a real connection.
func checkDeliveryGRPC(t *testing.T, svc *service, db hookDB, key, we, eventID string, r *hookReceiver) {
	t.Helper()
	client := jobboardv2.NewWebhookServiceClient(svc.grpcConn())
	ctx, cancel := context.WithTimeout(withKey(key), 10*time.Second)
	defer cancel()
	test, err := client.TestWebhook(ctx, &jobboardv2.TestWebhookRequest{Id: we})
	if err != nil || !strings.HasPrefix(test.GetEventId(), "evt_") {
		t.Fatalf("gRPC TestWebhook: %v %v", test, err)
	}
	if _, err := client.RedeliverWebhookEvent(ctx, &jobboardv2.RedeliverWebhookEventRequest{Id: we, EventId: eventID}); err != nil {
		t.Errorf("gRPC RedeliverWebhookEvent: %v", err)
	}
	r.wait(t, 5)
	var list *jobboardv2.ListWebhookDeliveriesResponse
	deadline := time.Now().Add(10 * time.Second)
	for len(list.GetData()) < 5 && time.Now().Before(deadline) {
		if list, err = client.ListWebhookDeliveries(ctx, &jobboardv2.ListWebhookDeliveriesRequest{Id: we}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	ids := []string{}
	for _, d := range list.GetData() {
		ids = append(ids, d.GetEventId())
		if d.GetStatusCode() != 200 || d.GetAttempt() != 1 || d.GetAttemptedAt() == nil || d.GetDuration() == nil || d.GetError() != "" {
			t.Errorf("gRPC delivery %v", d)
		}
	}
	if len(ids) != 5 || !(ids[0] == eventID && ids[1] == test.GetEventId()) && !(ids[1] == eventID && ids[0] == test.GetEventId()) {
		t.Errorf("gRPC deliveries %v, want the two just queued first", ids)
	}
	if d := list.GetData()[0]; d.GetEventType() == jobboardv2.EventType_EVENT_TYPE_UNSPECIFIED {
		t.Errorf("gRPC delivery without an event type: %v", d)
	}
	if _, err := client.ListWebhookDeliveries(ctx, &jobboardv2.ListWebhookDeliveriesRequest{Id: we, Limit: 5000}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("gRPC limit 5000: %v", err)
	}
	db.setEnabled(t, we, false)
	defer db.setEnabled(t, we, true)
	if _, err := client.TestWebhook(ctx, &jobboardv2.TestWebhookRequest{Id: we}); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("gRPC TestWebhook on a disabled endpoint: %v", err)
	}
}

// grepLines keeps the lines of s containing word.
func grepLines(s, word string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, word) {
			out = append(out, l)
		}
	}
	return fmt.Sprint(strings.Join(out, "\n"))
}

// scriptedReceiver answers its deliveries with the statuses of script in
// turn (the last repeats), counting them; a 302 points elsewhere.
func scriptedReceiver(t *testing.T, script ...int) (*httptest.Server, func() (int, bool)) {
	var mu sync.Mutex
	n, followed := 0, false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if req.URL.Path == "/elsewhere" {
			followed = true
			return
		}
		code := script[min(n, len(script)-1)]
		n++
		if code == http.StatusFound {
			http.Redirect(w, req, "/elsewhere", code)
			return
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(srv.Close)
	return srv, func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		return n, followed
	}
}

// TestWebhookDeliveryRulesOverREST: deliveries started by the REST test
// action follow the rules of the running binary's settings: a redirect is a
// failed attempt, not followed, and retried; 410 disables as gone; failing
// for JOBBOARD_WEBHOOK_DISABLE_AFTER disables as failing; the deliveries log
// shows each.
func TestWebhookDeliveryRulesOverREST(t *testing.T) {
	env := migratedEnv(t)
	a := createAccount(t, env, "Rules")
	svc := startService(t, append(env, "JOBBOARD_CALLBACK_ALLOW_PRIVATE=true",
		"JOBBOARD_CALLBACK_RETRY_SCHEDULE=150ms,150ms", "JOBBOARD_WEBHOOK_DISABLE_AFTER=100ms"))
	db := openHookDB(t, env)
	redirecting, redirects := scriptedReceiver(t, http.StatusFound, http.StatusOK)
	gone, gones := scriptedReceiver(t, http.StatusGone)
	failing, failures := scriptedReceiver(t, http.StatusInternalServerError)
	for _, tt := range []struct {
		name     string
		url      string
		count    func() (int, bool)
		statuses string // the log's statusCodes, newest first
		reason   string // disabledReason afterwards, "" for enabled
	}{
		{"redirect then 200", redirecting.URL, redirects, "200,302", ""},
		{"410", gone.URL, gones, "410", "gone"},
		{"failing", failing.URL, failures, "500,500", "failing"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			we, _ := db.endpoint(t, a.ID, tt.url)
			base := "/api/v2.0/webhooks/" + we
			if code, _, body := svc.request("bearer", a.APIKey, "POST", base+"/test", ""); code != 202 {
				t.Fatalf("test: %d %s", code, body)
			}
			want := len(strings.Split(tt.statuses, ","))
			var got []string
			deadline := time.Now().Add(20 * time.Second)
			for len(got) < want && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
				_, _, body := svc.request("bearer", a.APIKey, "GET", base+"/deliveries", "")
				var log struct{ Data []struct{ StatusCode int } }
				if err := json.Unmarshal([]byte(body), &log); err != nil {
					t.Fatalf("deliveries log %s: %v", body, err)
				}
				got = got[:0]
				for _, d := range log.Data {
					got = append(got, fmt.Sprint(d.StatusCode))
				}
			}
			time.Sleep(500 * time.Millisecond) // no attempt after the last
			n, followed := tt.count()
			if strings.Join(got, ",") != tt.statuses || n != want || followed {
				t.Errorf("statuses %v, %d requests, redirect followed %v; want %s", got, n, followed, tt.statuses)
			}
			var reason *string
			id, _ := store.ParseEndpointID(we)
			if err := db.db.QueryRow(`SELECT disabled_reason FROM webhook_endpoints WHERE id = $1`, id).Scan(&reason); err != nil {
				t.Fatal(err)
			}
			if (reason == nil) != (tt.reason == "") || reason != nil && *reason != tt.reason {
				t.Errorf("disabled reason %v, want %q", reason, tt.reason)
			}
		})
	}
	if !strings.Contains(svc.stderr.String(), `"msg":"webhook endpoint disabled"`) {
		t.Errorf("no log line of a disabled endpoint:\n%s", svc.stderr)
	}
}
