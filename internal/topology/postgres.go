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
	"strings"
	"syscall"
	"time"

	_ "github.com/lib/pq" // the database/sql driver the project uses

	"github.com/truckjobs/jobboard/internal/pglocal"
)

// cluster is one of the topology's two PostgreSQL clusters, named by its
// port; its folder under Dir is named after it. The first starts as the
// primary and the second as its standby; a failover or a switchover turns
// them around (roles.go).
type cluster int

// The two clusters.
const (
	firstCluster  = cluster(PrimaryPort)
	secondCluster = cluster(StandbyPort)
)

func (c cluster) port() int      { return int(c) }
func (c cluster) dir() string    { return "postgres-" + strconv.Itoa(int(c)) }
func (c cluster) url() string    { return url(int(c), Database) }
func (c cluster) String() string { return addr(int(c)) }

// other is the topology's other cluster.
func (c cluster) other() cluster {
	if c == firstCluster {
		return secondCluster
	}
	return firstCluster
}

// standbySlot keeps the primary's WAL until the standby has it.
const standbySlot = "standby"

// primarySettings are appended to the first cluster's postgresql.conf,
// which pg_basebackup copies to each standby. The port is given at start,
// since the two differ. The Unix sockets are pgBackRest's way in (it
// reaches PostgreSQL through no other); every WAL segment is archived to
// its repository (archiveCommand, appended per cluster).
func (t *Topology) primarySettings() string {
	return fmt.Sprintf(`
# The topology's settings (internal/topology).
listen_addresses = '127.0.0.1'
unix_socket_directories = '%s'
max_connections = 200
wal_level = replica
max_wal_senders = 10
max_replication_slots = 10
hot_standby = on
hot_standby_feedback = on
wal_receiver_status_interval = 1s
archive_mode = on
`, t.path(socketsDir))
}

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

func (t *Topology) dataDir(c cluster) string { return t.path(c.dir(), "data") }

// initPrimary makes the first cluster and its database.
func (t *Topology) initPrimary(ctx context.Context) error {
	c := firstCluster
	for _, dir := range []string{c.dir(), socketsDir} {
		if err := ownedDir(t.path(dir)); err != nil {
			return err
		}
	}
	cmd, err := t.pg("initdb", "-D", t.dataDir(c), "-U", superuser, "--auth=trust",
		"--encoding=UTF8", "--locale=C")
	if err != nil {
		return err
	}
	if err := run(cmd); err != nil {
		return err
	}
	if err := appendConf(t.dataDir(c), t.primarySettings()+t.archiveCommand(c)); err != nil {
		return err
	}
	if err := t.startCluster(c); err != nil {
		return err
	}
	if err := t.setPrimary(c); err != nil {
		return err
	}
	return exec1(ctx, url(c.port(), "postgres"), "CREATE DATABASE "+Database)
}

// makeStandby makes cluster c, from nothing, a hot standby streaming from
// the primary p through the replication slot standbySlot, and starts it:
// whatever c's folder held goes (a fenced old primary, a standby broken
// off), and so does a slot of that name on p, which an earlier standby
// left. pg_basebackup -R writes primary_conninfo and standby.signal.
func (t *Topology) makeStandby(ctx context.Context, p, c cluster) error {
	if err := t.stopCluster(c, true); err != nil {
		return err
	}
	if err := os.RemoveAll(t.dataDir(c)); err != nil {
		return err
	}
	if err := ownedDir(t.path(c.dir())); err != nil {
		return err
	}
	if err := dropSlot(ctx, p); err != nil {
		return err
	}
	cmd, err := t.pg("pg_basebackup", "-h", Host, "-p", strconv.Itoa(p.port()), "-U", superuser,
		"-D", t.dataDir(c), "-R", "-X", "stream", "-C", "-S", standbySlot, "--checkpoint=fast")
	if err != nil {
		return err
	}
	if err := run(cmd); err != nil {
		return err
	}
	if err := appendConf(t.dataDir(c), t.archiveCommand(c)); err != nil {
		return err
	}
	return t.startCluster(c)
}

// appendConf appends settings to the postgresql.conf of the cluster in
// dataDir; a setting given twice takes its last value.
func appendConf(dataDir, settings string) error {
	conf, err := os.OpenFile(filepath.Join(dataDir, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := conf.WriteString(settings); err != nil {
		conf.Close()
		return err
	}
	return conf.Close()
}

// dropSlot drops the standby's replication slot on p, if there is one,
// once its WAL sender has gone (it outlives the standby it served by a
// moment).
func dropSlot(ctx context.Context, p cluster) error {
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		err = exec1(ctx, url(p.port(), "postgres"), `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots
			WHERE slot_name = $1 AND NOT active`, standbySlot)
		if err != nil {
			return err
		}
		var active bool
		if active, err = slotActive(ctx, p); err != nil || !active {
			return err
		}
	}
	return fmt.Errorf("the replication slot %q on %v is still in use after 30 s", standbySlot, p)
}

// slotActive says whether the standby's slot on p exists and is in use.
func slotActive(ctx context.Context, p cluster) (bool, error) {
	var active bool
	err := queryOne(ctx, url(p.port(), "postgres"), `SELECT active FROM pg_replication_slots WHERE slot_name = $1`, &active, standbySlot)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return active, err
}

// startCluster starts cluster c and waits until it accepts connections
// (a standby: until it accepts reads; a restored cluster: until it has
// replayed what it restores, within 5 minutes). options are more of
// postgres's command-line options.
func (t *Topology) startCluster(c cluster, options ...string) error {
	cmd, err := t.pg("pg_ctl", "-D", t.dataDir(c), "-l", t.path(c.dir(), "postgres.log"),
		"-o", strings.Join(append([]string{"-p", strconv.Itoa(c.port())}, options...), " "), "-w", "-t", "300", "start")
	if err != nil {
		return err
	}
	return run(cmd)
}

// stopCluster stops cluster c if it runs; immediate is a crash (no
// shutdown checkpoint, nothing more sent to the standby), otherwise a
// clean stop, after which the standby has every WAL record the primary
// wrote.
func (t *Topology) stopCluster(c cluster, immediate bool) error {
	if _, err := os.Stat(filepath.Join(t.dataDir(c), "postmaster.pid")); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	mode := "fast"
	if immediate {
		mode = "immediate"
	}
	cmd, err := t.pg("pg_ctl", "-D", t.dataDir(c), "-m", mode, "-w", "-t", "60", "stop")
	if err != nil {
		return err
	}
	return run(cmd)
}

// CrashPrimary stops the primary as a crash would.
func (t *Topology) CrashPrimary() error { return t.stopCluster(t.primary(), true) }

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
	primary := url(t.primary().port(), "postgres")
	if err := exec1(ctx, primary, "ALTER SYSTEM SET synchronous_standby_names = '"+names+"'"); err != nil {
		return err
	}
	return exec1(ctx, primary, "SELECT pg_reload_conf()")
}
