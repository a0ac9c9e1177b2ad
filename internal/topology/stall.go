package topology

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// StallReplication stops the primary's WAL sender to the standby
// (SIGSTOP), as a partition or a slow link between the two would: the
// primary goes on writing WAL that the standby does not get. It stalls the
// sender rather than the standby's receiver because WAL already sent sits
// in the loopback socket's buffers, which a receiver continued later would
// still read; a stopped sender keeps the unsent WAL on the primary only.
// It returns the sender's pid, for CrashPrimaryStalled.
func (t *Topology) StallReplication(ctx context.Context) (int, error) {
	db, err := sql.Open("postgres", url(t.primary().port(), "postgres"))
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var pid int
	if err := db.QueryRowContext(ctx, `SELECT pid FROM pg_stat_replication LIMIT 1`).Scan(&pid); err != nil {
		return 0, fmt.Errorf("the primary's WAL sender: %w", err)
	}
	if pid <= 0 { // kill(0 or less) would signal a whole process group
		return 0, fmt.Errorf("the primary's WAL sender: pid %d", pid)
	}
	return pid, syscall.Kill(pid, syscall.SIGSTOP)
}

// CrashPrimaryStalled crashes the primary (CrashPrimary) while its WAL
// sender pid is stopped. The crash's SIGQUIT waits on a stopped process,
// so the sender is continued (SIGCONT) once that signal is pending: it
// then exits on it before it runs again, sending nothing more, and the
// crash does not wait the 5 s after which the postmaster would SIGKILL a
// child that has not exited.
func (t *Topology) CrashPrimaryStalled(pid int) error {
	if pid <= 0 { // no sender was stalled
		return t.CrashPrimary()
	}
	crashed := make(chan error, 1)
	go func() { crashed <- t.CrashPrimary() }()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		pending, err := signalPending(pid, syscall.SIGQUIT)
		if err != nil || pending {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil && !errors.Is(err, syscall.ESRCH) {
		return errors.Join(err, <-crashed)
	}
	return <-crashed
}

// signalPending says whether sig waits to be delivered to process pid
// (the SigPnd and ShdPnd masks of /proc/PID/status); an error once the
// process is gone.
func signalPending(pid int, sig syscall.Signal) (bool, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false, err
	}
	defer f.Close()
	bit := uint64(1) << (uint(sig) - 1)
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		name, mask, ok := strings.Cut(lines.Text(), ":")
		if !ok || (name != "SigPnd" && name != "ShdPnd") {
			continue
		}
		if v, err := strconv.ParseUint(strings.TrimSpace(mask), 16, 64); err == nil && v&bit != 0 {
			return true, nil
		}
	}
	return false, lines.Err()
}
