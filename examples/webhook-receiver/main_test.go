package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/server/webhook"
)

// The receiver is checked against the service's own signer, so the two
// cannot drift apart.
const (
	secret      = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw/0pQPvPwbKs="
	otherSecret = "whsec_c2VjcmV0LW9mLWFub3RoZXItYWNjb3VudC0xMjM0NTY="
)

var now = time.Unix(1795000000, 0)

// signed returns the headers the service sends with body, signed with
// secrets (one signature each, space-separated) at time at.
func signed(t *testing.T, body string, at time.Time, secrets ...string) http.Header {
	t.Helper()
	h := http.Header{}
	var sigs []string
	for _, s := range secrets {
		sig, err := webhook.Sign(s, "msg_1", at.Unix(), []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		sigs = append(sigs, sig)
	}
	h.Set("webhook-id", "msg_1")
	h.Set("webhook-timestamp", strconv.FormatInt(at.Unix(), 10))
	h.Set("webhook-signature", strings.Join(sigs, " "))
	return h
}

func TestVerify(t *testing.T) {
	const body = `{"data":{"id":"7","status":"complete"}}`
	tests := []struct {
		name   string
		header http.Header
		body   string
		ok     bool
	}{
		{"good signature", signed(t, body, now, secret), body, true},
		{"wrong secret", signed(t, body, now, otherSecret), body, false},
		{"tampered body", signed(t, body, now, secret), strings.Replace(body, "7", "8", 1), false},
		{"timestamp 6 minutes old", signed(t, body, now.Add(-6*time.Minute), secret), body, false},
		{"timestamp 6 minutes ahead", signed(t, body, now.Add(6*time.Minute), secret), body, false},
		{"timestamp 4 minutes old", signed(t, body, now.Add(-4*time.Minute), secret), body, true},
		{"several signatures, the good one last", signed(t, body, now, otherSecret, secret), body, true},
		{"several signatures, none good", signed(t, body, now, otherSecret, otherSecret), body, false},
		{"good signature under another version", func() http.Header {
			h := signed(t, body, now, secret)
			h.Set("webhook-signature", "v2,"+strings.TrimPrefix(h.Get("webhook-signature"), "v1,"))
			return h
		}(), body, false},
		{"id changed", func() http.Header {
			h := signed(t, body, now, secret)
			h.Set("webhook-id", "msg_2")
			return h
		}(), body, false},
		{"no signature", func() http.Header {
			h := signed(t, body, now, secret)
			h.Del("webhook-signature")
			return h
		}(), body, false},
	}
	v, err := newVerifier(secret)
	if err != nil {
		t.Fatal(err)
	}
	v.now = func() time.Time { return now }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := v.verify(tt.header, []byte(tt.body))
			if (err == nil) != tt.ok {
				t.Errorf("verify: %v, want ok %v", err, tt.ok)
			}
		})
	}
}

func TestNewVerifierRefusesMalformedSecret(t *testing.T) {
	for _, s := range []string{"", "whsec_", "whsec_not base64!"} {
		if _, err := newVerifier(s); err == nil {
			t.Errorf("newVerifier(%q) accepted it", s)
		}
	}
}

// TestReceiver: a good callback gets 204 and one printed line; a bad one
// gets 401 and prints nothing.
func TestReceiver(t *testing.T) {
	body := `{"data":{"id":"42","requestedAt":"2026-11-22T10:15:30.123456Z","completedAt":"2026-11-22T10:15:31.000001Z",` +
		`"results":{"added":1,"updated":0,"unchanged":2,"deleted":0,"failed":1,"processed":4,"errors":[]},"status":"complete"},` +
		`"links":{"self":"http://localhost:8080/api/v2.0/job-imports/42"}}`
	v, err := newVerifier(secret)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	srv := httptest.NewServer(&receiver{verifier: v, out: &out})
	defer srv.Close()
	post := func(h http.Header, body string) int {
		t.Helper()
		req, _ := http.NewRequest("POST", srv.URL+"/hooks/jobs", strings.NewReader(body))
		req.Header = h
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(signed(t, body, time.Now(), otherSecret), body); code != 401 || out.Len() != 0 {
		t.Errorf("wrong secret: %d, printed %q", code, out.String())
	}
	if code := post(signed(t, body, time.Now(), secret), body); code != 204 {
		t.Errorf("good callback: %d", code)
	}
	want := "import 42 complete: added 1, updated 0, unchanged 2, deleted 0, failed 1 (webhook-id msg_1)\n"
	if out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
	huge := strings.Repeat(" ", maxBody+1)
	if code := post(signed(t, huge, time.Now(), secret), huge); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over %d bytes: %d, want 413", maxBody, code)
	}
	if code := post(http.Header{}, huge); code != http.StatusUnauthorized {
		t.Errorf("no signature headers, large body: %d, want 401 before reading it", code)
	}
}
