package pglocal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// lockFile is the file in a cluster folder whose lock says a process owns
// the folder; it holds that process's id.
const lockFile = "owner.lock"

// IsClusterDir says whether dir is a cluster folder of this package's: one
// it has locked at least once.
func IsClusterDir(dir string) bool {
	info, err := os.Stat(filepath.Join(dir, lockFile))
	return err == nil && info.Mode().IsRegular()
}

// InUseError is the refusal to use a cluster folder another live process
// owns.
type InUseError struct {
	Dir string
	PID int // the owner; 0 when it could not be read
}

func (e *InUseError) Error() string {
	if e.PID == 0 {
		return fmt.Sprintf("%s is in use by another process", e.Dir)
	}
	return fmt.Sprintf("%s is in use by process %d", e.Dir, e.PID)
}

// Lock is a process's claim on a cluster folder. It is an flock on a file
// in the folder, so the kernel drops it however the process ends; a lock
// that can be taken proves that whoever started a server there is gone.
type Lock struct {
	dir string
	f   *os.File
}

// Acquire claims dir, creating it when missing, or fails at once with an
// *InUseError when another process holds it.
func Acquire(dir string) (*Lock, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// os.OpenFile opens with O_CLOEXEC: the server started later does not
	// inherit the descriptor, so the lock ends with this process, not with
	// PostgreSQL.
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &InUseError{Dir: dir, PID: lockOwner(dir)}
		}
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0); err != nil {
		f.Close()
		return nil, err
	}
	return &Lock{dir: dir, f: f}, nil
}

// lockOwner reads the id the holder of dir's lock wrote. The holder writes
// it just after taking the lock, so an empty file is read again briefly.
func lockOwner(dir string) int {
	for range 20 {
		b, _ := os.ReadFile(filepath.Join(dir, lockFile))
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	return 0
}

// Release gives the folder up. The file stays: removing it would let a
// process that opened it before the removal lock a file no one else sees.
func (l *Lock) Release() {
	if l != nil && l.f != nil {
		_ = l.f.Close()
		l.f = nil
	}
}

// StopLeftover stops a server still running in the folder, which the
// lock shows nobody owns any more (one started before servers ended with
// their owner, or one still shutting down after its owner was killed).
func (l *Lock) StopLeftover(ctx context.Context) error {
	if _, err := os.Stat(filepath.Join(l.dir, "data", "postmaster.pid")); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	c, err := newCluster(l.dir, 0)
	if err != nil {
		return err
	}
	if c.run(ctx, "pg_ctl", "-D", c.dataDir(), "status") != nil {
		return nil
	}
	return c.run(ctx, "pg_ctl", "-D", c.dataDir(), "-m", "fast", "-w", "-t", "60", "stop")
}
