package topology

import (
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
