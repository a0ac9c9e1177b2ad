package topology

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestSignalPendingOnStoppedProcess: a signal sent to a stopped process
// waits, signalPending sees it, and the process ends on it once continued
// (what CrashPrimaryStalled relies on for the stalled WAL sender).
func TestSignalPendingOnStoppedProcess(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep command:", err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// The stop takes effect when the process next runs: on a loaded
	// machine a SIGQUIT sent before then is delivered first (the lower
	// number) and ends it, and nothing is left pending to see.
	for deadline := time.Now().Add(5 * time.Second); !stopped(t, pid); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("SIGSTOP did not stop the process within 5s")
		}
	}
	if pending, err := signalPending(pid, syscall.SIGQUIT); err != nil || pending {
		t.Fatalf("before SIGQUIT: pending %v, %v; want none", pending, err)
	}
	if err := syscall.Kill(pid, syscall.SIGQUIT); err != nil {
		t.Fatal(err)
	}
	pending := false
	for deadline := time.Now().Add(5 * time.Second); !pending && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		var err error
		if pending, err = signalPending(pid, syscall.SIGQUIT); err != nil {
			t.Fatal(err)
		}
	}
	if !pending {
		t.Fatal("SIGQUIT sent to a stopped process is not seen pending")
	}
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if err == nil || !ws.Signaled() || ws.Signal() != syscall.SIGQUIT {
		t.Errorf("continued, the process ended with %v (%v); want SIGQUIT", err, ws)
	}
}

// stopped says whether the process is stopped by a signal: state T in
// /proc/pid/stat, after the command name in parentheses.
func stopped(t *testing.T, pid int) bool {
	t.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'T'
}
