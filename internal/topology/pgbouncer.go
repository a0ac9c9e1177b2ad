package topology

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
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

// StartPgBouncer starts PgBouncer as a daemon and waits for its port.
func (t *Topology) StartPgBouncer() error {
	cmd, err := daemon(exec.Command("/usr/sbin/pgbouncer", "-d", t.path(pgbouncerDir, "pgbouncer.ini")))
	if err != nil {
		return err
	}
	if err := run(cmd); err != nil {
		return err
	}
	return waitListening(PgBouncerPort, 30*time.Second)
}

// StopPgBouncer ends PgBouncer at once (SIGTERM: immediate shutdown,
// open client connections are closed) and waits until it is gone.
func (t *Topology) StopPgBouncer() error {
	return stopPidFile(t.path(pgbouncerDir, "pgbouncer.pid"), syscall.SIGTERM)
}

// RepointPgBouncer sends PgBouncer's pools to the cluster on port: the
// configuration is rewritten and reloaded (SIGHUP), and the connections
// to the old server are closed as they are released.
func (t *Topology) RepointPgBouncer(port int) error {
	if err := t.writePgBouncerConfig(port); err != nil {
		return err
	}
	pid, err := readPid(t.path(pgbouncerDir, "pgbouncer.pid"))
	if err != nil {
		return err
	}
	return syscall.Kill(pid, syscall.SIGHUP)
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
