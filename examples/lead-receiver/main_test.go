package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/server/webhook"
)

// Deliveries are signed with the service's own signer, so the receiver and
// the service cannot drift apart.
const (
	secret      = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw/0pQPvPwbKs="
	newSecret   = "whsec_bmV3LXNlY3JldC1hZnRlci1hLXJvdGF0aW9uLTEyMzQ="
	otherSecret = "whsec_c2VjcmV0LW9mLWFub3RoZXItZW5kcG9pbnQtMTIzNDU="
)

const (
	driverEvent = `{"id":"evt_0f8fad5bd9cb469fa16570867728950e","type":"driver.application.received",` +
		`"createdAt":"2026-11-23T10:15:30.123456Z","data":{"id":301,"first_name":"Dana","last_name":"Lead","email":"dana.lead@example.com"}}`
	testEvent = `{"id":"evt_7c9e6679742540de944be07fc1f90ae7","type":"webhook.test",` +
		`"createdAt":"2026-11-23T10:16:00.000001Z","data":{"webhookId":"we_1b4e28ba2fa1411d8a2b5b6c0f3d9e01"}}`
	importEvent = `{"id":"evt_a3bb189e8bf94c8f9e0f1c7d5b3a2e11","type":"job_import.completed",` +
		`"createdAt":"2026-11-23T10:17:00.000000Z","data":{"id":"5b2c4a1e-0000-4000-8000-000000000001","status":"complete","results":{"added":2}}}`
)

// delivery is a request as the service sends it: body, webhook-id and a
// signature with each secret given (two during a rotation, new first).
func delivery(t *testing.T, id, body string, at time.Time, secrets ...string) *http.Request {
	t.Helper()
	var sigs []string
	for _, s := range secrets {
		sig, err := webhook.Sign(s, id, at.Unix(), []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		sigs = append(sigs, sig)
	}
	r := httptest.NewRequest(http.MethodPost, "/hooks/leads", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("webhook-id", id)
	r.Header.Set("webhook-timestamp", strconv.FormatInt(at.Unix(), 10))
	r.Header.Set("webhook-signature", strings.Join(sigs, " "))
	return r
}

func eventID(body string) string {
	id, _, _ := strings.Cut(strings.TrimPrefix(body, `{"id":"`), `"`)
	return id
}

func TestReceiverVerifies(t *testing.T) {
	now := time.Now()
	id := eventID(driverEvent)
	tests := []struct {
		name       string
		configured string // the secret the receiver was started with
		req        *http.Request
		want       int
	}{
		{"good signature", secret, delivery(t, id, driverEvent, now, secret), 204},
		{"another endpoint's secret", secret, delivery(t, id, driverEvent, now, otherSecret), 401},
		{"tampered body", secret, func() *http.Request {
			r := delivery(t, id, driverEvent, now, secret)
			tampered := delivery(t, id, strings.Replace(driverEvent, "301", "302", 1), now, secret)
			tampered.Header = r.Header
			return tampered
		}(), 401},
		{"webhook-id changed", secret, func() *http.Request {
			r := delivery(t, id, driverEvent, now, secret)
			r.Header.Set("webhook-id", "evt_00000000000000000000000000000000")
			return r
		}(), 401},
		{"no signature", secret, func() *http.Request {
			r := delivery(t, id, driverEvent, now, secret)
			r.Header.Del("webhook-signature")
			return r
		}(), 401},
		{"signed 6 minutes ago", secret, delivery(t, id, driverEvent, now.Add(-6*time.Minute), secret), 401},
		{"rotation, receiver still on the old secret", secret, delivery(t, id, driverEvent, now, newSecret, secret), 204},
		{"rotation, receiver already on the new secret", newSecret, delivery(t, id, driverEvent, now, newSecret, secret), 204},
		{"rotation, neither secret the receiver's", otherSecret, delivery(t, id, driverEvent, now, newSecret, secret), 401},
		{"GET", secret, httptest.NewRequest(http.MethodGet, "/hooks/leads", nil), 405},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			rc, err := newReceiver(tt.configured, &out)
			if err != nil {
				t.Fatal(err)
			}
			w := httptest.NewRecorder()
			rc.ServeHTTP(w, tt.req)
			if w.Code != tt.want {
				t.Errorf("status %d, want %d (%s)", w.Code, tt.want, strings.TrimSpace(w.Body.String()))
			}
			if printed := out.Len() > 0; printed != (tt.want == 204) {
				t.Errorf("printed %q for status %d", out.String(), w.Code)
			}
		})
	}
}

// TestReceiverPrintsEachEventOnce: one line per event, whatever its type;
// a repeat of an event (same webhook-id) is acknowledged and not printed.
func TestReceiverPrintsEachEventOnce(t *testing.T) {
	var out bytes.Buffer
	rc, err := newReceiver(secret, &out)
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{driverEvent, testEvent, driverEvent, importEvent, testEvent} {
		w := httptest.NewRecorder()
		rc.ServeHTTP(w, delivery(t, eventID(body), body, time.Now(), secret))
		if w.Code != http.StatusNoContent {
			t.Errorf("delivery of %s: %d, want 204", eventID(body), w.Code)
		}
	}
	want := "evt_0f8fad5bd9cb469fa16570867728950e driver.application.received: driver 301, Dana Lead\n" +
		"evt_7c9e6679742540de944be07fc1f90ae7 webhook.test: endpoint we_1b4e28ba2fa1411d8a2b5b6c0f3d9e01\n" +
		"evt_a3bb189e8bf94c8f9e0f1c7d5b3a2e11 job_import.completed: import 5b2c4a1e-0000-4000-8000-000000000001 complete\n"
	if out.String() != want {
		t.Errorf("printed\n%s\nwant\n%s", out.String(), want)
	}
}

// TestReceiverConcurrentRepeats: deliveries of one event arriving together
// (a retry racing a redelivery) print it once.
func TestReceiverConcurrentRepeats(t *testing.T) {
	var out bytes.Buffer
	rc, err := newReceiver(secret, &out)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	var wg sync.WaitGroup
	codes := make(chan int, 20)
	for range 20 {
		wg.Go(func() {
			r := delivery(t, eventID(driverEvent), driverEvent, time.Now(), secret)
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/hooks/leads", strings.NewReader(driverEvent))
			req.Header = r.Header
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		})
	}
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != http.StatusNoContent {
			t.Errorf("a repeat answered %d, want 204", c)
		}
	}
	if n := strings.Count(out.String(), "\n"); n != 1 {
		t.Errorf("printed %d lines for one event:\n%s", n, out.String())
	}
}

func TestReceiverRefusesMalformedSecret(t *testing.T) {
	for _, s := range []string{"", "whsec_", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_not base64!"} {
		if _, err := newReceiver(s, &bytes.Buffer{}); err == nil {
			t.Errorf("newReceiver(%q) accepted it", s)
		}
	}
}

func TestReceiverRefusesSignedNonEvent(t *testing.T) {
	var out bytes.Buffer
	rc, err := newReceiver(secret, &out)
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	rc.ServeHTTP(w, delivery(t, "evt_1", `{"data":{}}`, time.Now(), secret))
	if w.Code != http.StatusBadRequest || out.Len() != 0 {
		t.Errorf("a signed body without an event id: %d, printed %q", w.Code, out.String())
	}
}
