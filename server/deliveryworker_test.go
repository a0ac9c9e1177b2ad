package server

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/truckjobs/jobboard/domain"
	"github.com/truckjobs/jobboard/gateway/render"
	"github.com/truckjobs/jobboard/internal/metrics"
	"github.com/truckjobs/jobboard/internal/testfix"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/store"
)

// verifies reports whether the official Standard Webhooks library accepts
// the delivery under secret.
func verifies(t *testing.T, secret string, body []byte, h http.Header) bool {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	return wh.Verify(body, h) == nil
}

// requests waits until r has n requests and returns them with their bodies.
func (r *receiver) requests(t *testing.T, n int) ([]*http.Request, [][]byte) {
	t.Helper()
	testfix.Eventually(20*time.Second, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return len(r.got) >= n
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.got) < n {
		t.Fatalf("receiver got %d requests, want %d", len(r.got), n)
	}
	return append([]*http.Request(nil), r.got...), append([][]byte(nil), r.bodies...)
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

// TestDeliverySignedWithAuthorization: an event reaches each subscribed
// endpoint of its account, and no other, as the event object in JSON
// (the feed's bytes), with webhook-id the event id, a signature the
// official library verifies (under both secrets during a rotation) and
// the endpoint's Authorization.
func TestDeliverySignedWithAuthorization(t *testing.T) {
	f := newDeliveryFixture(t, nil)
	plain, basic, bearer, other, unsubscribed := newReceiver(t, 200), newReceiver(t, 200), newReceiver(t, 200), newReceiver(t, 200), newReceiver(t, 200)
	ePlain := f.addEndpoint(t, f.accountA, plain.srv.URL+"/hook", endpointOpts{})
	eBasic := f.addEndpoint(t, f.accountA, basic.srv.URL, endpointOpts{authType: "basic", username: "lead-bot", password: "pa:ss"})
	eBearer := f.addEndpoint(t, f.accountA, bearer.srv.URL, endpointOpts{authType: "bearer", password: "tok-123"})
	f.addEndpoint(t, f.accountB, other.srv.URL, endpointOpts{})
	f.addEndpoint(t, f.accountA, unsubscribed.srv.URL, endpointOpts{events: []string{string(domain.EventImportCompleted)}})
	oldSecret := eBearer.Secret
	f.rotate(t, &eBearer)
	events := f.emit(t, f.accountA, 1)
	want, err := render.JSON(&restv2.Event{Id: events[0].ID, Type: string(events[0].Type), CreatedAt: call.Time(events[0].CreatedAt), Data: events[0].Data})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name    string
		r       *receiver
		secrets []string
		auth    string
	}{
		{"no auth", plain, []string{ePlain.Secret}, ""},
		{"basic", basic, []string{eBasic.Secret}, "Basic " + base64.StdEncoding.EncodeToString([]byte("lead-bot:pa:ss"))},
		{"bearer, rotated", bearer, []string{eBearer.Secret, oldSecret}, "Bearer tok-123"},
	} {
		reqs, bodies := tt.r.requests(t, 1)
		h := reqs[0].Header
		if !bytes.Equal(bodies[0], want) || h.Get("Content-Type") != "application/json" || h.Get("webhook-id") != events[0].ID {
			t.Errorf("%s: body %s, Content-Type %q, webhook-id %q; want %s, application/json, %s",
				tt.name, bodies[0], h.Get("Content-Type"), h.Get("webhook-id"), want, events[0].ID)
		}
		if n := len(strings.Fields(h.Get("webhook-signature"))); n != len(tt.secrets) {
			t.Errorf("%s: %d signatures, want %d", tt.name, n, len(tt.secrets))
		}
		for _, s := range tt.secrets {
			if !verifies(t, s, bodies[0], h) {
				t.Errorf("%s: the signature does not verify under one of its secrets", tt.name)
			}
		}
		if got := h.Get("Authorization"); got != tt.auth {
			t.Errorf("%s: Authorization %q, want %q", tt.name, got, tt.auth)
		}
	}
	f.settled(t)
	if other.count()+unsubscribed.count() != 0 {
		t.Errorf("another account's endpoint got %d, an unsubscribed one %d", other.count(), unsubscribed.count())
	}
	var body map[string]any
	if err := json.Unmarshal(want, &body); err != nil || body["type"] != string(domain.EventApplicationReceived) {
		t.Errorf("delivery body %s", want)
	}
}

// TestDeliveryRetries: a failed attempt (a 500, a redirect, which is not
// followed) is retried with the same webhook-id until it succeeds; every
// attempt is in the log, newest first, and the success ends the endpoint's
// run of failures.
func TestDeliveryRetries(t *testing.T) {
	f := newDeliveryFixture(t, nil)
	r := newReceiver(t, http.StatusFound, http.StatusInternalServerError, http.StatusNoContent)
	e := f.addEndpoint(t, f.accountA, r.srv.URL, endpointOpts{})
	event := f.emit(t, f.accountA, 1)[0]
	reqs, _ := r.requests(t, 3)
	for i, req := range reqs {
		if req.Header.Get("webhook-id") != event.ID {
			t.Errorf("attempt %d: webhook-id %q, want %q", i+1, req.Header.Get("webhook-id"), event.ID)
		}
	}
	got := f.attempts(t, f.accountA, e, 3)
	for i, want := range []int{http.StatusNoContent, http.StatusInternalServerError, http.StatusFound} {
		a := got[i]
		if a.Attempt != 3-i || a.StatusCode == nil || *a.StatusCode != want || a.Error != nil ||
			a.EventID != mustUUID(t, event.ID) || a.EventType != event.Type {
			t.Errorf("log entry %d: %+v, want attempt %d with status %d", i, a, 3-i, want)
		}
	}
	if len(got) > 1 && got[0].AttemptedAt.Before(got[1].AttemptedAt) {
		t.Errorf("attempts not newest first: %v then %v", got[0].AttemptedAt, got[1].AttemptedAt)
	}
	if counts := f.settled(t); counts["completed"] != 1 {
		t.Errorf("delivery jobs %v, want one completed", counts)
	}
	r.mu.Lock()
	followed := r.elsewhere
	r.mu.Unlock()
	if followed {
		t.Error("the redirect was followed")
	}
	if s := f.state(t, e); !s.Enabled || s.FailingSince.Valid {
		t.Errorf("endpoint after a success: %+v, want enabled and not failing", s)
	}
}

func mustUUID(t *testing.T, eventID string) string {
	t.Helper()
	u, ok := store.ParseEventID(eventID)
	if !ok {
		t.Fatalf("event id %q", eventID)
	}
	return u
}

// TestDeliveryGoneDisables: a 410 disables the endpoint (reason gone) and
// ends the delivery; the endpoint's other pending deliveries are dropped.
func TestDeliveryGoneDisables(t *testing.T) {
	f := newDeliveryFixture(t, nil)
	r := newReceiver(t, http.StatusGone)
	e := f.addEndpoint(t, f.accountA, r.srv.URL, endpointOpts{})
	f.emit(t, f.accountA, 1)
	f.attempts(t, f.accountA, e, 1)
	counts := f.settled(t)
	if s := f.state(t, e); s.Enabled || s.Reason.String != "gone" {
		t.Errorf("endpoint after 410: %+v, want disabled as gone", s)
	}
	if r.count() != 1 || counts["cancelled"] != 1 {
		t.Errorf("%d requests, jobs %v; want 1 and one cancelled", r.count(), counts)
	}
	f.emit(t, f.accountA, 1) // no longer a target
	f.settled(t)
	if r.count() != 1 {
		t.Errorf("a disabled endpoint got %d requests", r.count())
	}
	if got := counterValue(t, f.metrics, "jobboard_webhook_endpoints_disabled_total", "gone"); got != 1 {
		t.Errorf("endpoints disabled as gone: %v, want 1", got)
	}
}

// TestDeliveryFailingDisables: once every attempt to an endpoint has
// failed for JOBBOARD_WEBHOOK_DISABLE_AFTER, the next failure disables it
// (reason failing) and nothing more is tried; a shorter run of failures
// only gives up, logging it once.
func TestDeliveryFailingDisables(t *testing.T) {
	t.Run("failing long enough", func(t *testing.T) {
		out := captureLog(t)
		f := newDeliveryFixture(t, func(c *Config) {
			c.CallbackRetrySchedule = []time.Duration{150 * time.Millisecond, 150 * time.Millisecond}
			c.WebhookDisableAfter = 100 * time.Millisecond
		})
		r := newReceiver(t, http.StatusServiceUnavailable)
		e := f.addEndpoint(t, f.accountA, r.srv.URL, endpointOpts{})
		f.emit(t, f.accountA, 1)
		f.attempts(t, f.accountA, e, 2)
		f.settled(t)
		if s := f.state(t, e); s.Enabled || s.Reason.String != "failing" {
			t.Errorf("endpoint: %+v, want disabled as failing", s)
		}
		if r.count() != 2 {
			t.Errorf("%d requests, want 2 (the second disables)", r.count())
		}
		if n := strings.Count(out.String(), `"msg":"webhook endpoint disabled"`); n != 1 || !strings.Contains(out.String(), e.PublicID) {
			t.Errorf("%d lines say the endpoint was disabled, want 1 naming %s:\n%s", n, e.PublicID, out)
		}
	})
	t.Run("giving up first", func(t *testing.T) {
		out := captureLog(t)
		f := newDeliveryFixture(t, nil)
		r := newReceiver(t, http.StatusInternalServerError)
		e := f.addEndpoint(t, f.accountA, r.srv.URL+"/secret-path?token=secret", endpointOpts{})
		f.emit(t, f.accountA, 1)
		f.attempts(t, f.accountA, e, 3)
		// The worker ends the job after its schedule's last attempt,
		// whatever the job's MaxAttempts (retryPolicy.lastAttempt).
		if counts := f.settled(t); counts["cancelled"] != 1 {
			t.Errorf("jobs %v, want one cancelled", counts)
		}
		if s := f.state(t, e); !s.Enabled || !s.FailingSince.Valid {
			t.Errorf("endpoint: %+v, want enabled and failing", s)
		}
		testfix.Eventually(5*time.Second, func() bool { return strings.Contains(out.String(), "webhook not delivered") })
		if n := strings.Count(out.String(), "webhook not delivered"); n != 1 || strings.Contains(out.String(), "secret") {
			t.Errorf("%d lines say the delivery was given up, want 1 without the URL's path:\n%s", n, out)
		}
		if got := counterValue(t, f.metrics, "jobboard_webhook_deliveries_total", "gave_up"); got != 1 {
			t.Errorf("deliveries given up: %v, want 1", got)
		}
	})
}

// TestDeliveryDropped: pending retries to an endpoint disabled, deleted,
// or disabled and enabled again are dropped unsent, as is a delivery of an
// event cleaned up before it was sent.
func TestDeliveryDropped(t *testing.T) {
	for _, tt := range []struct {
		name   string
		change func(*deliveryFixture, *testing.T, testEndpoint)
	}{
		{"disabled", func(f *deliveryFixture, t *testing.T, e testEndpoint) { f.disable(t, e) }},
		{"deleted", func(f *deliveryFixture, t *testing.T, e testEndpoint) {
			f.exec(t, `DELETE FROM webhook_endpoints WHERE id = $1`, e.ID)
		}},
		{"enabled again", func(f *deliveryFixture, t *testing.T, e testEndpoint) { f.disable(t, e); f.enable(t, e) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newDeliveryFixture(t, func(c *Config) {
				c.CallbackRetrySchedule = []time.Duration{500 * time.Millisecond, 500 * time.Millisecond}
			})
			r := newReceiver(t, http.StatusInternalServerError)
			e := f.addEndpoint(t, f.accountA, r.srv.URL, endpointOpts{})
			f.emit(t, f.accountA, 1)
			r.requests(t, 1)
			tt.change(f, t, e)
			counts := f.settled(t)
			if r.count() != 1 || counts["cancelled"] != 1 {
				t.Errorf("%d requests, jobs %v; want 1 and the retry cancelled", r.count(), counts)
			}
		})
	}
	t.Run("event cleaned up", func(t *testing.T) {
		f := newIdleDeliveryFixture(t, nil)
		r := newReceiver(t, http.StatusOK)
		f.addEndpoint(t, f.accountA, r.srv.URL, endpointOpts{})
		event := f.emit(t, f.accountA, 1)[0]
		f.exec(t, `DELETE FROM events WHERE id = $1`, mustUUID(t, event.ID))
		f.start(t)
		counts := f.settled(t)
		if r.count() != 0 || counts["cancelled"] != 1 {
			t.Errorf("%d requests, jobs %v; want none and the delivery cancelled", r.count(), counts)
		}
		if got := counterValue(t, f.metrics, "jobboard_webhook_deliveries_total", "dropped"); got != 1 {
			t.Errorf("deliveries dropped: %v, want 1", got)
		}
	})
}

// TestDeliveryPrivateAddressRefused: without ALLOW_PRIVATE, a delivery to
// a loopback address is refused at connection time and logged as a failed
// attempt with no status, whose error names the rule and not the address
// the host resolved to (docs/api.md, Deliveries).
func TestDeliveryPrivateAddressRefused(t *testing.T) {
	f := newDeliveryFixture(t, func(c *Config) { c.AllowPrivateCallbacks = false })
	r := newReceiver(t, http.StatusOK)
	e := f.addEndpoint(t, f.accountA, r.srv.URL, endpointOpts{})
	f.emit(t, f.accountA, 1)
	got := f.attempts(t, f.accountA, e, 3)
	f.settled(t)
	for _, a := range got {
		const want = "address refused: the host resolved to an address that is not public"
		if a.StatusCode != nil || a.Error == nil || *a.Error != want {
			t.Errorf("attempt %d: status %v, error %v; want no status and %q", a.Attempt, a.StatusCode, a.Error, want)
		}
		if a.Error != nil && ipInText.MatchString(*a.Error) {
			t.Errorf("attempt %d: error %q names an address", a.Attempt, *a.Error)
		}
	}
	if r.count() != 0 {
		t.Errorf("the private receiver got %d requests", r.count())
	}
}

// ipInText finds an IPv4 or IPv6 address in a message.
var ipInText = regexp.MustCompile(`\d+\.\d+\.\d+\.\d+|::1|\[[0-9a-fA-F:]+\]`)

// counterValue reads one labelled sample of a counter from the registry.
func counterValue(t *testing.T, m *metrics.Metrics, name, label string) float64 {
	t.Helper()
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, fam := range families {
		if fam.GetName() != name {
			continue
		}
		for _, s := range fam.GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetValue() == label {
					return s.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("no %s{%s}", name, label)
	return 0
}
