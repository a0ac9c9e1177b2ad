package topology

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"time"
)

// pgBackRest keeps the topology's backups and archived WAL in one
// repository under Dir: every WAL segment the primary completes is pushed
// there (archive_command), and Backup adds a backup; RestoreTo makes a
// cluster of any moment since the first backup.
const (
	pgbackrestDir = "pgbackrest"
	// stanza names the database cluster in the repository.
	stanza = "jobboard"
	// socketsDir holds the clusters' Unix sockets, pgBackRest's only way
	// to reach PostgreSQL.
	socketsDir = "sockets"
	// RestorePort is where RestoreTo starts the cluster it restores.
	RestorePort = 15434
)

// restoreCluster is the cluster RestoreTo makes: beside the two others,
// never a primary or a standby of theirs.
const restoreCluster = cluster(RestorePort)

// pgbackrestConfig names the repository and, as pg1, the cluster that is
// the primary now, which backups are taken from; it is written again when
// the primary changes (setPrimary).
func (t *Topology) pgbackrestConfig() string {
	p := t.primary()
	return fmt.Sprintf(`# pgBackRest for the topology (internal/topology); docs/operations.md.
[global]
repo1-path=%[1]s/repo
repo1-retention-full=2
log-path=%[1]s/log
lock-path=%[1]s/lock
log-level-console=warn
log-level-file=info
start-fast=y
# lz4 costs the primary's two cores little for each archived segment.
compress-type=lz4

[%[2]s]
pg1-path=%[3]s
pg1-port=%[4]d
pg1-socket-path=%[5]s
pg1-user=%[6]s
`, t.path(pgbackrestDir), stanza, t.dataDir(p), p.port(), t.path(socketsDir), superuser)
}

func (t *Topology) pgbackrestConfigFile() string { return t.path(pgbackrestDir, "pgbackrest.conf") }

// writePgBackRestConfig writes the configuration, in a folder PostgreSQL's
// user owns: the archiver runs pgBackRest as that user.
func (t *Topology) writePgBackRestConfig() error {
	for _, dir := range []string{"", "repo", "log", "lock"} {
		if err := ownedDir(t.path(pgbackrestDir, dir)); err != nil {
			return err
		}
	}
	return os.WriteFile(t.pgbackrestConfigFile(), []byte(t.pgbackrestConfig()), 0o644)
}

// archiveCommand is cluster c's archive_command: pushed to the stanza,
// with c's own data folder, which the configuration's pg1 may not be
// (a standby promoted before the configuration names it).
func (t *Topology) archiveCommand(c cluster) string {
	return fmt.Sprintf(`archive_command = 'pgbackrest "--config=%s" --stanza=%s "--pg1-path=%s" archive-push "%%p"'`+"\n",
		t.pgbackrestConfigFile(), stanza, t.dataDir(c))
}

// pgbackrest runs pgBackRest as PostgreSQL's user with the topology's
// configuration.
func (t *Topology) pgbackrest(ctx context.Context, args ...string) error {
	cmd, err := daemon(exec.CommandContext(ctx, "pgbackrest",
		append([]string{"--config=" + t.pgbackrestConfigFile(), "--stanza=" + stanza}, args...)...))
	if err != nil {
		return err
	}
	return run(cmd)
}

// createStanza makes the repository's stanza for the primary, once it
// runs with archiving on, and checks that WAL reaches it.
func (t *Topology) createStanza(ctx context.Context) error {
	if err := t.writePgBackRestConfig(); err != nil {
		return err
	}
	if err := t.pgbackrest(ctx, "stanza-create"); err != nil {
		return err
	}
	return t.pgbackrest(ctx, "check")
}

// BackedUp is what Backup did.
type BackedUp struct {
	Took time.Duration
}

func (b BackedUp) String() string {
	return fmt.Sprintf("backup of the primary taken in %.1f s (pgbackrest info lists the backups)", b.Took.Seconds())
}

// Backup takes a backup of the primary with pgBackRest: incremental on
// the last one, full when there is none; a full one every so often
// (--type=full) lets the oldest be expired (two full backups are kept,
// and the WAL they need). make topology-backup runs it; cron would.
func (t *Topology) Backup(ctx context.Context, full bool) (BackedUp, error) {
	start := time.Now()
	args := []string{"backup"}
	if full {
		args = append(args, "--type=full")
	}
	err := t.pgbackrest(ctx, args...)
	return BackedUp{Took: time.Since(start)}, err
}

// CheckArchive forces the primary onto a new WAL segment and waits until
// the finished one is in the repository: a restore can then reach any
// moment before the call.
func (t *Topology) CheckArchive(ctx context.Context) error { return t.pgbackrest(ctx, "check") }

// Restored is what RestoreTo did.
type Restored struct {
	Target string
	URL    string
	Took   time.Duration
}

func (r Restored) String() string {
	return fmt.Sprintf("restored to %s in %.1f s, running on its own: %s", r.Target, r.Took.Seconds(), r.URL)
}

// RestoreTo restores the repository's last backup before target (a
// PostgreSQL timestamp, '2026-12-05 13:42:05+00') into a cluster of its
// own on RestorePort, replays the archived WAL up to target, and starts
// it as a primary cut off from the rest: archiving off, so it adds
// nothing to the repository, no standby, no replica reading it. Compare
// it, copy from it (pg_dump), then stop it (make topology-down does).
// make topology-restore runs it.
func (t *Topology) RestoreTo(ctx context.Context, target string) (Restored, error) {
	start := time.Now()
	r := Restored{Target: target, URL: restoreCluster.url()}
	if err := t.stopCluster(restoreCluster, true); err != nil {
		return r, err
	}
	if err := os.RemoveAll(t.path(restoreCluster.dir())); err != nil {
		return r, err
	}
	if err := ownedDir(t.path(restoreCluster.dir())); err != nil {
		return r, err
	}
	if err := t.pgbackrest(ctx, "--pg1-path="+t.dataDir(restoreCluster), "--type=time", "--target="+target,
		"--target-action=promote", "restore"); err != nil {
		return r, err
	}
	if err := t.startCluster(restoreCluster, "-c archive_mode=off"); err != nil {
		return r, fmt.Errorf("starting the restored cluster: %w (see %s)", err, t.path(restoreCluster.dir(), "postgres.log"))
	}
	if err := waitPromoted(ctx, r.URL); err != nil {
		return r, err
	}
	r.Took = time.Since(start)
	return r, nil
}

// waitPromoted waits until the cluster at dsn has finished its recovery
// and takes writes.
func waitPromoted(ctx context.Context, dsn string) error {
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	var recovering bool
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err = db.QueryRowContext(ctx, `SELECT pg_is_in_recovery()`).Scan(&recovering); err == nil && !recovering {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return fmt.Errorf("the restored cluster is still recovering after 5 minutes (%v)", err)
}
