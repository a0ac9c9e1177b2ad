package topology

import (
	"errors"
	"fmt"
	"os"
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

// pgbouncer is PgBouncer under its supervisor (supervise.go): PgBouncer
// 1.18 (Debian 12's) can crash on a cancel request whose client goes away
// before it completes (pgbouncer#801), and an operator's PgBouncer runs
// under one that restarts it. Its own log is pgbouncer.log (its
// configuration's logfile).
func (t *Topology) pgbouncer() supervised {
	return supervised{name: "pgbouncer", dir: t.path(pgbouncerDir), log: os.DevNull,
		argv: []string{"/usr/sbin/pgbouncer", t.path(pgbouncerDir, "pgbouncer.ini")}, ownPidFile: true, unprivileged: true}
}

// StartPgBouncer starts PgBouncer under its supervisor and waits for its
// port.
func (t *Topology) StartPgBouncer() error {
	if err := startSupervised(t.pgbouncer()); err != nil {
		return err
	}
	return waitListening(PgBouncerPort, 30*time.Second)
}

// StopPgBouncer ends PgBouncer at once (SIGTERM: immediate shutdown,
// open client connections are closed) and its supervisor with it.
func (t *Topology) StopPgBouncer() error {
	return stopSupervised(t.pgbouncer(), syscall.SIGTERM)
}

// PgBouncerCrashes lists PgBouncer's crashes since the topology came up,
// from its supervisor's log.
func (t *Topology) PgBouncerCrashes() ([]Crash, error) {
	return crashes(t.path(pgbouncerDir), "pgbouncer")
}

// RepointPgBouncer sends PgBouncer's pools to the cluster on port: the
// configuration is rewritten and reloaded (SIGHUP), and the connections
// to the old server are closed as they are released.
func (t *Topology) RepointPgBouncer(port int) error {
	if err := t.writePgBouncerConfig(port); err != nil {
		return err
	}
	pid, err := livePid(t.path(pgbouncerDir, "pgbouncer.pid"))
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
