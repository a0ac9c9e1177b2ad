package topology

import (
	"context"
	"io"
	"maps"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// loadRate is the steady load in requests a second (JOBBOARD_TOPOLOGY_RATE
// changes it), sent by loadWorkers at most at once.
func loadRate() int {
	if n, err := strconv.Atoi(os.Getenv("JOBBOARD_TOPOLOGY_RATE")); err == nil && n > 0 {
		return n
	}
	return 100
}

const loadWorkers = 32

// underLoad sends l for d, or while fault runs beside it (started once
// the load has run warmup) and 5 s more, at most d; and sums the run up.
func underLoad(t *testing.T, l *load, d, warmup time.Duration, fault func()) summary {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if fault == nil {
			return
		}
		select {
		case <-time.After(warmup):
			fault()
		case <-ctx.Done():
		}
		select {
		case <-time.After(5 * time.Second):
			cancel()
		case <-ctx.Done():
		}
	}()
	cpu0, start := cpuTime(), time.Now()
	l.run(ctx)
	<-done
	s := summarize(l.rec.snapshot(), time.Since(start))
	t.Logf("load generator: %v CPU for %v of load (%.0f%% of one core); %d ticks skipped with every worker busy",
		(cpuTime() - cpu0).Round(time.Millisecond), time.Since(start).Round(time.Second),
		100*(cpuTime()-cpu0).Seconds()/time.Since(start).Seconds(), l.skipped.Load())
	return s
}

// TestTopology runs the scenarios in order on one topology: those that
// need a fresh one (the primary lost) bring it up again.
func TestTopology(t *testing.T) {
	top := topologyTest(t)
	// Registered before the start, so a start that fails half way stops
	// what it started.
	t.Cleanup(func() {
		if err := top.Down(); err != nil {
			t.Errorf("topology down: %v", err)
		}
	})
	freshTopology(t, top)
	// Four accounts share the load; the large import, the failover's
	// marker writes, the traced imports, the switchover's marker writes and
	// the restored jobs have one each, away from the 10,000-active-jobs
	// limit.
	accounts := createAccounts(t, top, 9)
	recv := newReceiver(t)
	newLoadT := func() *load { return newLoad(t, accounts[:4], loadRate(), loadWorkers, recv.URL+"/hook") }
	scenario := func(name string, run func(t *testing.T)) {
		t.Run(name, func(t *testing.T) {
			since := time.Now()
			t.Cleanup(func() {
				if t.Failed() {
					logReplicaErrors(t, top, since)
				}
			})
			run(t)
		})
	}

	scenario("steady", func(t *testing.T) { steadyLoad(t, newLoadT(), recv) })
	scenario("a traced import", func(t *testing.T) { tracedImport(t, accounts[6]) })
	scenario("rolling restart", func(t *testing.T) { rollingRestart(t, top, newLoadT(), recv) })
	scenario("logs rotated", func(t *testing.T) { rotatedLogs(t, top, accounts[0]) })
	scenario("backup and point-in-time restore", func(t *testing.T) { backupAndRestore(t, top, accounts[8]) })
	scenario("internal token rotated", func(t *testing.T) { internalTokenRotated(t, top, newLoadT()) })
	scenario("kill -9, restarted by its supervisor", func(t *testing.T) { crashedReplica(t, top, newLoadT(), recv) })
	scenario("kill -9, host lost", func(t *testing.T) { killReplica(t, top, newLoadT(), recv, accounts[4]) })
	scenario("supervised daemons killed", func(t *testing.T) { killedDaemons(t, top) })
	scenario("PgBouncer restart", func(t *testing.T) { restartPgBouncer(t, top, newLoadT()) })
	scenario("primary lost, asynchronous", func(t *testing.T) { loseThePrimary(t, top, newLoadT(), accounts[5], false) })
	scenario("new standby", func(t *testing.T) { newStandby(t, top, newLoadT(), recv) })
	scenario("switchover and failback", func(t *testing.T) { switchoverAndBack(t, top, newLoadT(), accounts[7]) })

	freshTopology(t, top)
	accounts = createAccounts(t, top, 6)
	if err := top.SetSynchronousStandby(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	scenario("primary lost, synchronous", func(t *testing.T) { loseThePrimary(t, top, newLoadT(), accounts[5], true) })

	// The upgrade starts from a topology of an earlier build's image
	// (make test-topology builds it: UPGRADE_FROM).
	old := os.Getenv("JOBBOARD_UPGRADE_FROM_IMAGE")
	if old == "" {
		t.Log("no JOBBOARD_UPGRADE_FROM_IMAGE: the upgrade scenario is left out")
		return
	}
	current := top.Image
	top.Image = old
	freshTopology(t, top)
	accounts = createAccounts(t, top, 4)
	scenario("upgrade", func(t *testing.T) { upgrade(t, top, newLoadT(), recv, current) })
}

// steadyLoad: 60 s of the mixed load through HAProxy, not one error, every
// import called back once; the standby's lag is sampled meanwhile.
func steadyLoad(t *testing.T, l *load, recv *receiver) {
	var lag lagSampler
	ctx, stop := context.WithCancel(context.Background())
	go lag.run(ctx)
	s := underLoad(t, l, 60*time.Second, 0, nil)
	stop()
	lost, twice := recv.awaitCallbacks(l.importIDs(), time.Minute)
	t.Logf("figures: steady load: 60 s at %d/s through HAProxy, 4 accounts: %v; %d imports, %d without a callback, %d called back twice; %v",
		l.rate, s, len(l.importIDs()), lost, twice, &lag)
	if s.failed > 0 || lost > 0 || twice > 0 {
		t.Errorf("want no failure, no lost and no doubled import")
	}
	checkReadsFromStandby(t)
	checkScraped(t)
}

// checkScraped: every target of the topology's Prometheus (the replicas,
// HAProxy, the PostgreSQL exporters) was scraped healthy.
func checkScraped(t *testing.T) {
	targets, err := Targets(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	jobs := map[string]int{}
	for _, tg := range targets {
		if tg.Health != "up" {
			t.Errorf("Prometheus target %s (%s) is %s: %s", tg.Labels["instance"], tg.Labels["job"], tg.Health, tg.LastError)
		}
		jobs[tg.Labels["job"]]++
	}
	if want := map[string]int{"jobboard": Replicas, "haproxy": 1, "postgres": 2}; !maps.Equal(jobs, want) {
		t.Errorf("Prometheus scrapes %v, want %v", jobs, want)
	}
	// A target is up when its exporter answers; pg_up says whether the
	// exporter reached its cluster.
	var answer struct {
		Result []struct {
			Value []any `json:"value"`
		} `json:"result"`
	}
	if err := prometheusGet(context.Background(), "/api/v1/query?query=min(pg_up)", &answer); err != nil {
		t.Fatal(err)
	}
	if len(answer.Result) != 1 || len(answer.Result[0].Value) != 2 || answer.Result[0].Value[1] != "1" {
		t.Errorf("min(pg_up) is %+v, want 1: an exporter does not reach its cluster", answer.Result)
	}
}

// rollingRestart: each replica in turn is replaced as make
// topology-replica does it, under the load: drained (SIGTERM) until it
// exits 0, re-created with its whole configuration, waited for until
// HAProxy has it back. Its log file holds the lines of both containers.
func rollingRestart(t *testing.T, top *Topology, l *load, recv *receiver) {
	var steps []string
	s := underLoad(t, l, 150*time.Second, 5*time.Second, func() {
		for i := 1; i <= Replicas; i++ {
			r, err := top.ReplaceReplica(context.Background(), i)
			if err != nil {
				t.Error(err)
			}
			if r.ExitCode != 0 {
				t.Errorf("replica %d exited %d", i, r.ExitCode)
			}
			steps = append(steps, strconv.Itoa(i)+": "+r.String())
			checkLogKept(t, top, i)
		}
	})
	nothingLost(t, top, l, recv, "rolling restart", steps, s)
}

// checkLogKept: replica i's log file, written by every container it has
// had, holds two starts at least and the replaced container's drain, the
// new container's start after it.
func checkLogKept(t *testing.T, top *Topology, i int) {
	t.Helper()
	file, err := os.ReadFile(top.ReplicaLogFile(i))
	if err != nil {
		t.Fatal(err)
	}
	starts, drains := strings.Count(string(file), `"msg":"serving"`), strings.Count(string(file), `"msg":"shutting down"`)
	if starts < 2 || drains < 1 {
		t.Errorf("replica %d's log %s holds %d starts and %d drains, want the replaced container's and the new one's",
			i, top.ReplicaLogFile(i), starts, drains)
	}
	if strings.LastIndex(string(file), `"msg":"serving"`) < strings.LastIndex(string(file), `"msg":"shutting down"`) {
		t.Errorf("replica %d's log %s does not end with the new container's start after the old one's drain", i, top.ReplicaLogFile(i))
	}
}

// checkReadsFromStandby: each replica's metrics say its read database is
// a standby in recovery, with a replay lag reported, that the standby's
// slot on the primary is in use, and that the replica is ready and
// reaches its database.
func checkReadsFromStandby(t *testing.T) {
	t.Helper()
	for i := 1; i <= Replicas; i++ {
		resp, err := http.Get(ReplicaMetricsURL(i))
		if err != nil {
			t.Errorf("replica %d metrics: %v", i, err)
			continue
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Errorf("replica %d metrics: %v", i, err)
			continue
		}
		lines := map[string]bool{}
		for _, l := range strings.Split(string(body), "\n") {
			lines[l] = true
		}
		for _, want := range []string{"jobboard_read_database_standby 1", "jobboard_ready 1", "jobboard_database_up 1",
			"jobboard_database_primary 1", "jobboard_key_watch_listening 1", `jobboard_replication_slot_active{slot="standby"} 1`} {
			if !lines[want] {
				t.Errorf("replica %d metrics have no line %q", i, want)
			}
		}
		if !strings.Contains(string(body), "\njobboard_read_database_replay_lag_seconds ") {
			t.Errorf("replica %d metrics have no jobboard_read_database_replay_lag_seconds", i)
		}
	}
}
