package topology

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const pgbouncerDir = "pgbouncer"

// pgbouncerConfig is PgBouncer's configuration with the primary at port.
// The service's pool is in transaction mode: a server connection serves
// one transaction, then the next client's. Its session-mode alias serves
// what needs a session (LISTEN, the migrations' advisory lock).
func (t *Topology) pgbouncerConfig(port int) string {
	dir := t.path(pgbouncerDir)
	return fmt.Sprintf(`; PgBouncer for the topology (internal/topology); docs/deploy.md explains each setting.
[databases]
%[1]s = host=%[2]s port=%[3]d dbname=%[1]s
%[4]s = host=%[2]s port=%[3]d dbname=%[1]s pool_mode=session pool_size=20

[pgbouncer]
listen_addr = %[2]s
listen_port = %[5]d
unix_socket_dir =
auth_type = trust
auth_file = %[6]s/userlist.txt
admin_users = %[7]s
pool_mode = transaction
; Three replicas of at most 20 connections each share these.
default_pool_size = 30
reserve_pool_size = 5
max_client_conn = 500
max_db_connections = 80
; A client waits at most this long for a server connection, then errs.
query_wait_timeout = 5
server_login_retry = 1
server_connect_timeout = 3
ignore_startup_parameters = extra_float_digits
logfile = %[6]s/pgbouncer.log
pidfile = %[6]s/pgbouncer.pid
`, Database, Host, port, sessionDatabase, PgBouncerPort, dir, superuser)
}

// writePgBouncerConfig points PgBouncer at the primary on port.
func (t *Topology) writePgBouncerConfig(port int) error {
	if err := ownedDir(t.path(pgbouncerDir)); err != nil {
		return err
	}
	// trust needs the user listed; the password is not checked.
	if err := os.WriteFile(t.path(pgbouncerDir, "userlist.txt"), []byte(`"`+superuser+`" ""`+"\n"), 0o644); err != nil {
		return err
	}
	return os.WriteFile(t.path(pgbouncerDir, "pgbouncer.ini"), []byte(t.pgbouncerConfig(port)), 0o644)
}

// supervisorScript runs PgBouncer in the foreground and starts it again a
// second after it exits, unless the file "stopped" says it was stopped on
// purpose: PgBouncer 1.18 (Debian 12's) can crash on a cancel request
// whose client goes away before it completes (pgbouncer#801), and an
// operator's PgBouncer runs under a supervisor that restarts it
// (systemd's Restart=on-failure). Each exit and start is a line of
// supervisor.log: the Unix time in nanoseconds, then what happened. The
// supervisor's pid is in supervisor.pid, for StopPgBouncer.
const supervisorScript = `echo $$ >"$2/supervisor.pid"
while [ ! -e "$2/stopped" ]; do
  echo "$(date +%s%N) started" >>"$2/supervisor.log"
  /usr/sbin/pgbouncer "$1"
  code=$?
  [ -e "$2/stopped" ] && break
  echo "$(date +%s%N) exited $code" >>"$2/supervisor.log"
  sleep 1
done`

// StartPgBouncer starts PgBouncer under its supervisor, detached as a
// daemon would be, and waits for its port.
func (t *Topology) StartPgBouncer() error {
	dir := t.path(pgbouncerDir)
	if err := os.Remove(filepath.Join(dir, "stopped")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	// The supervisor is a shell of its own, started by one that exits, so
	// its $$ is its pid, and it holds none of run's output.
	script := `sh -c "$1" sh "$2" "$3" </dev/null >/dev/null 2>&1 &`
	cmd, err := daemon(exec.Command("sh", "-c", script, "sh", supervisorScript, t.path(pgbouncerDir, "pgbouncer.ini"), dir))
	if err != nil {
		return err
	}
	if err := run(cmd); err != nil {
		return err
	}
	return waitListening(PgBouncerPort, 30*time.Second)
}

// StopPgBouncer ends PgBouncer at once (SIGTERM: immediate shutdown,
// open client connections are closed), telling its supervisor not to
// start it again, and waits until both are gone: a supervisor caught
// between a crash and the restart is ended too, so it cannot start
// PgBouncer after this returns, nor run beside the next one.
func (t *Topology) StopPgBouncer() error {
	if err := os.WriteFile(t.path(pgbouncerDir, "stopped"), nil, 0o644); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := stopPidFile(t.path(pgbouncerDir, "pgbouncer.pid"), syscall.SIGTERM); err != nil {
		return err
	}
	return stopPidFile(t.path(pgbouncerDir, "supervisor.pid"), syscall.SIGTERM)
}

// Crash is one exit of PgBouncer that its supervisor did not expect, and
// when it started again (zero if it has not).
type Crash struct {
	At, Restarted time.Time
	Exit          string
}

// PgBouncerCrashes lists PgBouncer's crashes since the topology came up,
// from its supervisor's log.
func (t *Topology) PgBouncerCrashes() ([]Crash, error) {
	b, err := os.ReadFile(t.path(pgbouncerDir, "supervisor.log"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var crashes []Crash
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		nanos, what, _ := strings.Cut(line, " ")
		n, err := strconv.ParseInt(nanos, 10, 64)
		if err != nil {
			continue
		}
		at := time.Unix(0, n)
		switch {
		case strings.HasPrefix(what, "exited"):
			crashes = append(crashes, Crash{At: at, Exit: strings.TrimPrefix(what, "exited ")})
		case what == "started" && len(crashes) > 0 && crashes[len(crashes)-1].Restarted.IsZero():
			crashes[len(crashes)-1].Restarted = at
		}
	}
	return crashes, nil
}

// RepointPgBouncer sends PgBouncer's pools to the cluster on port: the
// configuration is rewritten and reloaded (SIGHUP), and the connections
// to the old server are closed as they are released.
func (t *Topology) RepointPgBouncer(port int) error {
	if err := t.writePgBouncerConfig(port); err != nil {
		return err
	}
	pid, err := readPid(t.path(pgbouncerDir, "pgbouncer.pid"))
	if errors.Is(err, os.ErrNotExist) {
		return nil // between a crash and its restart: it starts with the new configuration
	}
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGHUP); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

func readPid(file string) (int, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	// PostgreSQL's postmaster.pid has more lines; the pid is the first.
	first, _, _ := strings.Cut(string(b), "\n")
	return strconv.Atoi(strings.TrimSpace(first))
}

// stopPidFile signals the process in file and waits up to a minute until
// it has gone; no file, or a process already gone, is no error.
func stopPidFile(file string, sig syscall.Signal) error {
	pid, err := readPid(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, sig); errors.Is(err, syscall.ESRCH) {
		return nil
	} else if err != nil {
		return err
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if syscall.Kill(pid, 0) != nil {
			return nil
		}
	}
	return fmt.Errorf("process %d (%s) still running a minute after %v", pid, file, sig)
}
