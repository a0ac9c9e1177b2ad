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

// TestCrashRowsJudge: the kill -9 row passes only when the kill came
// before the last delivery, every pair arrived and no event changed
// webhook-id; repeats are counted from the crash round alone.
func TestCrashRowsJudge(t *testing.T) {
	const n = 10 // 30 deliveries
	before := leadCounts{distinct: 300, total: 302}
	killed := time.Now()
	restarted := killed.Add(time.Second)
	after := leadCounts{distinct: 330, total: 337, last: restarted.Add(2 * time.Second)}
	tests := []struct {
		name           string
		atKill, after  leadCounts
		pass           bool
		repeatsInTitle string
	}{
		{"killed after 10 of 30", leadCounts{distinct: 310}, after, true, ": 5"},
		{"every delivery before the kill", leadCounts{distinct: 330}, after, false, ": 5"},
		{"one pair missing", leadCounts{distinct: 310}, leadCounts{distinct: 329, total: 336}, false, ": 5"},
		{"an event under two webhook-ids", leadCounts{distinct: 310}, leadCounts{distinct: 330, total: 332, conflicts: 1}, false, ": 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows := crashRows(n, before, tt.atKill, tt.after, killed, restarted)
			if rows[0].pass != tt.pass {
				t.Errorf("judged %v, want %v: %s", rows[0].pass, tt.pass, rows[0].note)
			}
			if !strings.HasSuffix(rows[1].name, tt.repeatsInTitle) {
				t.Errorf("repeats row %q, want it to end %q", rows[1].name, tt.repeatsInTitle)
			}
		})
	}
	if got := crashRows(n, before, leadCounts{distinct: 310}, after, killed, restarted)[2].median; got != 2*time.Second {
		t.Errorf("recovery %s, want 2s", got)
	}
}
