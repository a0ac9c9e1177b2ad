package topology

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// primaryFile names the cluster that is the primary now (its port): the
// first until a failover or a switchover.
const primaryFile = "primary"

// primary is the cluster that is the primary now.
func (t *Topology) primary() cluster {
	b, err := os.ReadFile(t.path(primaryFile))
	if err != nil {
		return firstCluster
	}
	if port, _ := strconv.Atoi(strings.TrimSpace(string(b))); cluster(port) == secondCluster {
		return secondCluster
	}
	return firstCluster
}

// standby is the cluster that is not the primary: the standby, when one
// runs there.
func (t *Topology) standby() cluster { return t.primary().other() }

// setPrimary records c as the primary, and points pgBackRest's backups
// at it.
func (t *Topology) setPrimary(c cluster) error {
	if err := os.WriteFile(t.path(primaryFile), []byte(strconv.Itoa(c.port())+"\n"), 0o644); err != nil {
		return err
	}
	return t.writePgBackRestConfig()
}

// PrimaryNowURL and StandbyNowURL reach the cluster that is the primary
// now and the other one.
func (t *Topology) PrimaryNowURL() string { return t.primary().url() }
func (t *Topology) StandbyNowURL() string { return t.standby().url() }

// Failedover is what Failover did, and when.
type Failedover struct {
	From, To   string    // the old primary and the promoted standby
	Promoted   time.Time // the standby takes writes
	Repointed  time.Time // PgBouncer sends the pools to it
	Took       time.Duration
	FencedNote string // how the old primary was fenced
}

func (f Failedover) String() string {
	return fmt.Sprintf("%s fenced (%s); %s promoted and PgBouncer repointed at it in %.1f s", f.From, f.FencedNote, f.To, f.Took.Seconds())
}

// Failover makes the standby the primary when the primary is lost:
// it fences the old primary (stopped at once if it still runs, and left
// with a standby.signal, so that a start by anyone brings it up read-only
// and cut off instead of taking writes nobody replicates), promotes the
// standby (pg_ctl promote, run as PostgreSQL's user), and repoints
// PgBouncer's both databases at it. The replicas need nothing: their
// writes go through PgBouncer. make topology-failover runs it.
func (t *Topology) Failover(ctx context.Context) (Failedover, error) {
	start := time.Now()
	old, next := t.primary(), t.standby()
	f := Failedover{From: old.String(), To: next.String()}
	if err := checkStandby(ctx, old, next, false); err != nil {
		return f, err
	}
	note, err := t.fence(old)
	if err != nil {
		return f, fmt.Errorf("fencing %v: %w", old, err)
	}
	f.FencedNote = note
	err = t.promote(&f, next)
	f.Took = time.Since(start)
	return f, err
}

// promote promotes the standby next (pg_ctl promote, run as PostgreSQL's
// user), records it as the primary and repoints PgBouncer at it.
func (t *Topology) promote(f *Failedover, next cluster) error {
	cmd, err := t.pg("pg_ctl", "-D", t.dataDir(next), "-w", "-t", "60", "promote")
	if err != nil {
		return err
	}
	if err := run(cmd); err != nil {
		return fmt.Errorf("promoting %v: %w", next, err)
	}
	f.Promoted = time.Now()
	if err := t.setPrimary(next); err != nil {
		return err
	}
	if err := t.RepointPgBouncer(next.port()); err != nil {
		return err
	}
	f.Repointed = time.Now()
	return nil
}

// checkStandby refuses a failover or switchover to next unless it is a
// running standby, and for a switchover (streaming) one that streams from
// the primary old: the procedures stop the primary first, and must not
// leave the topology without one.
func checkStandby(ctx context.Context, old, next cluster, streaming bool) error {
	var recovering bool
	if err := queryOne(ctx, url(next.port(), "postgres"), `SELECT pg_is_in_recovery()`, &recovering); err != nil {
		return fmt.Errorf("%v does not answer (%w): no standby to promote; make topology-new-standby makes one", next, err)
	}
	if !recovering {
		return fmt.Errorf("%v is not a standby (a primary already?): nothing promoted, nothing stopped", next)
	}
	if !streaming {
		return nil
	}
	var senders int
	if err := queryOne(ctx, url(old.port(), "postgres"), `SELECT count(*) FROM pg_stat_replication r
		JOIN pg_replication_slots s ON s.active_pid = r.pid WHERE r.state = 'streaming' AND s.slot_name = $1`, &senders, standbySlot); err != nil {
		return fmt.Errorf("the primary %v does not answer (%w): fail over instead", old, err)
	}
	if senders == 0 {
		return fmt.Errorf("the standby %v does not stream from the primary %v: a switchover could lose writes; nothing stopped", next, old)
	}
	return nil
}

// queryOne scans the one row of query on the database at dsn into dest.
func queryOne(ctx context.Context, dsn, query string, dest any, args ...any) error {
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return db.QueryRowContext(ctx, query, args...).Scan(dest)
}

// fence stops cluster c at once if it runs and leaves a standby.signal in
// its data folder, and says what it did.
func (t *Topology) fence(c cluster) (string, error) {
	did := "was down"
	if _, err := os.Stat(filepath.Join(t.dataDir(c), "postmaster.pid")); err == nil {
		if err := t.stopCluster(c, true); err != nil {
			return "", err
		}
		did = "stopped (immediate)"
	}
	if err := os.WriteFile(filepath.Join(t.dataDir(c), "standby.signal"), nil, 0o600); err != nil {
		return "", err
	}
	return did + ", standby.signal written", nil
}

// NewStandbyMade is what NewStandby did.
type NewStandbyMade struct {
	Standby  string
	Copied   time.Duration // pg_basebackup and the start
	Replaced []Replaced    // each replica, repointed at it
	Took     time.Duration
}

func (n NewStandbyMade) String() string {
	return fmt.Sprintf("%s made a standby of the primary in %.1f s (pg_basebackup, slot %q); replicas reading from it: %s; %.1f s in all",
		n.Standby, n.Copied.Seconds(), standbySlot, backTimes(n.Replaced), n.Took.Seconds())
}

// NewStandby makes the cluster that is not the primary a new hot standby
// of it, from a fresh copy (whatever was there, a fenced old primary
// included, goes), and then replaces the replicas one at a time so that
// they read from it (JOBBOARD_READ_DATABASE_URL). make
// topology-new-standby runs it.
func (t *Topology) NewStandby(ctx context.Context) (NewStandbyMade, error) {
	start := time.Now()
	c := t.standby()
	n := NewStandbyMade{Standby: c.String()}
	if err := t.makeStandby(ctx, t.primary(), c); err != nil {
		return n, fmt.Errorf("new standby on %v: %w", c, err)
	}
	n.Copied = time.Since(start)
	var err error
	n.Replaced, err = t.ReplaceAll(ctx)
	n.Took = time.Since(start)
	return n, err
}

// SwitchedOver is what Switchover did.
type SwitchedOver struct {
	Failedover
	// Behind is the WAL the standby had not replayed when the old primary
	// had stopped: 0, or the switchover stops before promoting.
	Behind  int64
	Standby NewStandbyMade
}

func (s SwitchedOver) String() string {
	return fmt.Sprintf("%s stopped cleanly, the standby %d bytes behind; %s promoted and PgBouncer repointed %.1f s after the stop began; then %v",
		s.From, s.Behind, s.To, s.Took.Seconds(), s.Standby)
}

// Switchover hands the primary's role to the standby without losing a
// write: the primary is stopped cleanly (a fast shutdown sends every WAL
// record, its shutdown checkpoint included, to the standby before it
// ends), the standby is checked to have replayed all of it, promoted, and
// PgBouncer repointed; then the old primary becomes the new standby
// (NewStandby). Writes fail fast with 503 between the stop and the
// repoint. Run again, it is the failback. make topology-switchover runs it.
func (t *Topology) Switchover(ctx context.Context) (SwitchedOver, error) {
	start := time.Now()
	old, next := t.primary(), t.standby()
	s := SwitchedOver{Failedover: Failedover{From: old.String(), To: next.String(), FencedNote: "stopped cleanly"}}
	if err := checkStandby(ctx, old, next, true); err != nil {
		return s, err
	}
	if err := t.stopCluster(old, false); err != nil {
		return s, fmt.Errorf("stopping %v: %w", old, err)
	}
	behind, err := t.replayBehind(ctx, old, next)
	if err != nil {
		return s, fmt.Errorf("%w (the primary %v is stopped: start it again, or fail over)", err, old)
	}
	if s.Behind = behind; behind > 0 {
		return s, fmt.Errorf("%v has %d bytes of %v's WAL to replay after its clean stop: not promoted; start %v again, or fail over", next, behind, old, old)
	}
	if err := t.promote(&s.Failedover, next); err != nil {
		return s, err
	}
	s.Took = time.Since(start)
	if s.Standby, err = t.NewStandby(ctx); err != nil {
		return s, err
	}
	return s, nil
}

// replayBehind is how much of the stopped cluster old's WAL, up to its
// last checkpoint (a clean stop's shutdown checkpoint), the standby next
// has not replayed yet, waiting up to 10 s for it to catch up.
func (t *Topology) replayBehind(ctx context.Context, old, next cluster) (int64, error) {
	cmd, err := t.pg("pg_controldata", t.dataDir(old))
	if err != nil {
		return 0, err
	}
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("pg_controldata %v: %w", old, err)
	}
	var checkpoint string
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == "Latest checkpoint location" {
			checkpoint = strings.TrimSpace(v)
		}
	}
	if checkpoint == "" {
		return 0, errors.New("pg_controldata " + old.String() + ": no latest checkpoint location")
	}
	db, err := sql.Open("postgres", url(next.port(), "postgres"))
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var behind int64
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		// The checkpoint record ends past its start: replayed, the replay
		// position is beyond it.
		err := db.QueryRowContext(ctx, `SELECT greatest(pg_wal_lsn_diff($1::pg_lsn, pg_last_wal_replay_lsn()) + 1, 0)::bigint`,
			checkpoint).Scan(&behind)
		if err != nil || behind == 0 || time.Now().After(deadline) {
			return behind, err
		}
	}
}
