package pglocal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

// server is the postgres process a Cluster started as its child.
type server struct {
	proc    *os.Process
	exited  chan struct{} // closed once the process has ended
	waitErr error         // how it ended; read after exited is closed
}

// launch starts postgres itself (not through pg_ctl, which detaches it) so
// that it ends with this process: its parent-death signal is SIGINT,
// PostgreSQL's fast shutdown. Linux sends that signal when the thread that
// started the child ends, not the process, so a goroutine locked to its
// thread starts it and stays until it exits; only the process's death ends
// that thread earlier. Go sets the signal after switching to the server's
// user, as the kernel clears it on a change of user.
func (c *Cluster) launch(settings []string, logFile *os.File) (*server, error) {
	s := &server{exited: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// Never unlocked: the thread ends with this goroutine, after the
		// server has.
		cmd := exec.Command(filepath.Join(c.bin, "postgres"), append([]string{"-D", c.dataDir()}, settings...)...)
		cmd.Dir = c.dir
		cmd.Stdout, cmd.Stderr = logFile, logFile
		// A session of its own, as pg_ctl gives it: Ctrl-C in the terminal
		// reaches only the owner, which drains its requests before it stops
		// the database.
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred, Pdeathsig: syscall.SIGINT, Setsid: true}
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		s.proc = cmd.Process
		started <- nil
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	return s, nil
}

// waitReady waits until the server says in postmaster.pid that it accepts
// connections, as pg_ctl -w does; it fails when the server ends first.
func (c *Cluster) waitReady(ctx context.Context, s *server, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if pm, err := readPostmasterPID(c.dataDir()); err == nil && pm.pid == s.proc.Pid && pm.ready {
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("postgres ended while starting: %v", s.waitErr)
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("postgres not ready after %s", timeout)
		case <-tick.C:
		}
	}
}

// stop asks for a fast shutdown (open connections are ended, the data is
// checkpointed) and waits; a server that has not ended within grace is
// told to quit at once, which PostgreSQL recovers from at the next start.
func (s *server) stop(grace time.Duration) error {
	select {
	case <-s.exited:
		return s.waitErr
	default:
	}
	if err := s.proc.Signal(syscall.SIGINT); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	select {
	case <-s.exited:
		return s.waitErr
	case <-time.After(grace):
	}
	_ = s.proc.Signal(syscall.SIGQUIT)
	<-s.exited
	return fmt.Errorf("postgres did not stop within %s; it was told to quit at once", grace)
}

// postmasterPID is what PostgreSQL writes to postmaster.pid in its data
// folder: its process id on line 1, its port on line 4 and, on line 8,
// "ready" once it accepts connections.
type postmasterPID struct {
	pid, port int
	ready     bool
}

func readPostmasterPID(dataDir string) (postmasterPID, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return postmasterPID{}, err
	}
	lines := splitLines(string(b))
	if len(lines) < 4 {
		return postmasterPID{}, errors.New("postmaster.pid: too short")
	}
	var pm postmasterPID
	if pm.pid, err = strconv.Atoi(lines[0]); err != nil {
		return pm, fmt.Errorf("postmaster.pid: process id: %w", err)
	}
	if pm.port, err = strconv.Atoi(lines[3]); err != nil {
		return pm, fmt.Errorf("postmaster.pid: port: %w", err)
	}
	pm.ready = len(lines) >= 8 && lines[7] == "ready"
	return pm, nil
}
