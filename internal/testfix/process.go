package testfix

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ReachableDir is a new folder, removed after the test, that a PostgreSQL
// started by the test can use. Not t.TempDir: under root PostgreSQL runs as
// another user, who must be able to reach the folder, and t.TempDir's
// parent is private.
func ReachableDir(t testing.TB, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Running says whether process pid runs and is not a zombie waiting to be
// reaped (an orphan's new parent may be slow to reap it).
func Running(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses.
	i := strings.LastIndexByte(string(stat), ')')
	return i > 0 && i+2 < len(stat) && stat[i+2] != 'Z'
}

// Gone waits up to within for process pid to end and reports whether it did.
func Gone(pid int, within time.Duration) bool {
	return Eventually(within, func() bool { return !Running(pid) })
}

// KillLeftoverServer ends a PostgreSQL server a failed test left running.
// SIGQUIT is PostgreSQL's immediate shutdown.
func KillLeftoverServer(pid int) {
	if Running(pid) {
		_ = syscall.Kill(pid, syscall.SIGQUIT)
		Gone(pid, 10*time.Second)
	}
}
