package topology

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSupervisor: a supervised process killed with SIGKILL is started
// again by its supervisor, which logs the exit and the start; once
// stopped, the process and its supervisor are gone and nothing starts it
// again.
func TestSupervisor(t *testing.T) {
	dir := t.TempDir()
	s := supervised{name: "sleeper", dir: dir, log: filepath.Join(dir, "sleeper.log"), argv: []string{"sleep", "600"}}
	if err := startSupervised(s); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stopSupervised(s, syscall.SIGKILL) })
	first := awaitLivePid(t, s.file(".pid"), 0)
	if _, err := killSupervised(s); err != nil {
		t.Fatal(err)
	}
	second := awaitLivePid(t, s.file(".pid"), first)
	all, err := crashes(dir, s.name)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all[0].Exit != "137" || all[0].Restarted.Before(all[0].At) {
		t.Fatalf("crashes %+v, want one exit 137 and a start after it", all)
	}
	if got := supervisorState(dir, s.name); !strings.HasPrefix(got, "supervised, 1 unexpected exits") || !strings.HasSuffix(got, "exit 137)") {
		t.Errorf("state %q, want supervised with one exit, 137", got)
	}
	supervisor, err := readPid(s.file(".supervisor.pid"))
	if err != nil {
		t.Fatal(err)
	}
	if err := stopSupervised(s, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for _, pid := range []int{second, supervisor} {
		if alive(pid) {
			t.Errorf("pid %d still runs after the stop", pid)
		}
	}
	// Longer than the supervisor's wait before a restart.
	time.Sleep(1500 * time.Millisecond)
	if pid, err := readPid(s.file(".pid")); err == nil && alive(pid) {
		t.Errorf("pid file holds %d, running, after the stop: started again", pid)
	}
	if got := supervisorState(dir, s.name); !strings.HasPrefix(got, "no supervisor, 1 unexpected exits") {
		t.Errorf("state after the stop %q, want no supervisor, and the one exit", got)
	}
}

// awaitLivePid waits until file holds the pid of a running process other
// than not, and returns it.
func awaitLivePid(t *testing.T, file string, not int) int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		pid, err := readPid(file)
		if err == nil && pid != not && alive(pid) {
			return pid
		}
	}
	t.Fatalf("no running process other than %d in %s", not, file)
	return 0
}

// TestEndSupervisors: the supervisors of a folder's parts are ended, so
// nothing starts a part again after the folder is removed.
func TestEndSupervisors(t *testing.T) {
	dir := t.TempDir()
	s := supervised{name: "sleeper", dir: filepath.Join(dir, "part"), log: os.DevNull, argv: []string{"sleep", "600"}}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := startSupervised(s); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stopSupervised(s, syscall.SIGKILL) })
	awaitLivePid(t, s.file(".pid"), 0)
	supervisor, err := readPid(s.file(".supervisor.pid"))
	if err != nil {
		t.Fatal(err)
	}
	if err := endSupervisors(dir); err != nil {
		t.Fatal(err)
	}
	if alive(supervisor) {
		t.Errorf("supervisor %d still runs", supervisor)
	}
}

// TestStopPidFile: the process a pid file was written for is stopped and
// the file removed; a process that started after the file was written
// holds a reused pid, and is left alone while the stale file is removed.
func TestStopPidFile(t *testing.T) {
	for _, tt := range []struct {
		name      string
		writtenAt time.Duration // the file's time, from the process's start
		stopped   bool
	}{
		{"written after the start", time.Second, true},
		{"written an hour before the start", -time.Hour, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command("sleep", "600")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			file := filepath.Join(t.TempDir(), "sleep.pid")
			if err := os.WriteFile(file, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, started, err := procStat(cmd.Process.Pid)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(file, time.Time{}, started.Add(tt.writtenAt)); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			if err := stopPidFile(file, syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			select {
			case <-done:
				if !tt.stopped {
					t.Error("a process with a reused pid was stopped")
				}
			case <-time.After(500 * time.Millisecond):
				if tt.stopped {
					t.Error("the process is still running")
				}
			}
			if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("pid file still there (%v)", err)
			}
		})
	}
}
