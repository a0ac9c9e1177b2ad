package topology

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// killReplica: the replica running a 10,000-job import is lost with its
// host under the load: its supervisor is killed, then the replica itself
// with SIGKILL, so nothing starts it again until the scenario does (the
// host is back). Only requests in flight on it fail; HAProxy stops sending
// to it within a time measured here; the import is taken over by another
// replica (JOBBOARD_IMPORT_RESCUE_AFTER, 15 s here) and completed once;
// JobboardReplicaDown fires, and resolves once the replica is back.
//
// A killed process is not gone when the signal is sent: the kernel frees
// its memory (an import's heap) before it closes its sockets, and until
// then it accepts connections and requests that it will never answer. So
// the kill lasts from the signal to the moment its ports refuse
// connections, and a request begun in that span was in flight on it.
func killReplica(t *testing.T, top *Topology, l *load, recv *receiver, acct account) {
	var id string
	var victim int
	var killing, gone time.Time
	var detect time.Duration
	var downAlert *alertWatch
	s := underLoad(t, l, 2*time.Minute, 5*time.Second, func() {
		if id, victim = startImport(t, top, l, recv, acct); victim == 0 {
			return
		}
		err := top.LoseReplicaHost(victim)
		if err != nil {
			t.Error(err)
			victim = 0 // not killed: its supervisor would start it again
			return
		}
		if killing, err = top.KillReplica(victim); err != nil {
			t.Error(err)
		}
		// The replica-down alert fires in the topology's Prometheus (its
		// for is 30 s) and resolves once the replica is back.
		downAlert = watchAlert("JobboardReplicaDown", map[string]string{"instance": addr(metricsBase + victim)}, 2*time.Minute)
		if gone, err = awaitRefused([]int{RESTPort + victim, GRPCPort + victim}, 10*time.Second); err != nil {
			t.Error(err)
		}
		detect = awaitDown(ReplicaName(victim), 10*time.Second)
	})
	if victim == 0 {
		t.FailNow()
	}
	inFlight := failedAround(l.rec.snapshot(), killing, gone)
	lost, twice := recv.awaitCallbacks([]string{id}, 2*time.Minute)
	completedBy := importCompletedBy(top, id)
	recv.mu.Lock()
	added := recv.added[id]
	recv.mu.Unlock()
	t.Logf("figures: kill -9: replica %d killed while running a 10,000-job import; its ports refused connections %v after the signal; HAProxy marked it DOWN in REST and gRPC %v after that; under the load: %v; %d failed requests were in flight at the kill; the import was completed by replica %d (%d added) %.1f s after the kill, %d lost, %d called back twice",
		victim, gone.Sub(killing).Round(time.Microsecond), detect.Round(time.Millisecond), s, inFlight, completedBy, added, recv.lastAt(id).Sub(gone).Seconds(), lost, twice)
	stored := countJobs(acct, "K%")
	t.Logf("figures: kill -9: %d of the import's 10,000 jobs stored, each once", stored)
	if lost > 0 || twice > 0 || added != 10000 || stored != 10000 || completedBy == victim || completedBy == 0 {
		t.Errorf("want the import completed once by another replica")
	}
	if s.failed > inFlight {
		t.Errorf("%d failures, %d of them in flight at the kill: want only those; %s",
			s.failed, inFlight, failuresAgainst(l.rec.snapshot(), killing, gone))
	}
	fired, err := downAlert.firedAt()
	if err != nil {
		t.Error(err)
	}
	restartKilled(t, top, victim)
	restarted := time.Now()
	resolved, err := awaitAlert("JobboardReplicaDown", map[string]string{"instance": addr(metricsBase + victim)}, false, time.Minute)
	if err != nil {
		t.Error(err)
	}
	t.Logf("figures: kill -9: JobboardReplicaDown fired in Prometheus %.1f s after the kill (for: 30 s, scrapes every %v); resolved %.1f s after the restarted replica was ready",
		fired.Sub(killing).Seconds(), ScrapeEvery, resolved.Sub(restarted).Seconds())
}

// crashedReplica: a replica killed with SIGKILL under the load, its
// supervisor alive, is started again by it. Only requests in flight on it
// fail, every import is called back once, and JobboardReplicaDown, whose
// for (30 s) is longer than the restart takes, does not fire: a crash that
// heals itself pages nobody (its supervisor's log keeps it).
func crashedReplica(t *testing.T, top *Topology, l *load, recv *receiver) {
	const victim = 2
	labels := map[string]string{"instance": addr(metricsBase + victim)}
	var killing, gone, ready, back time.Time
	var downAlert *alertWatch
	s := underLoad(t, l, 90*time.Second, 5*time.Second, func() {
		var err error
		if killing, err = top.KillReplica(victim); err != nil {
			t.Error(err)
			return
		}
		downAlert = watchAlert("JobboardReplicaDown", labels, 45*time.Second)
		if gone, err = awaitRefused([]int{RESTPort + victim, GRPCPort + victim}, 10*time.Second); err != nil {
			t.Error(err)
		}
		if err := WaitReady(ReplicaRESTURL(victim), 30*time.Second); err != nil {
			t.Errorf("%s not started again by its supervisor: %v", ReplicaName(victim), err)
		}
		ready = time.Now()
		if err := top.WaitHealthy(context.Background(), 30*time.Second); err != nil {
			t.Error(err)
		}
		back = time.Now()
	})
	if killing.IsZero() {
		t.FailNow()
	}
	inFlight := failedAround(l.rec.snapshot(), killing, gone)
	lost, twice := recv.awaitCallbacks(l.importIDs(), time.Minute)
	crashes, err := top.ReplicaCrashes(victim)
	if err != nil {
		t.Error(err)
	}
	crashes = crashesSince(crashes, killing)
	_, notFired := downAlert.firedAt()
	// Not fired must mean not seen firing, not that Prometheus was out of reach.
	if _, err := Alerts(context.Background()); err != nil {
		t.Errorf("Prometheus: %v", err)
	}
	t.Logf("figures: a crashed replica: replica %d killed; its ports refused connections %v after the signal; ready again %.1f s after the kill and back in HAProxy %.1f s after it, started by its supervisor (%d crash logged: %+v); under the load: %v; %d failed requests were in flight at the kill; imports: %d lost, %d called back twice; JobboardReplicaDown fired: %v",
		victim, gone.Sub(killing).Round(time.Microsecond), ready.Sub(killing).Seconds(), back.Sub(killing).Seconds(), len(crashes), crashes, s, inFlight, lost, twice, notFired == nil)
	if len(crashes) != 1 || crashes[0].Exit != "137" || crashes[0].Restarted.IsZero() {
		t.Errorf("supervisor's log: crashes %+v, want one, exit 137 (SIGKILL), followed by a start", crashes)
	}
	if s.failed > inFlight {
		t.Errorf("%d failures, %d of them in flight at the kill: want only those; %s",
			s.failed, inFlight, failuresAgainst(l.rec.snapshot(), killing, gone))
	}
	if lost > 0 || twice > 0 {
		t.Errorf("imports: %d lost, %d called back twice", lost, twice)
	}
	if notFired == nil {
		t.Errorf("JobboardReplicaDown fired for a replica its supervisor started again within its for")
	}
}

// startImport queues a 10,000-job import and finds the replica running it.
func startImport(t *testing.T, top *Topology, l *load, recv *receiver, acct account) (string, int) {
	clients := top.queueClients()
	body := fmt.Sprintf(`{"jobs":%s,"callbackUrl":%q}`, uniqueJobsJSON("K", 10000), recv.URL+"/hook")
	answer, ok := l.rest("import", acct, "POST", "/api/v2.0/job-imports", body)
	if !ok {
		t.Errorf("the import was refused: %s", answer)
		return "", 0
	}
	id := importID(answer)
	db, err := sql.Open("postgres", PrimaryURL())
	if err != nil {
		t.Error(err)
		return id, 0
	}
	defer db.Close()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if victim := replicaOfImport(db, clients, id, "running"); victim != 0 {
			return id, victim
		}
	}
	t.Errorf("import %s never seen running", id)
	return id, 0
}

func restartKilled(t *testing.T, top *Topology, i int) {
	if err := top.RestartReplica(i); err != nil {
		t.Fatal(err)
	}
	if err := top.WaitReplicaReady(i, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := top.WaitHealthy(context.Background(), time.Minute); err != nil {
		t.Fatal(err)
	}
}

// awaitRefused waits until every one of ports refuses connections and
// says when that was.
func awaitRefused(ports []int, limit time.Duration) (time.Time, error) {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if !slices.ContainsFunc(ports, listening) {
			return time.Now(), nil
		}
	}
	return time.Time{}, fmt.Errorf("ports %v still accept connections %v after the kill", ports, limit)
}

// awaitDown waits until HAProxy counts server name DOWN in both pools and
// says how long that took.
func awaitDown(name string, limit time.Duration) time.Duration {
	start := time.Now()
	for time.Since(start) < limit {
		states, err := ServerStates()
		if err == nil && strings.HasPrefix(states["rest/"+name], "DOWN") && strings.HasPrefix(states["grpc/"+name], "DOWN") {
			return time.Since(start)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return limit
}

// failedAround counts the failed requests that were under way at the kill.
func failedAround(outs []outcome, killing, gone time.Time) int {
	n := 0
	for _, o := range outs {
		// In flight at the kill: begun before the replica was gone, not
		// over before the signal was about to be sent. A request that
		// failed within the two instants was in flight at the kill, even
		// when the load's goroutine saw the failure before the killing
		// one could note the time.
		if !o.ok && o.start.Before(gone) && o.start.Add(o.took).After(killing) {
			n++
		}
	}
	return n
}

// failuresAgainst places each failure in time against the kill (signal
// about to be sent at killing, the replica's ports refusing at gone), for
// a failure the test did not expect.
func failuresAgainst(outs []outcome, killing, gone time.Time) string {
	var b strings.Builder
	b.WriteString("each failure's start and end from the signal about to be sent (ports refused after ")
	b.WriteString(gone.Sub(killing).Round(time.Microsecond).String() + "):")
	for _, o := range outs {
		if !o.ok {
			fmt.Fprintf(&b, " [%s %s %s: %v to %v]", o.op, o.status, o.reason,
				o.start.Sub(killing).Round(time.Microsecond), o.start.Add(o.took).Sub(killing).Round(time.Microsecond))
		}
	}
	return b.String()
}

// description makes each job of the large import 1.5 KB, so that the
// import (15 MB) runs long enough on one replica to be killed part-way.
var description = strings.Repeat("Linehaul, home weekly, no touch freight. ", 37)

func uniqueJobsJSON(prefix string, n int) string {
	jobs := make([]string, n)
	for i := range jobs {
		jobs[i] = fmt.Sprintf(`{"referenceNumber":"%s%d","title":"Linehaul Driver","state":"TX","driverType":"Company Driver","freightType":"Dry Van","description":"<p>%s</p>"}`, prefix, i, description)
	}
	return "[" + strings.Join(jobs, ",") + "]"
}

func importID(answer []byte) string {
	_, rest, _ := strings.Cut(string(answer), `"id":"`)
	id, _, _ := strings.Cut(rest, `"`)
	return id
}

// restartPgBouncer: PgBouncer stops (SIGTERM, all its connections cut)
// for 3 s under the load and starts again. The replicas recover by
// themselves; the failures are fast 503s, counted.
func restartPgBouncer(t *testing.T, top *Topology, l *load) {
	var stoppedAt, firedAt, startedAt time.Time
	s := underLoad(t, l, 2*time.Minute, 5*time.Second, func() {
		stoppedAt = time.Now()
		if err := top.StopPgBouncer(); err != nil {
			t.Error(err)
		}
		// Down until the database alert fires in the topology's Prometheus
		// (its for is 15 s), so the scenario shows it.
		var err error
		if firedAt, err = awaitAlert("JobboardDatabaseDown", nil, true, time.Minute); err != nil {
			t.Error(err)
		}
		if err := top.StartPgBouncer(); err != nil {
			t.Error(err)
		}
		startedAt = time.Now()
	})
	resolvedAt, err := awaitAlert("JobboardDatabaseDown", nil, false, time.Minute)
	if err != nil {
		t.Error(err)
	}
	f := failuresAfter(l.rec.snapshot(), stoppedAt)
	t.Logf("figures: PgBouncer restart: stopped %.1f s under the load, until JobboardDatabaseDown fired in Prometheus (%.1f s after the stop; for: 15 s); resolved %.1f s after PgBouncer was back: %v; slowest failure %v; %d lists cut mid-answer (200 sent, then the connection lost), %d failures neither 503/Unavailable nor cut; the last failure %.1f s after PgBouncer was back",
		startedAt.Sub(stoppedAt).Seconds(), firedAt.Sub(stoppedAt).Seconds(), resolvedAt.Sub(startedAt).Seconds(),
		s, f.slowest.Round(time.Millisecond), f.cut, f.other, f.last.Sub(startedAt).Seconds())
	if f.other > 0 || f.last.Sub(startedAt) > 15*time.Second {
		t.Errorf("want only 503s (or lists cut once streaming) and a recovery without help")
	}
}

// failureKinds sorts a fault's failures: 503 or gRPC Unavailable, lists
// cut mid-answer (a streamed list has sent its 200 before it fails), and
// any other; with the slowest failure and when the last one ended.
type failureKinds struct {
	cut, other int
	slowest    time.Duration
	last       time.Time
}

func failuresAfter(outs []outcome, since time.Time) failureKinds {
	f := failureKinds{last: since}
	for _, o := range outs {
		if o.ok {
			continue
		}
		f.slowest = max(f.slowest, o.took)
		if end := o.start.Add(o.took); end.After(f.last) {
			f.last = end
		}
		switch {
		case o.status == "503" || o.status == "Unavailable":
		case o.status == "200":
			f.cut++
		default:
			f.other++
		}
	}
	return f
}

// marker posts one job with a new reference every 20 ms and remembers
// those acknowledged, to tell after a failover which were lost.
type marker struct {
	mu    sync.Mutex
	acks  []ack
	first time.Time // first acknowledged write after since
	since time.Time
}

type ack struct {
	ref string
	at  time.Time
}

func (m *marker) run(ctx context.Context, l *load, acct account) {
	for n := 0; ctx.Err() == nil; n++ {
		ref := fmt.Sprintf("M%d", n)
		body := `[{"referenceNumber":"` + ref + `","title":"Marker","state":"OH","driverType":"Company Driver","freightType":"Dry Van","description":"<p>RPO marker.</p>"}]`
		// Acknowledged: answered 2xx with the job added.
		if answer, ok := l.rest("marker post", acct, http.MethodPost, "/api/v2.0/jobs.json", body); ok && strings.Contains(string(answer), `"added":1`) {
			m.mu.Lock()
			m.acks = append(m.acks, ack{ref, time.Now()})
			if !m.since.IsZero() && m.first.IsZero() {
				m.first = time.Now()
			}
			m.mu.Unlock()
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// replicationStall is how long the primary's WAL sender is stopped just
// before the crash: on loopback the standby is never behind, so without
// it a failover shows nothing of what asynchronous replication can lose.
const replicationStall = 2 * time.Second

// failover is what a primary-lost scenario did, and when.
type failover struct {
	stalledAt, crashAt, repointedAt time.Time
	// crashedAt is when the crash ended: pg_ctl takes some milliseconds,
	// and the primary acknowledges writes until its backends are gone.
	crashedAt   time.Time
	replication string // the standby's state at the crash
}

// loseThePrimary: the primary's WAL sender is stalled for 2 s (a partition
// between primary and standby), then the primary crashes under the load
// (pg_ctl stop -m immediate); 5 s later the standby is promoted and
// PgBouncer repointed at it. Reads of the drivers list, served by the
// standby, answer during the outage; writes resume; the acknowledged
// writes missing afterwards are the RPO: those of the stall with
// asynchronous replication, none with synchronous (commits wait instead).
func loseThePrimary(t *testing.T, top *Topology, l *load, acct account, synchronous bool) {
	m := &marker{}
	mctx, stopMarker := context.WithCancel(context.Background())
	markerDone := make(chan struct{})
	go func() { m.run(mctx, l, acct); close(markerDone) }()
	var f failover
	s := underLoad(t, l, 2*time.Minute, 10*time.Second, func() { f = failOver(t, top, m) })
	stopMarker()
	<-markerDone
	acked := m.ackedBefore(f.repointedAt)
	lost, err := missingMarkers(top.PrimaryNowURL(), acct, acked)
	if err != nil {
		t.Fatal(err)
	}
	readsOK, readsFailed := opsBetween(l.rec.snapshot(), "list drivers", f.crashAt, f.repointedAt)
	mode := map[bool]string{false: "asynchronous", true: "synchronous"}[synchronous]
	t.Logf("figures: primary lost (%s replication): WAL sender stalled %v, then the primary crashed under the load (standby %s), standby promoted and PgBouncer repointed %.1f s after the crash; writes succeeded again %.1f s after the repoint (%.1f s after the crash); %d writes acknowledged by the old primary, %d of them between the stall and the crash's end; lost (RPO): %s; drivers-list reads during the outage: %d answered, %d failed; under the load: %v",
		mode, replicationStall, f.replication, f.repointedAt.Sub(f.crashAt).Seconds(), m.firstWrite().Sub(f.repointedAt).Seconds(), m.firstWrite().Sub(f.crashAt).Seconds(),
		len(acked), len(m.ackedBetween(f.stalledAt, f.crashedAt)), lostWindow(lost, f), readsOK, readsFailed, s)
	if m.firstWrite().IsZero() {
		t.Errorf("writes never resumed")
	}
	checkLost(t, lost, f, synchronous)
	// The standby serves the drivers list and, while the primary is down,
	// checks its API keys: only the lists caught by the crash itself may
	// fail (those waiting in PgBouncer for the primary up to the service's
	// 1 s bound on a key lookup are answered late, not lost).
	if readsOK <= readsFailed {
		t.Errorf("drivers lists during the outage: %d answered, %d failed; want most to answer", readsOK, readsFailed)
	}
}

// failOver stalls the primary's WAL sender, crashes the primary, fails
// over 5 s later as make topology-failover does (fences the old primary,
// promotes the standby, repoints PgBouncer), and waits until the marker's
// writes succeed again.
func failOver(t *testing.T, top *Topology, m *marker) failover {
	var f failover
	sender, err := top.StallReplication(context.Background())
	if err != nil {
		t.Error(err)
	}
	f.stalledAt = time.Now()
	time.Sleep(replicationStall)
	f.replication = replicationState()
	f.crashAt = time.Now()
	if err := top.CrashPrimaryStalled(sender); err != nil {
		t.Error(err)
	}
	f.crashedAt = time.Now()
	time.Sleep(5 * time.Second)
	fo, err := top.Failover(context.Background())
	if err != nil {
		t.Error(err)
	}
	t.Logf("failover (make topology-failover): %v", fo)
	f.repointedAt = time.Now()
	m.mu.Lock()
	m.since = f.repointedAt
	m.mu.Unlock()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline) && m.firstWrite().IsZero(); {
		time.Sleep(50 * time.Millisecond)
	}
	return f
}

// checkLost: with synchronous replication no acknowledged write is lost.
// With asynchronous replication the stall must cost some, and only those
// the old primary acknowledged from shortly before the stall (WAL written
// but not yet sent when the sender stopped) until the crash ended.
func checkLost(t *testing.T, lost []ack, f failover, synchronous bool) {
	if synchronous {
		if len(lost) > 0 {
			t.Errorf("%d acknowledged writes lost with synchronous replication: want 0", len(lost))
		}
		return
	}
	if len(lost) == 0 {
		t.Errorf("no acknowledged write lost after a %v stall of asynchronous replication: the stall did not hold the standby back", replicationStall)
	}
	for _, a := range lost {
		if a.at.Before(f.stalledAt.Add(-time.Second)) || a.at.After(f.crashedAt) {
			t.Errorf("lost %s, acknowledged %v after the stall began: outside the stall", a.ref, a.at.Sub(f.stalledAt))
		}
	}
}

// lostWindow describes the lost writes: how many, and the time their
// acknowledgements span, counted from the start of the stall, beside
// the crash's start and end.
func lostWindow(lost []ack, f failover) string {
	if len(lost) == 0 {
		return "0 writes"
	}
	first, last := lost[0].at, lost[0].at
	for _, a := range lost {
		first, last = minTime(first, a.at), maxTime(last, a.at)
	}
	since := func(at time.Time) float64 { return at.Sub(f.stalledAt).Seconds() }
	return fmt.Sprintf("%d writes, acknowledged over %.2f s, from %.2f s to %.2f s after the stall began (the crash began at %.2f s and ended at %.2f s)",
		len(lost), last.Sub(first).Seconds(), since(first), since(last), since(f.crashAt), since(f.crashedAt))
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func (m *marker) firstWrite() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.first
}

// ackedBefore is every marker acknowledged before at: before the repoint,
// those the old primary acknowledged.
func (m *marker) ackedBefore(at time.Time) []ack {
	return m.ackedBetween(time.Time{}, at)
}

// ackedBetween is every marker acknowledged from from until to.
func (m *marker) ackedBetween(from, to time.Time) []ack {
	m.mu.Lock()
	defer m.mu.Unlock()
	var acks []ack
	for _, a := range m.acks {
		if !a.at.Before(from) && a.at.Before(to) {
			acks = append(acks, a)
		}
	}
	return acks
}

// missingMarkers is the acknowledged markers that the database at dsn
// (the promoted standby) does not hold: read from it, not inferred from
// the times.
func missingMarkers(dsn string, acct account, acked []ack) ([]ack, error) {
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	have := map[string]bool{}
	rows, err := db.Query(`SELECT reference_number FROM jobs WHERE account_id = $1 AND reference_number LIKE 'M%'`, acct.ID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var ref string
		if err := rows.Scan(&ref); err != nil {
			return nil, err
		}
		have[ref] = true
	}
	var missing []ack
	for _, a := range acked {
		if !have[a.ref] {
			missing = append(missing, a)
		}
	}
	return missing, rows.Err()
}

// opsBetween counts the requests of op started between from and to that
// succeeded and failed.
func opsBetween(outs []outcome, op string, from, to time.Time) (ok, failed int) {
	for _, o := range outs {
		if o.op != op || o.start.Before(from) || o.start.After(to) {
			continue
		}
		if o.ok {
			ok++
		} else {
			failed++
		}
	}
	return ok, failed
}

// replicationState is the standby's state as the primary sees it.
func replicationState() string {
	db, err := sql.Open("postgres", url(PrimaryPort, "postgres"))
	if err != nil {
		return err.Error()
	}
	defer db.Close()
	var state, sync string
	var lag sql.NullFloat64
	err = db.QueryRow(`SELECT state, sync_state, pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)
		FROM pg_stat_replication LIMIT 1`).Scan(&state, &sync, &lag)
	if err != nil {
		return "not replicating: " + err.Error()
	}
	return fmt.Sprintf("%s, %s, %.0f bytes of WAL behind", state, sync, lag.Float64)
}

// countJobs counts the account's jobs whose reference is LIKE pattern (the
// reference is unique per account, so a job stored twice cannot hide).
func countJobs(acct account, pattern string) int {
	db, err := sql.Open("postgres", PrimaryURL())
	if err != nil {
		return -1
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM jobs WHERE account_id = $1 AND reference_number LIKE $2`, acct.ID, pattern).Scan(&n); err != nil {
		return -1
	}
	return n
}

func importCompletedBy(top *Topology, id string) int {
	db, err := sql.Open("postgres", PrimaryURL())
	if err != nil {
		return 0
	}
	defer db.Close()
	return replicaOfImport(db, top.queueClients(), id, "completed")
}

// killedDaemons: HAProxy, Prometheus, Jaeger and an exporter, each killed
// with SIGKILL in turn, are started again by their supervisors: each
// port refuses connections, then listens again, the supervisor's log
// holds the exit (137) and the start after it, and afterwards HAProxy
// counts every replica healthy and Prometheus scrapes every target.
func killedDaemons(t *testing.T, top *Topology) {
	for _, d := range []struct {
		s    supervised
		port int
	}{
		{top.haproxy(), RESTPort},
		{top.prometheus(), PrometheusPort},
		{top.jaeger(""), JaegerOTLPPort},
		{top.supervisedExporter(top.exporters()[0]), postgresExporterBase},
	} {
		killed, err := killSupervised(d.s)
		if err != nil {
			t.Fatalf("%s: %v", d.s.name, err)
		}
		gone, err := awaitRefused([]int{d.port}, 10*time.Second)
		if err != nil {
			t.Errorf("%s: %v", d.s.name, err)
		}
		if err := waitListening(d.port, 30*time.Second); err != nil {
			t.Errorf("%s not started again by its supervisor: %v", d.s.name, err)
		}
		back := time.Now()
		all, err := crashes(d.s.dir, d.s.name)
		if err != nil {
			t.Error(err)
		}
		all = crashesSince(all, killed)
		t.Logf("figures: supervised daemons: %s killed; port %d refused connections %v after the signal and listened again %.1f s after it; its supervisor logged %+v",
			d.s.name, d.port, gone.Sub(killed).Round(time.Millisecond), back.Sub(killed).Seconds(), all)
		if len(all) != 1 || all[0].Exit != "137" || all[0].Restarted.IsZero() {
			t.Errorf("%s's supervisor logged %+v, want one exit 137 (SIGKILL) and a start after it", d.s.name, all)
		}
	}
	if err := top.WaitHealthy(context.Background(), time.Minute); err != nil {
		t.Error(err)
	}
	// The restarted Prometheus and exporter are scraped within a few rounds.
	time.Sleep(3 * ScrapeEvery)
	checkScraped(t)
}

// crashesSince are those of all from t on: a scenario's own.
func crashesSince(all []Crash, t time.Time) []Crash {
	return slices.DeleteFunc(all, func(c Crash) bool { return c.At.Before(t) })
}
