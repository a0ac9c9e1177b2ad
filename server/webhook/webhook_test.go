package webhook

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// The Standard Webhooks known-answer vector.
func TestSignKnownAnswer(t *testing.T) {
	got, err := Sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, []byte(`{"test": 2432232314}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// TestNewSecret: a new secret has the Standard Webhooks form, signs, and
// differs from the last one.
func TestNewSecret(t *testing.T) {
	form := regexp.MustCompile(`^whsec_[A-Za-z0-9+/]{43}=$`)
	a, b := NewSecret(), NewSecret()
	if !form.MatchString(a) || a == b {
		t.Fatalf("secrets %q and %q", a, b)
	}
	if _, err := Sign(a, "msg_1", 1, []byte("{}")); err != nil {
		t.Errorf("Sign with a new secret: %v", err)
	}
}

func TestCheckURL(t *testing.T) {
	tests := []struct {
		url     string
		private bool
		want    string // part of the error; "" for accepted
	}{
		{"https://no-such-host.invalid/jobs", false, "must resolve to public addresses only"},
		{"http://93.184.215.14:8443/cb", false, ""},
		{"/relative", false, "absolute"},
		{"ftp://example.com/x", false, `scheme "ftp"`},
		{"https://user:pw@example.com/", false, "user name"},
		{"http://127.0.0.1:9000/cb", false, "must resolve to public addresses only"},
		{"http://[::1]/cb", false, "must resolve to public addresses only"},
		{"http://10.0.0.1/cb", false, "must resolve to public addresses only"},
		{"http://192.168.1.10/cb", false, "must resolve to public addresses only"},
		{"http://169.254.169.254/latest/meta-data", false, "must resolve to public addresses only"},
		{"http://localhost:8080/cb", false, "must resolve to public addresses only"},
		{"http://[::ffff:127.0.0.1]/cb", false, "must resolve to public addresses only"},
		{"http://0.0.0.0:8080/cb", false, "must resolve to public addresses only"},
		{"http://[fd00::1]/cb", false, "must resolve to public addresses only"},
		{"http://100.64.0.1/cb", false, "must resolve to public addresses only"},
		{"http://127.0.0.1:9000/cb", true, ""},
	}
	for _, tt := range tests {
		err := CheckURL(context.Background(), tt.url, tt.private)
		// The message never says where a name led (docs/api.md, Job imports).
		if err != nil && strings.Contains(tt.url, "localhost") && (strings.Contains(err.Error(), "127.0.0.1") || strings.Contains(err.Error(), "::1")) {
			t.Errorf("%s: the message reveals the address: %v", tt.url, err)
		}
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tt.url, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: got %v, want an error containing %q", tt.url, err, tt.want)
		}
	}
}

// TestClientRefusesLoopbackAtDial: the guard holds on the resolved address
// of every connection, whatever passed at creation.
func TestClientRefusesLoopbackAtDial(t *testing.T) {
	hit := false
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hit = true }))
	defer srv.Close()
	_, err := NewClient(time.Second, false).Post(srv.URL, "application/json", nil)
	if err == nil || !strings.Contains(err.Error(), "not a permitted destination") || hit {
		t.Errorf("guarded client reached %s: %v", srv.URL, err)
	}
	resp, err := NewClient(time.Second, true).Post(srv.URL, "application/json", nil)
	if err != nil || !hit {
		t.Fatalf("unguarded client: %v", err)
	}
	resp.Body.Close()
}

func TestClientDoesNotFollowRedirects(t *testing.T) {
	followed := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere" {
			followed = true
			return
		}
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	}))
	defer srv.Close()
	resp, err := NewClient(time.Second, true).Post(srv.URL, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || followed {
		t.Errorf("status %d, followed %v", resp.StatusCode, followed)
	}
}

func TestRedact(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://hooks.example.com/jobs?token=s3cret#frag", "https://hooks.example.com/..."},
		{"http://127.0.0.1:9000/cb", "http://127.0.0.1:9000/..."},
		{"https://user:pw@example.com/x?", "https://example.com/..."},
		{"https://hooks.example.com/services/T0/B0/s3cret", "https://hooks.example.com/..."},
	}
	for _, tt := range tests {
		if got := Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	err := RedactError(&url.Error{Op: "Post", URL: "https://example.com/s3cret/cb?token=s3cret", Err: errors.New("timeout")})
	if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("RedactError kept the query: %v", err)
	}
}

// TestSignedHeadersVerify: a request signed by one or two secrets verifies
// with the official Standard Webhooks library under each of them, and not
// under a secret it was not signed with.
func TestSignedHeadersVerify(t *testing.T) {
	current, previous, other := NewSecret(), NewSecret(), NewSecret()
	body := []byte(`{"id":"evt_1","type":"webhook.test"}`)
	for _, secrets := range [][]string{{current}, {current, previous}} {
		h := http.Header{}
		if err := SignedHeaders(h, "evt_1", time.Now(), body, secrets...); err != nil {
			t.Fatal(err)
		}
		if n := len(strings.Fields(h.Get("webhook-signature"))); n != len(secrets) {
			t.Errorf("%d secrets: %d signatures in %q", len(secrets), n, h.Get("webhook-signature"))
		}
		for _, s := range secrets {
			if err := verify(t, s, body, h); err != nil {
				t.Errorf("%d secrets: not verified under one of them: %v", len(secrets), err)
			}
		}
		if verify(t, other, body, h) == nil {
			t.Errorf("%d secrets: verified under a secret that did not sign", len(secrets))
		}
	}
}

func verify(t *testing.T, secret string, body []byte, h http.Header) error {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	return wh.Verify(body, h)
}

// TestDescribe: each kind of failed send gets its fixed description, and
// a refused address is not named.
func TestDescribe(t *testing.T) {
	refused := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	closedURL := refused.URL
	refused.Close()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond)
	}))
	defer slow.Close()
	selfSigned := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer selfSigned.Close()
	tests := []struct {
		name, url string
		client    *http.Client
		want      string
	}{
		{"private", "http://10.1.2.3:9/", NewClient(time.Second, false), "address refused: the host resolved to an address that is not public"},
		{"timeout", slow.URL, NewClient(100*time.Millisecond, true), "no answer within 100ms"},
		{"no such host", "http://no-such-host.invalid/", NewClient(time.Second, true), "the host name does not resolve"},
		{"refused", closedURL, NewClient(time.Second, true), "connection refused"},
		{"tls", selfSigned.URL, NewClient(time.Second, true), "TLS handshake failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, tt.url, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := tt.client.Do(req)
			if err == nil {
				resp.Body.Close()
				t.Fatal("the send succeeded")
			}
			if got := Describe(err, tt.client.Timeout); got != tt.want {
				t.Errorf("Describe(%v) = %q, want %q", err, got, tt.want)
			}
		})
	}
}

// TestClientKeepsConnectionsForEveryWorker: twenty deliveries at once to
// one receiver, twice, dial twenty connections, not forty: the client
// keeps an idle connection for each worker.
func TestClientKeepsConnectionsForEveryWorker(t *testing.T) {
	var dialled atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		time.Sleep(50 * time.Millisecond)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dialled.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	client := NewClient(5*time.Second, true)
	const workers = 20
	for range 2 {
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := client.Post(srv.URL, "application/json", nil)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}()
		}
		wg.Wait()
	}
	if got := dialled.Load(); got != workers {
		t.Errorf("%d connections dialled for two rounds of %d deliveries, want %d", got, workers, workers)
	}
}
