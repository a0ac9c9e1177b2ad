package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/truckjobs/jobboard/gateway/render"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/internal/testfix"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/webhook"
)

// receiver records the callbacks it gets and answers with the next status
// of its script (the last one repeats); delay slows every answer.
type receiver struct {
	mu        sync.Mutex
	got       []*http.Request
	bodies    [][]byte
	script    []int
	delay     time.Duration
	srv       *httptest.Server
	elsewhere bool
}

func newReceiver(t *testing.T, script ...int) *receiver {
	r := &receiver{script: script}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/elsewhere" {
			r.mu.Lock()
			r.elsewhere = true
			r.mu.Unlock()
			return
		}
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, req)
		r.bodies = append(r.bodies, body)
		code := r.script[min(len(r.got)-1, len(r.script)-1)]
		r.mu.Unlock()
		time.Sleep(r.delay)
		if code == http.StatusFound {
			http.Redirect(w, req, "/elsewhere", code)
			return
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (f *importFixture) attempts(t *testing.T, id string, n int) []store.CallbackAttempt {
	t.Helper()
	var got []store.CallbackAttempt
	testfix.Eventually(20*time.Second, func() bool {
		var err error
		if got, err = f.st.CallbackAttempts(context.Background(), id); err != nil {
			t.Fatal(err)
		}
		return len(got) >= n
	})
	return got
}

func callbackImport(cb string) *restv2.CreateJobImportRequest {
	return &restv2.CreateJobImportRequest{Jobs: []*restv2.JobInput{input("CB1")}, CallbackUrl: &cb}
}

func TestCallbackSignedAndSameAsRetrieve(t *testing.T) {
	f := newImportFixture(t)
	r := newReceiver(t, http.StatusNoContent)
	// The request id arrives as the gateway and the gRPC interceptor pass it.
	ctx := metadata.NewIncomingContext(f.ctxA, metadata.Pairs("x-request-id", "req-callback-1"))
	imp := f.run(t, ctx, callbackImport(r.srv.URL+"/hook"))
	attempts := f.attempts(t, imp.Id, 1)
	if len(attempts) != 1 || attempts[0].StatusCode == nil || *attempts[0].StatusCode != 204 {
		t.Fatalf("attempts: %+v", attempts)
	}
	req, body := r.got[0], r.bodies[0]
	if got := req.Header.Get("X-Request-Id"); got != "req-callback-1" {
		t.Errorf("callback X-Request-Id %q, want the creating request's req-callback-1", got)
	}
	caller, _ := call.From(f.ctxA)
	account, _ := f.st.Account(context.Background(), caller.AccountID)
	ts, _ := strconv.ParseInt(req.Header.Get("webhook-timestamp"), 10, 64)
	want, _ := webhook.Sign(account.WebhookSecret, req.Header.Get("webhook-id"), ts, body)
	if req.Header.Get("webhook-signature") != want || req.Header.Get("Content-Type") != "application/json" {
		t.Errorf("headers %v, want signature %s", req.Header, want)
	}
	got, _ := f.svcs.Imports.GetJobImport(f.ctxA, &restv2.GetJobImportRequest{Id: imp.Id})
	retrieved, _ := render.JSON(got)
	if string(body) != string(retrieved) {
		t.Errorf("callback body\n%s\ndiffers from retrieving the import\n%s", body, retrieved)
	}
}

// TestCallbackSignedDuringSecretRotation: after the account's secret is
// rotated, its callbacks carry a signature by the new secret and one by
// the old, until the overlap ends; then the new one's alone.
func TestCallbackSignedDuringSecretRotation(t *testing.T) {
	f := newImportFixture(t)
	r := newReceiver(t, http.StatusNoContent)
	ctx := context.Background()
	caller, _ := call.From(f.ctxA)
	before, err := f.st.Account(ctx, caller.AccountID)
	if err != nil {
		t.Fatal(err)
	}
	secret, err := RotateWebhookSecret(ctx, f.st, caller.AccountID)
	if err != nil {
		t.Fatal(err)
	}
	for i, tt := range []struct {
		phase   string
		expire  bool
		secrets []string
	}{
		{"during the overlap", false, []string{secret, before.WebhookSecret}},
		{"after it", true, []string{secret}},
	} {
		if tt.expire {
			if _, err := f.st.DB().ExecContext(ctx, `UPDATE accounts SET previous_webhook_secret_until = now() - interval '1 second' WHERE id = $1`,
				caller.AccountID); err != nil {
				t.Fatal(err)
			}
		}
		imp := f.run(t, f.ctxA, callbackImport(r.srv.URL+"/hook"))
		f.attempts(t, imp.Id, 1)
		r.mu.Lock()
		req, body := r.got[i], r.bodies[i]
		r.mu.Unlock()
		ts, _ := strconv.ParseInt(req.Header.Get("webhook-timestamp"), 10, 64)
		var want []string
		for _, s := range tt.secrets {
			sig, _ := webhook.Sign(s, req.Header.Get("webhook-id"), ts, body)
			want = append(want, sig)
		}
		if got := req.Header.Get("webhook-signature"); got != strings.Join(want, " ") {
			t.Errorf("%s: webhook-signature %q, want %q (the new secret's, then the old one's while it lasts)", tt.phase, got, strings.Join(want, " "))
		}
	}
}

func TestCallbackRetries(t *testing.T) {
	tests := []struct {
		name     string
		script   []int
		delay    time.Duration
		attempts int
		codes    []int // recorded status per attempt; 0 for none
		outcomes map[string]float64
	}{
		{"fails twice then succeeds", []int{500, 503, 200}, 0, 3, []int{500, 503, 200},
			map[string]float64{"failed_retry": 2, "delivered": 1}},
		{"410 stops retrying", []int{410}, 0, 1, []int{410}, map[string]float64{"gone_410": 1}},
		{"redirect is not followed", []int{302}, 0, 3, []int{302, 302, 302},
			map[string]float64{"failed_retry": 2, "gave_up": 1}},
		{"slower than the timeout", []int{200}, 800 * time.Millisecond, 3, []int{0, 0, 0},
			map[string]float64{"failed_retry": 2, "gave_up": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newImportFixture(t)
			r := newReceiver(t, tt.script...)
			r.delay = tt.delay
			imp := f.run(t, f.ctxA, callbackImport(r.srv.URL))
			attempts := f.attempts(t, imp.Id, tt.attempts)
			time.Sleep(300 * time.Millisecond) // no further attempt may follow
			attempts = f.attempts(t, imp.Id, tt.attempts)
			if len(attempts) != tt.attempts {
				t.Fatalf("%d attempts, want %d: %+v", len(attempts), tt.attempts, attempts)
			}
			for i, a := range attempts {
				code := 0
				if a.StatusCode != nil {
					code = *a.StatusCode
				}
				if code != tt.codes[i] || a.WebhookID != attempts[0].WebhookID || a.Attempt != i+1 {
					t.Errorf("attempt %d: %+v", i+1, a)
				}
				if code == 0 && a.Error == nil {
					t.Errorf("attempt %d without an answer records no error", i+1)
				}
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.elsewhere {
				t.Error("the redirect was followed")
			}
			for i, req := range r.got {
				if id, ok := req.Header["X-Request-Id"]; ok {
					t.Errorf("attempt %d of an import created without a request id sent X-Request-Id %q", i+1, id)
				}
			}
			for _, outcome := range []string{"delivered", "failed_retry", "gone_410", "gave_up"} {
				got := sample(t, f.metrics, "jobboard_callback_delivery_attempts_total", map[string]string{"outcome": outcome})
				if got != tt.outcomes[outcome] {
					t.Errorf("callback attempts with outcome %s: %v, want %v", outcome, got, tt.outcomes[outcome])
				}
			}
		})
	}
}

func TestCallbackURLRefusedWhenNotPublic(t *testing.T) {
	f := newIdleImportFixture(t, func(c *Config) { c.AllowPrivateCallbacks = false })
	guarded := f.svcs.Imports
	for _, u := range []string{"http://127.0.0.1:9/cb", "http://[::1]/cb", "http://10.0.0.1/cb", "http://169.254.169.254/", "http://localhost/cb", "ftp://x/", "https://u:p@x/"} {
		_, err := guarded.CreateJobImport(f.ctxA, callbackImport(u))
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: %v, want InvalidArgument", u, err)
		}
	}
}

// TestCallbackGivingUpLogged: when the last delivery attempt fails, the
// service itself says so in one log line, with the import, the attempts,
// the last status or error and the callback's scheme and host only.
func TestCallbackGivingUpLogged(t *testing.T) {
	tests := []struct {
		name  string
		code  int
		delay time.Duration
		want  string // the attribute holding the last failure
	}{
		{"receiver answers 500", http.StatusInternalServerError, 0, "status"},
		{"receiver slower than the timeout", http.StatusOK, 800 * time.Millisecond, "error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := captureLog(t)
			f := newImportFixture(t)
			r := newReceiver(t, tt.code)
			r.delay = tt.delay
			imp := f.run(t, f.ctxA, callbackImport(r.srv.URL+"/hooks/secret-token?key=secret-key"))
			if n := len(f.attempts(t, imp.Id, 3)); n != 3 {
				t.Fatalf("%d attempts, want 3", n)
			}
			var last []map[string]any
			deadline := time.Now().Add(5 * time.Second)
			for len(last) == 0 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond) // the line follows the recorded attempt
				last = nil
				for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
					var rec map[string]any
					if json.Unmarshal([]byte(line), &rec) == nil && strings.HasPrefix(fmt.Sprint(rec["msg"]), "callback not delivered") {
						last = append(last, rec)
					}
				}
			}
			if len(last) != 1 {
				t.Fatalf("%d lines say the callback was given up, want 1:\n%s", len(last), out)
			}
			rec := last[0]
			host := strings.TrimPrefix(r.srv.URL, "http://")
			if rec["level"] != "ERROR" || rec["import"] != imp.Id || rec["attempts"] != float64(3) ||
				rec["url"] != "http://"+host+"/..." || rec[tt.want] == nil {
				t.Errorf("log line %v, want ERROR with import %s, attempts 3, url of the host only and %s", rec, imp.Id, tt.want)
			}
			if strings.Contains(out.String(), "secret") {
				t.Errorf("the callback URL's path or query was logged:\n%s", out)
			}
		})
	}
}
