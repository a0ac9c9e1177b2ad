package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/internal/testfix"
)

// TestRun: the command gets a private TMPDIR and the cluster's URL; what it
// leaves in TMPDIR is listed and fails the run, keeping a failing command's
// own exit code; nothing of the run stays on disk.
func TestRun(t *testing.T) {
	tests := []struct {
		name     string
		script   string
		wantCode int
		wantLeft []string // lines of the leftover report; none when empty
	}{
		{name: "clean", script: `test -n "$JOBBOARD_TEST_DATABASE_URL"`},
		{name: "failing", script: `exit 3`, wantCode: 3},
		{
			name:     "leaves a folder and a file",
			script:   `mkdir "$TMPDIR/jobboard-bin-1" && head -c 2048 /dev/zero >"$TMPDIR/jobboard-bin-1/jobboard" && touch "$TMPDIR/stray"`,
			wantCode: 1,
			wantLeft: []string{"  jobboard-bin-1/ (2.0 kB)", "  stray (0 B)"},
		},
		{
			name:     "fails and leaves",
			script:   `touch "$TMPDIR/stray"; exit 4`,
			wantCode: 4,
			wantLeft: []string{"  stray (0 B)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen := filepath.Join(t.TempDir(), "tmpdir")
			script := `printf %s "$TMPDIR" >` + seen + `; ` + tt.script
			var stderr strings.Builder
			code := run([]string{"sh", "-c", script}, &stderr)
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tt.wantCode, stderr.String())
			}
			report := strings.Contains(stderr.String(), "left behind in the command's TMPDIR")
			if report != (len(tt.wantLeft) > 0) {
				t.Errorf("stderr:\n%s\nwant a leftover report: %v", stderr.String(), len(tt.wantLeft) > 0)
			}
			for _, line := range tt.wantLeft {
				if !strings.Contains(stderr.String(), line+"\n") {
					t.Errorf("stderr:\n%s\nwant the line %q", stderr.String(), line)
				}
			}
			assertRemovedPrivateTmp(t, seen)
		})
	}
}

// assertRemovedPrivateTmp: the TMPDIR the command saw (written to seen) was
// not the caller's, and is gone with the cluster's folder around it.
func assertRemovedPrivateTmp(t *testing.T, seen string) {
	t.Helper()
	b, err := os.ReadFile(seen)
	if err != nil {
		t.Fatal(err)
	}
	tmp := string(b)
	if tmp == "" || tmp == os.TempDir() {
		t.Errorf("the command's TMPDIR %q is not private", tmp)
	}
	if _, err := os.Stat(filepath.Dir(tmp)); !os.IsNotExist(err) {
		t.Errorf("%s still there after the run (%v)", filepath.Dir(tmp), err)
	}
}

// TestRunPassesStopSignals: a stop signal sent to withpg alone reaches the
// command, and withpg still cleans up and returns the command's exit code.
// Ctrl-C included: withpg catches it rather than ignoring it, which the
// command would inherit (a shell cannot trap a signal ignored at entry).
func TestRunPassesStopSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			started, seen := filepath.Join(dir, "started"), filepath.Join(dir, "tmpdir")
			// The loop ends by itself, should the signal never come.
			script := `printf %s "$TMPDIR" >` + seen + `; trap 'exit 7' TERM INT HUP; touch ` + started +
				`; i=0; while [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done`
			go signalWhenExists(started, sig)
			var stderr strings.Builder
			if code := run([]string{"sh", "-c", script}, &stderr); code != 7 {
				t.Errorf("exit code %d, want 7 (the command's, after its %s); stderr:\n%s", code, sig, stderr.String())
			}
			assertRemovedPrivateTmp(t, seen)
		})
	}
}

// TestRunStopsTheWholeCommand: the signal reaches the command's own
// children too (a script's, or go test's test binaries), not only the
// process withpg started, so nothing runs on after the cluster is gone.
func TestRunStopsTheWholeCommand(t *testing.T) {
	dir := t.TempDir()
	started, childPID := filepath.Join(dir, "started"), filepath.Join(dir, "child")
	// The shell loops rather than waits, so that the signal ends it at once
	// and its child would be left behind, were the signal sent to it alone.
	script := `sleep 60 >/dev/null 2>&1 & echo $! >` + childPID + `; touch ` + started +
		`; i=0; while [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done`
	go signalWhenExists(started, syscall.SIGTERM)
	var stderr strings.Builder
	run([]string{"sh", "-c", script}, &stderr)
	b, err := os.ReadFile(childPID)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if !testfix.Gone(pid, 5*time.Second) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the command's child %d still runs after withpg ended", pid)
	}
}

// signalWhenExists sends sig to this process once file exists.
func signalWhenExists(file string, sig syscall.Signal) {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(file); err == nil {
			_ = syscall.Kill(os.Getpid(), sig)
			return
		}
	}
}
