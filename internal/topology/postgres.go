package topology

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	_ "github.com/lib/pq" // the database/sql driver the project uses

	"github.com/truckjobs/jobboard/internal/pglocal"
)

// The two clusters' folders under Dir.
const (
	primaryDir = "primary"
	standbyDir = "standby"
	// standbySlot keeps the primary's WAL until the standby has it.
	standbySlot = "standby"
)

// primarySettings are appended to the primary's postgresql.conf, which
// pg_basebackup copies to the standby. The port is given at start, since
// the two differ.
const primarySettings = `
# The topology's settings (internal/topology).
listen_addresses = '127.0.0.1'
unix_socket_directories = ''
max_connections = 200
wal_level = replica
max_wal_senders = 10
max_replication_slots = 10
hot_standby = on
hot_standby_feedback = on
wal_receiver_status_interval = 1s
`

// daemon makes cmd run as PostgreSQL's unprivileged user when this is
// root (PostgreSQL and PgBouncer refuse root), in a session of its own so
// that it outlives this command and its terminal.
func daemon(cmd *exec.Cmd) (*exec.Cmd, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if os.Geteuid() != 0 {
		return cmd, nil
	}
	cred, err := pglocal.Unprivileged()
	if err != nil {
		return nil, err
	}
	cmd.SysProcAttr.Credential = cred
	return cmd, nil
}

// ownedDir makes dir for the daemons' user.
func ownedDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		return nil
	}
	cred, err := pglocal.Unprivileged()
	if err != nil {
		return err
	}
	return os.Chown(dir, int(cred.Uid), int(cred.Gid))
}

func (t *Topology) pg(name string, args ...string) (*exec.Cmd, error) {
	return daemon(exec.Command(filepath.Join(t.PGBin, name), args...))
}

func (t *Topology) dataDir(cluster string) string { return t.path(cluster, "data") }

// initPrimary makes the primary cluster and its database.
func (t *Topology) initPrimary(ctx context.Context) error {
	if err := ownedDir(t.path(primaryDir)); err != nil {
		return err
	}
	cmd, err := t.pg("initdb", "-D", t.dataDir(primaryDir), "-U", superuser, "--auth=trust",
		"--encoding=UTF8", "--locale=C")
	if err != nil {
		return err
	}
	if err := run(cmd); err != nil {
		return err
	}
	conf, err := os.OpenFile(filepath.Join(t.dataDir(primaryDir), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := conf.WriteString(primarySettings); err != nil {
		conf.Close()
		return err
	}
	if err := conf.Close(); err != nil {
		return err
	}
	if err := t.startCluster(primaryDir, PrimaryPort); err != nil {
		return err
	}
	return exec1(ctx, url(PrimaryPort, "postgres"), "CREATE DATABASE "+Database)
}

// initStandby copies the running primary into a hot standby that streams
// from it (pg_basebackup -R writes primary_conninfo and standby.signal).
func (t *Topology) initStandby() error {
	if err := ownedDir(t.path(standbyDir)); err != nil {
		return err
	}
	cmd, err := t.pg("pg_basebackup", "-h", Host, "-p", strconv.Itoa(PrimaryPort), "-U", superuser,
		"-D", t.dataDir(standbyDir), "-R", "-X", "stream", "-C", "-S", standbySlot, "--checkpoint=fast")
	if err != nil {
		return err
	}
	if err := run(cmd); err != nil {
		return err
	}
	return t.startCluster(standbyDir, StandbyPort)
}

// startCluster starts a cluster on port and waits until it accepts
// connections (a standby: until it accepts reads).
func (t *Topology) startCluster(cluster string, port int) error {
	cmd, err := t.pg("pg_ctl", "-D", t.dataDir(cluster), "-l", t.path(cluster, "postgres.log"),
		"-o", "-p "+strconv.Itoa(port), "-w", "-t", "60", "start")
	if err != nil {
		return err
	}
	return run(cmd)
}

// StopCluster stops a cluster; immediate is a crash (no shutdown
// checkpoint, nothing more sent to the standby).
func (t *Topology) stopCluster(cluster string, immediate bool) error {
	if _, err := os.Stat(filepath.Join(t.dataDir(cluster), "postmaster.pid")); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	mode := "fast"
	if immediate {
		mode = "immediate"
	}
	cmd, err := t.pg("pg_ctl", "-D", t.dataDir(cluster), "-m", mode, "-w", "-t", "60", "stop")
	if err != nil {
		return err
	}
	return run(cmd)
}

// CrashPrimary stops the primary as a crash would.
func (t *Topology) CrashPrimary() error { return t.stopCluster(primaryDir, true) }

// PromoteStandby makes the standby a primary and waits until it takes writes.
func (t *Topology) PromoteStandby(ctx context.Context) error {
	cmd, err := t.pg("pg_ctl", "-D", t.dataDir(standbyDir), "-w", "-t", "60", "promote")
	if err != nil {
		return err
	}
	return run(cmd)
}

// exec1 runs one statement on the database at dsn.
func exec1(ctx context.Context, dsn, stmt string, args ...any) error {
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, stmt, args...); err != nil {
		return fmt.Errorf("%s: %w", stmt, err)
	}
	return nil
}

// SetSynchronousStandby turns synchronous replication on (every commit
// waits until the standby has it) or off, on the running primary.
func (t *Topology) SetSynchronousStandby(ctx context.Context, on bool) error {
	names := ""
	if on {
		names = "*"
	}
	if err := exec1(ctx, url(PrimaryPort, "postgres"), "ALTER SYSTEM SET synchronous_standby_names = '"+names+"'"); err != nil {
		return err
	}
	return exec1(ctx, url(PrimaryPort, "postgres"), "SELECT pg_reload_conf()")
}
