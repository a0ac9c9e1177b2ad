package main

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// answers is a made-up h2load result: n answers of status, each taking d,
// over a 60 s run.
func answers(status, n int, d time.Duration) h2loadResult {
	return h2loadResult{elapsed: time.Minute, latencies: map[int][]time.Duration{status: slices.Repeat([]time.Duration{d}, n)}}
}

// withAnswers adds n answers of status taking d.
func withAnswers(r h2loadResult, status, n int, d time.Duration) h2loadResult {
	r.latencies[status] = append(r.latencies[status], slices.Repeat([]time.Duration{d}, n)...)
	slices.Sort(r.latencies[status])
	return r
}

func TestInFlightAges(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name       string
		ends       []time.Duration
		sent, open int
		want       []time.Duration
	}{
		{"none open", []time.Duration{s, 2 * s}, 0, 0, []time.Duration{}},
		{"sent at the latest ends", []time.Duration{s, 2 * s, 2500 * time.Millisecond}, 2, 2, []time.Duration{500 * time.Millisecond, s}},
		{"more sent than ends: the rest waited the whole run", []time.Duration{2 * s}, 3, 3, []time.Duration{s, 3 * s, 3 * s}},
		{"an end logged past the duration waits no less than 0", []time.Duration{s, 3100 * time.Millisecond}, 2, 2, []time.Duration{0, 2 * s}},
		{"stuck since the warm-up: nothing sent, all open", nil, 0, 2, []time.Duration{3 * s, 3 * s}},
		{"one connection of three stuck since the warm-up", []time.Duration{s, 2 * s, 2500 * time.Millisecond}, 2, 3, []time.Duration{500 * time.Millisecond, s, 3 * s}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := inFlightAges(tc.ends, 3*s, int64(tc.sent), tc.open); !slices.Equal(got, tc.want) {
				t.Errorf("inFlightAges = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestMixedPostConns(t *testing.T) {
	for level, want := range map[int]int{10: 40, 200: 40, 1000: 120, 4000: 400} {
		got := mixedPostConns(level)
		if got != want {
			t.Errorf("mixedPostConns(%d) = %d, want %d", level, got, want)
		}
		if got%(2*mixedPostAccounts) != 0 {
			t.Errorf("mixedPostConns(%d) = %d, not an even number per account", level, got)
		}
	}
}

// Each account posts its two versions from two processes with its own key,
// half of its connections each.
func TestPostRuns(t *testing.T) {
	posters := []mixedPoster{
		{key: "k1", bodies: [2][]byte{[]byte("a1"), []byte("b1")}},
		{key: "k2", bodies: [2][]byte{[]byte("a2"), []byte("b2")}},
	}
	runs := postRuns("http://x/", posters, 12)
	if len(runs) != 4 {
		t.Fatalf("%d runs, want 2 per account", len(runs))
	}
	for i, r := range runs {
		p := posters[i/2]
		if r.account != i/2+1 || r.conns != 3 || !bytes.Equal(r.body, p.bodies[i%2]) || !slices.Contains(r.headers, "Authorization: Bearer "+p.key) {
			t.Errorf("run %d: account %d, %d connections, body %q, headers %v; want account %d, 3 connections, body %q, key %s",
				i, r.account, r.conns, r.body, r.headers, i/2+1, p.bodies[i%2], p.key)
		}
	}
}

// The server's refusal reasons are read from its metrics and summed up
// between two readings, the largest count first.
func TestRefusalCounts(t *testing.T) {
	text := "# TYPE jobboard_admission_refused_total counter\n" +
		`jobboard_admission_refused_total{reason="expected_wait"} 12` + "\n" +
		`jobboard_admission_refused_total{reason="wait_timeout"} 40` + "\n" +
		`jobboard_admission_refused_total{reason="queue_full"} 0` + "\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, text)
	}))
	defer srv.Close()
	got, err := refusalCounts(context.Background(), &process{metricsBase: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"expected_wait": 12, "wait_timeout": 40, "queue_full": 0}
	if !maps.Equal(got, want) {
		t.Errorf("refusalCounts = %v, want %v", got, want)
	}
	before := map[string]float64{"expected_wait": 2, "wait_timeout": 40}
	if note := refusalNote(before, got); !strings.Contains(note, "expected_wait 10.") || strings.Contains(note, "wait_timeout") {
		t.Errorf("refusalNote = %q, want expected_wait 10 alone", note)
	}
	if note := refusalNote(got, got); note != "" {
		t.Errorf("refusalNote with nothing new = %q, want empty", note)
	}
}

// postsClass is a posts' class of two accounts whose sum is as given.
func postsClass(a, b h2loadResult) *mixedClass {
	c := &mixedClass{name: "posts", want: 200, conns: 4, accounts: []mixedPart{{conns: 2, result: a}, {conns: 2, result: b}}}
	c.result = h2loadResult{latencies: map[int][]time.Duration{}}
	for _, p := range c.accounts {
		c.result = mergeH2load(c.result, p.result)
	}
	return c
}

func TestJudgeMixedClass(t *testing.T) {
	fast, ms100 := 100*time.Millisecond, 100*time.Millisecond
	for _, tc := range []struct {
		name     string
		class    *mixedClass
		pass     bool
		noteHas  string
		meanConn float64
	}{
		{"even accounts", postsClass(answers(200, 100, fast), answers(200, 100, fast)), true, "all 2 met", 50},
		// The sum of 104 per account-connection hides account 2's 4 per
		// connection: each account is judged alone.
		{"one account starved", postsClass(answers(200, 200, fast), answers(200, 8, fast)), false, "1 not met: account 2", 50},
		// 10 slow answers are 0.5% of the class but 10% of account 2.
		{"one account's tail", postsClass(answers(200, 2000, ms100), withAnswers(answers(200, 90, ms100), 200, 10, time.Second)),
			false, "worst p99/median 10.00 (account 2)", 50},
		{"an error fails the class", postsClass(answers(200, 100, fast), withAnswers(answers(200, 100, fast), 500, 1, fast)), false, "1× 500", 50},
		{"503s are no error", postsClass(answers(200, 100, fast), withAnswers(answers(200, 100, fast), 503, 5, time.Millisecond)), true, "5 refused", 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			row := judgeMixedClass(tc.class, tc.meanConn)
			if row.pass != tc.pass || !strings.Contains(row.note, tc.noteHas) {
				t.Errorf("pass %v, want %v; note %q, want it to hold %q", row.pass, tc.pass, row.note, tc.noteHas)
			}
		})
	}
}

// A request the server never answers stays in the tail: 2 connections of
// 10 stuck for the whole run put the p99 at the run's length.
func TestJudgeMixedClassCountsInFlight(t *testing.T) {
	r := answers(200, 100, 100*time.Millisecond)
	r.inFlight = []time.Duration{50 * time.Millisecond, time.Minute, time.Minute}
	c := &mixedClass{name: "reads", want: 200, conns: 10, result: r}
	row := judgeMixedClass(c, 10)
	if row.pass || row.p99 != time.Minute {
		t.Errorf("pass %v, p99 %v; want not met with a p99 of the 60 s run", row.pass, row.p99)
	}
	r.inFlight = r.inFlight[:1]
	if row := judgeMixedClass(&mixedClass{name: "reads", want: 200, conns: 10, result: r}, 10); !row.pass {
		t.Errorf("one request in flight for 50 ms: not met (%s)", row.note)
	}
}

func TestJudgeAdmission(t *testing.T) {
	refusals := func(n int, d time.Duration) []time.Duration { return slices.Repeat([]time.Duration{d}, n) }
	for _, tc := range []struct {
		name                string
		served              int64
		refusals            []time.Duration
		perSecond, capacity float64
		pass                bool
	}{
		{"within capacity, none refused", 1000, nil, 2000, 0, true},
		{"within capacity, 0.5% refused", 995, refusals(5, time.Millisecond), 2000, 0, true},
		{"within capacity, 2% refused", 980, refusals(20, time.Millisecond), 2000, 0, false},
		{"past capacity, fast refusals", 700, refusals(300, 5*time.Millisecond), 1900, 2000, true},
		{"past capacity, none refused", 1000, nil, 1900, 2000, true},
		{"past capacity, slow refusals", 700, refusals(300, 200*time.Millisecond), 1900, 2000, false},
		{"past capacity, served work falls", 700, refusals(300, time.Millisecond), 1500, 2000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			row := judgeAdmission(tc.served, tc.refusals, tc.perSecond, tc.capacity)
			if row.pass != tc.pass || row.target == "" {
				t.Errorf("pass %v, want %v (target %q, note %q)", row.pass, tc.pass, row.target, row.note)
			}
		})
	}
}
