package main

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const mod = "example.com/m"

// Events as go test -json writes them, for package example.com/m/PKG.
func evStart(pkg string) event { return event{Action: "start", Package: mod + "/" + pkg} }
func evRun(pkg, test string) event {
	return event{Action: "run", Package: mod + "/" + pkg, Test: test}
}
func evOut(pkg, test, line string) event {
	return event{Action: "output", Package: mod + "/" + pkg, Test: test, Output: line + "\n"}
}
func evEnd(action, pkg, test string, elapsed float64) event {
	return event{Action: action, Package: mod + "/" + pkg, Test: test, Elapsed: elapsed}
}

func TestReport(t *testing.T) {
	tests := []struct {
		name   string
		events []event
		want   string
	}{
		{
			name: "a passing package: its start and end, no test output",
			events: []event{
				evStart("ok"), evRun("ok", "TestA"), evOut("ok", "TestA", "=== RUN   TestA"), evOut("ok", "TestA", "    a_test.go:3: a log"),
				evOut("ok", "TestA", "--- PASS: TestA (0.00s)"), evEnd("pass", "ok", "TestA", 0),
				evRun("ok", "TestS"), evOut("ok", "TestS", "--- SKIP: TestS (0.00s)"), evEnd("skip", "ok", "TestS", 0),
				evOut("ok", "", "PASS"), evOut("ok", "", "ok  \texample.com/m/ok\t0.035s"), evEnd("pass", "ok", "", 1.25),
			},
			want: "start  ./ok\nok     ./ok  1.2s  (2 tests, 1 skipped)\nok: 1 package passed (2 tests, 1 skipped) in 0.0s\n",
		},
		{
			name:   "a package without tests says nothing",
			events: []event{evStart("none"), evOut("none", "", "?   \texample.com/m/none\t[no test files]"), evEnd("skip", "none", "", 0)},
			want:   "ok: 0 packages passed (0 tests) in 0.0s\n",
		},
		{
			name: "a failing subtest: the test's lines and the failed subtest's, not the passing sibling's",
			events: []event{
				evStart("bad"), evRun("bad", "TestBad"), evOut("bad", "TestBad", "=== RUN   TestBad"),
				evRun("bad", "TestBad/fine"), evOut("bad", "TestBad/fine", "    bad_test.go:5: fine log"),
				evOut("bad", "TestBad/fine", "    --- PASS: TestBad/fine (0.00s)"), evEnd("pass", "bad", "TestBad/fine", 0),
				evRun("bad", "TestBad/broken"), evOut("bad", "TestBad/broken", "    bad_test.go:6: want 1, got 2"),
				evOut("bad", "TestBad/broken", "        second line"),
				evOut("bad", "TestBad/broken", "    --- FAIL: TestBad/broken (0.00s)"), evEnd("fail", "bad", "TestBad/broken", 0),
				evOut("bad", "TestBad", "--- FAIL: TestBad (0.00s)"), evEnd("fail", "bad", "TestBad", 0),
				evOut("bad", "", "FAIL"), evOut("bad", "", "FAIL\texample.com/m/bad\t0.040s"), evEnd("fail", "bad", "", 0.04),
			},
			want: "start  ./bad\n=== RUN   TestBad\n    bad_test.go:6: want 1, got 2\n        second line\n" +
				"    --- FAIL: TestBad/broken (0.00s)\n--- FAIL: TestBad (0.00s)\n" +
				"FAIL   ./bad  0.0s  (1 test, 1 failed)\nFAIL: 1 of 1 package failed in 0.0s: ./bad (TestBad)\n",
		},
		{
			name: "a build failure: the compiler's output",
			events: []event{
				{Action: "build-output", ImportPath: mod + "/nb [example.com/m/nb.test]", Output: "nb/x_test.go:3:27: undefined: undefined\n"},
				{Action: "build-fail", ImportPath: mod + "/nb [example.com/m/nb.test]"},
				evStart("nb"), evOut("nb", "", "FAIL\texample.com/m/nb [build failed]"),
				{Action: "fail", Package: mod + "/nb", FailedBuild: mod + "/nb [example.com/m/nb.test]"},
			},
			want: "nb/x_test.go:3:27: undefined: undefined\nFAIL   ./nb  [build failed]\n" +
				"FAIL: 1 of 1 package failed in 0.0s: ./nb [build failed]\n",
		},
		{
			name: "a crash: the unfinished test's lines and the binary's own",
			events: []event{
				evStart("c"), evRun("c", "TestSlow"), evOut("c", "TestSlow", "=== RUN   TestSlow"),
				evOut("c", "", "panic: test timed out after 1s"), evOut("c", "", "FAIL\texample.com/m/c\t1.002s"), evEnd("fail", "c", "", 1),
			},
			want: "start  ./c\n=== RUN   TestSlow\npanic: test timed out after 1s\nFAIL   ./c  1.0s  (0 tests)\n" +
				"FAIL: 1 of 1 package failed in 0.0s: ./c\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			now := time.Now()
			r := newReport(&b, mod, now)
			for _, e := range tt.events {
				r.handle(e, now)
			}
			r.summary(now)
			if diff := cmp.Diff(tt.want, b.String()); diff != "" {
				t.Errorf("report (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHeartbeat: after a quiet spell the report says what is running, and
// says nothing while lines keep coming.
func TestHeartbeat(t *testing.T) {
	t0 := time.Now()
	var b strings.Builder
	r := newReport(&b, mod, t0)
	r.heartbeat(t0.Add(10*time.Second), 30*time.Second)
	r.heartbeat(t0.Add(30*time.Second), 30*time.Second)
	r.handle(evStart("slow"), t0.Add(40*time.Second))
	for _, test := range []string{"TestA", "TestB", "TestC", "TestD", "TestE"} {
		r.handle(evRun("slow", test), t0.Add(41*time.Second))
	}
	r.handle(evEnd("pass", "slow", "TestA", 1), t0.Add(42*time.Second))
	r.heartbeat(t0.Add(60*time.Second), 30*time.Second)
	r.heartbeat(t0.Add(100*time.Second), 30*time.Second)
	want := "...    30.0s: building\n" +
		"start  ./slow\n" +
		"...    1m40s: ./slow for 1m0s, 1 test done, running TestB, TestC, TestD, ...\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
}
