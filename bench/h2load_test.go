package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestH2loadRun runs h2load against a server that refuses one path of
// three and checks that the run's statuses, latencies and body bytes are
// those the server answered.
func TestH2loadRun(t *testing.T) {
	var posted int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer k" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			posted = len(b)
		}
		if r.URL.Path == "/busy" {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		time.Sleep(time.Millisecond)
		_, _ = io.WriteString(w, "0123456789")
	}))
	defer srv.Close()
	res, err := h2loadRun{
		name: "test", dir: t.TempDir(), http1: true, conns: 3,
		uris:     []string{srv.URL + "/a", srv.URL + "/b", srv.URL + "/busy"},
		warmup:   time.Second,
		duration: time.Second,
		headers:  []string{"Authorization: Bearer k"},
		body:     []byte(`{"x":1}`),
	}.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ok, busy := res.count(200), res.count(503)
	if ok == 0 || busy == 0 || res.requests() != ok+busy || res.failed != 0 {
		t.Fatalf("200: %d, 503: %d, all: %d, failed %d; want both, nothing else", ok, busy, res.requests(), res.failed)
	}
	// Each connection cycles a, b, busy: twice as many served as refused.
	if r := float64(ok) / float64(busy); r < 1.8 || r > 2.2 {
		t.Errorf("served/refused = %.2f, want about 2", r)
	}
	if got := res.of(200); got[len(got)/2] < time.Millisecond {
		t.Errorf("median latency of served requests %v, below the handler's 1 ms sleep", got[len(got)/2])
	}
	if posted != len(`{"x":1}`) {
		t.Errorf("server read a body of %d bytes, want 7", posted)
	}
	// Requests are logged only for the measured second, not the warm-up:
	// their start times span at most that second.
	if span := res.startSpan; span <= 0 || span > 1100*time.Millisecond {
		t.Errorf("logged requests started over %v, want within the 1 s duration", span)
	}
	if res.elapsed != time.Second {
		t.Errorf("elapsed %v, want the 1 s duration", res.elapsed)
	}
	if res.started < res.done || res.done != res.requests()+res.failed {
		t.Errorf("started %d, done %d, answered %d, failed %d: want done = answered + failed <= started",
			res.started, res.done, res.requests(), res.failed)
	}
	if int64(len(res.inFlight)) != res.started-res.done || len(res.ends) != int(res.done) {
		t.Errorf("%d in flight, %d ends; want started - done = %d in flight and an end per done request (%d)",
			len(res.inFlight), len(res.ends), res.started-res.done, res.done)
	}
	if res.cpu <= 0 || res.cpu > 1 {
		t.Errorf("cpu share %v, want in (0, 1]", res.cpu)
	}
}
