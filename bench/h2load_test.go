package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
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
	// Each connection has its request in flight when the duration ends,
	// and the handler answers in a millisecond: they waited no longer.
	if len(res.inFlight) != 3 || res.started-res.mainDone > 3 || len(res.ends) != int(res.done) {
		t.Errorf("%d in flight, %d sent in the duration and not ended, %d ends; want one in flight per connection and an end per done request (%d)",
			len(res.inFlight), res.started-res.mainDone, len(res.ends), res.done)
	}
	for _, age := range res.inFlight {
		if age > 100*time.Millisecond {
			t.Errorf("a request in flight at the end had waited at least %v; the handler answers in 1 ms", age)
		}
	}
	if res.cpu <= 0 || res.cpu > 1 {
		t.Errorf("cpu share %v, want in (0, 1]", res.cpu)
	}
}

// TestH2loadInFlight checks the requests still in flight when the duration
// ends: h2load's done counts the warm-up's requests that ended in the
// duration, so only the log's start times tell how many of the duration's
// requests had no answer yet, and their ends how long at least they had
// waited. With 300 ms answers each of the 3 connections has one request
// in flight at the end, sent up to 300 ms before.
func TestH2loadInFlight(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond)
		_, _ = io.WriteString(w, "ok")
	}))
	defer srv.Close()
	res, err := h2loadRun{name: "slow", dir: t.TempDir(), http1: true, conns: 3, uris: []string{srv.URL + "/"},
		warmup: time.Second, duration: 2 * time.Second}.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.inFlight) != 3 {
		t.Fatalf("%d in flight at the end (started %d, done %d, of the duration %d), want one per connection",
			len(res.inFlight), res.started, res.done, res.mainDone)
	}
	for _, age := range res.inFlight {
		if age <= 0 || age > 300*time.Millisecond {
			t.Errorf("in flight for at least %v, want within the 300 ms of an answer", age)
		}
	}
}

// The log's requests sent before the noted start of the duration are the
// warm-up's, but no more of them than could be in flight at once: the
// note comes late, and a request logged before it past that count was the
// duration's.
func TestParseH2loadSplitsWarmup(t *testing.T) {
	phase := time.UnixMicro(10_000_000)
	log := filepath.Join(t.TempDir(), "log")
	lines := "9990000\t200\t20000\n" + // warm-up, ended in the duration
		"9991000\t0\t12000\n" + // warm-up, its status line came in the warm-up too
		"9995000\t200\t20000\n" + // before the note, but a second of one connection
		"10010000\t200\t20000\n10030000\t503\t100\n"
	if err := os.WriteFile(log, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	summary := "finished in 2.00s\nrequests: 0 total, 5 started, 5 done, 5 succeeded, 0 failed, 0 errored, 0 timeout\n"
	for _, tc := range []struct {
		maxOpen  int
		mainDone int64
	}{{1, 4}, {2, 3}, {5, 2}} {
		res, err := parseH2load(summary, log, phase, tc.maxOpen)
		if err != nil {
			t.Fatal(err)
		}
		if res.mainDone != tc.mainDone || res.count(200) != 3 || res.count(503) != 1 || res.statusless != 1 || res.failed != 0 {
			t.Errorf("at most %d open: %d of the duration done, %d×200, %d×503, %d without a status, %d failed; want %d, 3, 1, 1, 0",
				tc.maxOpen, res.mainDone, res.count(200), res.count(503), res.statusless, res.failed, tc.mainDone)
		}
		want := []time.Duration{3 * time.Millisecond, 10 * time.Millisecond, 15 * time.Millisecond, 30 * time.Millisecond, 30100 * time.Microsecond}
		if !slices.Equal(res.ends, want) {
			t.Errorf("ends %v, want %v (from the start of the duration)", res.ends, want)
		}
	}
}

// A connection whose request of the warm-up is never answered sends
// nothing in the duration, so h2load's counts do not show it: it is in
// flight all along, for at least the whole duration.
func TestH2loadStuckSinceWarmup(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stuck" {
			<-release
		}
		_, _ = io.WriteString(w, "ok")
	}))
	defer srv.Close()
	defer close(release)
	res, err := h2loadRun{name: "stuck", dir: t.TempDir(), http1: true, conns: 2, uris: []string{srv.URL + "/a", srv.URL + "/stuck"},
		warmup: time.Second, duration: time.Second}.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.requests() != 0 {
		t.Fatalf("%d answered in the duration, want none", res.requests())
	}
	if len(res.inFlight) != 2 || res.inFlight[0] != time.Second {
		t.Errorf("in flight %v, want both connections for the whole 1 s", res.inFlight)
	}
}
