package topology

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// The scenarios run against the topology on this machine (make
// test-topology): load through HAProxy, replicas restarted and killed,
// PgBouncer restarted, the primary lost. Each logs its figures
// ("figures:"), which docs/deploy.md quotes.

func topologyTest(t *testing.T) *Topology {
	t.Helper()
	if os.Getenv("JOBBOARD_TEST_TOPOLOGY") == "" {
		t.Skip("runs against the topology: make test-topology")
	}
	image := os.Getenv("JOBBOARD_IMAGE")
	if image == "" {
		image = "localhost/jobboard:latest"
	}
	top, err := New("../../.topology", image, "../../deploy/image/containers.conf")
	if err != nil {
		t.Fatal(err)
	}
	top.Log = t.Logf
	return top
}

// freshTopology brings the topology up from an empty database: down first
// when it runs. It is left running for the next scenario; the test's
// cleanup stops it.
func freshTopology(t *testing.T, top *Topology) {
	t.Helper()
	if len(top.running()) > 0 {
		if err := top.Down(); err != nil {
			t.Fatal(err)
		}
	}
	if err := top.Up(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// createAccounts makes n accounts with the image's own admin command, as
// an operator would (through PgBouncer's session pool).
func createAccounts(t *testing.T, top *Topology, n int) []account {
	t.Helper()
	var accounts []account
	for i := range n {
		out, err := top.CreateAccount(fmt.Sprintf("Load %d", i+1))
		if err != nil {
			t.Fatal(err)
		}
		var a account
		if err := json.Unmarshal(out, &a); err != nil {
			t.Fatalf("accounts create answered %q: %v", out, err)
		}
		accounts = append(accounts, a)
	}
	return accounts
}

// receiver takes import callbacks and counts, for each import, the
// deliveries and their distinct webhook-ids.
type receiver struct {
	*httptest.Server
	mu         sync.Mutex
	deliveries map[string]int
	webhookIDs map[string]map[string]bool
	added      map[string]int
	last       map[string]time.Time
}

// lastAt is when import id's last callback arrived.
func (r *receiver) lastAt(id string) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last[id]
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{deliveries: map[string]int{}, webhookIDs: map[string]map[string]bool{}, added: map[string]int{}, last: map[string]time.Time{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var imp struct {
			Data struct {
				ID      string
				Status  string
				Results struct{ Added int }
			} `json:"data"`
		}
		_ = json.Unmarshal(body, &imp)
		r.mu.Lock()
		defer r.mu.Unlock()
		id := imp.Data.ID
		r.deliveries[id]++
		if r.webhookIDs[id] == nil {
			r.webhookIDs[id] = map[string]bool{}
		}
		r.webhookIDs[id][req.Header.Get("webhook-id")] = true
		r.added[id] = imp.Data.Results.Added
		r.last[id] = time.Now()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.Close)
	return r
}

// awaitCallbacks waits until every import in ids has had its callback,
// and says how many never did (lost) and how many had more than one
// distinct webhook-id (processed or reported twice).
func (r *receiver) awaitCallbacks(ids []string, limit time.Duration) (lost, twice int) {
	deadline := time.Now().Add(limit)
	for {
		lost, twice = 0, 0
		r.mu.Lock()
		for _, id := range ids {
			switch n := len(r.webhookIDs[id]); {
			case n == 0:
				lost++
			case n > 1:
				twice++
			}
		}
		r.mu.Unlock()
		if lost == 0 || time.Now().After(deadline) {
			return lost, twice
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// lagSampler samples the standby's replication lag on the primary.
type lagSampler struct {
	mu       sync.Mutex
	maxBytes float64
	maxDelay time.Duration
	samples  int
}

func (s *lagSampler) run(ctx context.Context) {
	db, err := sql.Open("postgres", url(PrimaryPort, "postgres"))
	if err != nil {
		return
	}
	defer db.Close()
	for ctx.Err() == nil {
		var lagBytes, lagSeconds sql.NullFloat64
		err := db.QueryRowContext(ctx, `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn),
			extract(epoch FROM replay_lag) FROM pg_stat_replication LIMIT 1`).Scan(&lagBytes, &lagSeconds)
		if err == nil {
			s.mu.Lock()
			s.samples++
			s.maxBytes = max(s.maxBytes, lagBytes.Float64)
			s.maxDelay = max(s.maxDelay, time.Duration(lagSeconds.Float64*float64(time.Second)))
			s.mu.Unlock()
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (s *lagSampler) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("replication lag under the load (%d samples, 5 a second): at most %.0f bytes of WAL, replay at most %v behind",
		s.samples, s.maxBytes, s.maxDelay.Round(time.Millisecond))
}

// queueClients maps each replica's job queue client id (River's, logged
// at start) to the replica; a restarted replica has one per start. The
// log file is read with the one rotated before it, where the start may be.
func (top *Topology) queueClients() map[string]int {
	clients := map[string]int{}
	for i := 1; i <= Replicas; i++ {
		rotated, _ := os.ReadFile(top.ReplicaLogFile(i) + ".1")
		current, _ := os.ReadFile(top.ReplicaLogFile(i))
		for _, line := range strings.Split(string(rotated)+string(current), "\n") {
			if _, rest, ok := strings.Cut(line, `"client_id":"`); ok {
				id, _, _ := strings.Cut(rest, `"`)
				clients[id] = i
			}
		}
	}
	return clients
}

// replicaOfImport is the replica whose queue last took import id in state
// (running, completed), from River's attempted_by; 0 when none.
func replicaOfImport(db *sql.DB, clients map[string]int, id, state string) int {
	var client string
	err := db.QueryRow(`SELECT attempted_by[array_length(attempted_by, 1)] FROM river_job
		WHERE kind = 'job_import' AND args->>'import_id' = $1 AND state = $2`, id, state).Scan(&client)
	if err != nil {
		return 0
	}
	return clients[client]
}

// crashAftermath is how long after PgBouncer's restart requests may still
// fail from its crash: the replicas' pools find their connections gone.
const crashAftermath = 5 * time.Second

// failedBesidesCrashes counts the failed requests of outs that no crash of
// PgBouncer explains, and describes the crashes for a scenario's figures.
// Only pgbouncer#801 is excused, and once a scenario: an exit during the
// load whose log ends with PgBouncer's assertion failure (FATAL @src/...),
// which its supervisor followed by a restart; the failures explained are
// those in flight between the crash and crashAftermath after the restart.
// Any other exit, a second crash, or one not restarted fails t.
func failedBesidesCrashes(t *testing.T, top *Topology, outs []outcome) (int, string) {
	t.Helper()
	all, err := top.PgBouncerCrashes()
	if err != nil {
		t.Fatal(err)
	}
	var crashes []Crash
	for _, c := range all {
		if len(outs) > 0 && !c.At.Before(outs[0].start) {
			crashes = append(crashes, c)
		}
	}
	switch {
	case len(crashes) == 0:
		return countFailed(outs, nil), "PgBouncer did not crash"
	case len(crashes) > 1 || crashes[0].Restarted.IsZero() || !top.pgbouncerAsserted(crashes[0].At):
		t.Errorf("PgBouncer exited during the load and was not only crashed once by pgbouncer#801 and restarted: %+v", crashes)
		return countFailed(outs, nil), "PgBouncer crashed"
	}
	c := crashes[0]
	failed := countFailed(outs, func(o outcome) bool {
		return !o.start.Add(o.took).Before(c.At) && o.start.Before(c.Restarted.Add(crashAftermath))
	})
	return failed, fmt.Sprintf("PgBouncer crashed at %s (pgbouncer#801: FATAL in its log, exit %s), restarted by its supervisor %.1f s later; %d failures in flight then",
		c.At.Format("15:04:05.000"), c.Exit, c.Restarted.Sub(c.At).Seconds(), countFailed(outs, nil)-failed)
}

// countFailed counts the failed outcomes that excused does not excuse.
func countFailed(outs []outcome, excused func(outcome) bool) int {
	n := 0
	for _, o := range outs {
		if !o.ok && (excused == nil || !excused(o)) {
			n++
		}
	}
	return n
}

// pgbouncerAsserted says whether PgBouncer's log (the rotated one too)
// has one of its assertion failures, FATAL @src/..., within the 2 s before
// at: the crash of pgbouncer#801, not an exit of another cause.
func (top *Topology) pgbouncerAsserted(at time.Time) bool {
	var text string
	for _, f := range []string{"pgbouncer.log.1", "pgbouncer.log"} {
		b, _ := os.ReadFile(top.path(pgbouncerDir, f))
		text += string(b)
	}
	for _, line := range strings.Split(text, "\n") {
		if !strings.Contains(line, " FATAL @src/") || len(line) < 27 {
			continue
		}
		logged, err := time.Parse("2006-01-02 15:04:05.000 MST", line[:27])
		if err == nil && !logged.After(at) && at.Sub(logged) < 2*time.Second {
			return true
		}
	}
	return false
}

// nothingLost waits for the callbacks of the load's imports and fails t on
// a failed request that no crash of PgBouncer explains, or on an import
// called back never or twice; it logs the scenario's figures line: what,
// did, the load's summary s and the rest.
func nothingLost(t *testing.T, top *Topology, l *load, recv *receiver, what string, did any, s summary) {
	t.Helper()
	lost, twice := recv.awaitCallbacks(l.importIDs(), time.Minute)
	failed, crashes := failedBesidesCrashes(t, top, l.rec.snapshot())
	t.Logf("figures: %s: %v; under the load: %v; %s; %d imports, %d lost, %d called back twice",
		what, did, s, crashes, len(l.importIDs()), lost, twice)
	if failed > 0 || lost > 0 || twice > 0 {
		t.Errorf("want no failed request and no lost or doubled import")
	}
}
