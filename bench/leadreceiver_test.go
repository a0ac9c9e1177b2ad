package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/server/webhook"
)

// TestLeadReceiver: the bench's receiver verifies with each endpoint's
// secret, counts repeats, and notices an event under a second webhook-id.
func TestLeadReceiver(t *testing.T) {
	secrets := map[string]string{"/hooks/1": webhook.NewSecret(), "/hooks/2": webhook.NewSecret()}
	rc := newLeadReceiver()
	for path, s := range secrets {
		rc.expect(path, s)
	}
	send := func(path, secret, webhookID, eventID string) int {
		t.Helper()
		body := `{"id":"` + eventID + `","type":"driver.application.received","data":{}}`
		r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		if err := webhook.Headers(r.Header, secret, webhookID, time.Now(), []byte(body)); err != nil {
			t.Fatal(err)
		}
		w := httptest.NewRecorder()
		rc.ServeHTTP(w, r)
		return w.Code
	}
	steps := []struct {
		path, secret, webhookID, eventID string
		want                             int
	}{
		{"/hooks/1", secrets["/hooks/1"], "evt_a", "evt_a", 204},
		{"/hooks/2", secrets["/hooks/2"], "evt_a", "evt_a", 204},
		{"/hooks/1", secrets["/hooks/1"], "evt_a", "evt_a", 204},     // a repeat
		{"/hooks/1", secrets["/hooks/2"], "evt_b", "evt_b", 401},     // the other endpoint's secret
		{"/hooks/3", secrets["/hooks/1"], "evt_b", "evt_b", 401},     // no such endpoint
		{"/hooks/2", secrets["/hooks/2"], "evt_other", "evt_a", 204}, // evt_a under a second webhook-id
	}
	for i, s := range steps {
		if code := send(s.path, s.secret, s.webhookID, s.eventID); code != s.want {
			t.Errorf("step %d: %d, want %d", i, code, s.want)
		}
	}
	c := rc.snapshot()
	if c.distinct != 3 || c.total != 4 || c.repeated() != 1 || c.refused != 2 || c.conflicts != 1 {
		t.Errorf("counts: %s, %d repeated", c, c.repeated())
	}
}
