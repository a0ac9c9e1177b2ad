package main

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/truckjobs/jobboard/internal/pgbouncertest"
)

func init() {
	register(8, "GET one job by id, directly and through PgBouncer in transaction mode, 32 connections", pgbouncerScenario)
}

// bouncerPool is PgBouncer's server connections: as many as the service's
// own pool, so the two servers differ only by what sits between.
const bouncerPool = 20

// pgbouncerScenario says what PgBouncer in transaction mode costs the job
// retrieve: the harness's server, on a direct connection (prepared hot
// reads), against a second server whose DATABASE_URL is PgBouncer (each
// query parsed and planned again, and a hop more), loaded in turn with
// scenario 2's load over the same ids.
func pgbouncerScenario(ctx context.Context, h *harness) ([]result, error) {
	warm, d, reps := 2*time.Second, 10*time.Second, 3
	if h.opts.quick {
		warm, d, reps = time.Second, 3*time.Second, 1
	}
	if _, err := pgbouncertest.Binary(); err != nil {
		return []result{{name: "GET job by id through PgBouncer", note: "not measured: " + err.Error()}}, nil
	}
	pooled, stop, err := h.startPooledServer(ctx)
	if err != nil {
		return nil, err
	}
	defer stop()
	a := h.accounts[0]
	ids, err := activeJobIDs(ctx, h, a)
	if err != nil {
		return nil, err
	}
	rand.New(rand.NewPCG(2, 2)).Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	servers := []*process{h.server, pooled}
	var targets [2]grpcTarget
	for i, p := range servers {
		if err := checkJobAnswer(ctx, newHTTPTarget(p.httpBase, a.APIKey, 1), "/api/v2.0/jobs.json/", ids[0]); err != nil {
			return nil, fmt.Errorf("%s: %w", p.name, err)
		}
		if targets[i], err = checkGetJob(ctx, p.grpcAddr, a.APIKey, ids[0]); err != nil {
			return nil, fmt.Errorf("%s: %w", p.name, err)
		}
	}
	var rest, grpc [2][]loadResult
	for range reps {
		for i, p := range servers {
			r, _, err := restIDLoad(ctx, h, p.name+"-rest", p.httpBase, "/api/v2.0/jobs.json/", a.APIKey, ids, retrieveConns, warm, d)
			if err != nil {
				return nil, err
			}
			rest[i] = append(rest[i], r)
			g, _, err := grpcIDLoad(ctx, h, p.name+"-grpc", targets[i], retrieveConns, warm, d)
			if err != nil {
				return nil, err
			}
			grpc[i] = append(grpc[i], g)
		}
	}
	modes := fmt.Sprintf(" Statements: %s directly, %s through PgBouncer (the servers' start lines).",
		statementMode(h.server), statementMode(pooled))
	label := fmt.Sprintf("%d connections, %.0f s", retrieveConns, d.Seconds())
	rows := pairRows("GET jobs.json/{id}: REST (h2load, HTTP/1.1)", label, rest, nil)
	rows = append(rows, pairRows("JobService/GetJob: gRPC (h2load, HTTP/2, one job)", label, grpc, nil)...)
	rows[len(rows)-1].note += modes
	rows[1].note += modes
	return rows, nil
}

// startPooledServer runs PgBouncer in transaction mode in front of the
// harness's database and a second server whose DATABASE_URL goes through
// it, as docs/deploy.md 3 runs it; stop ends both.
func (h *harness) startPooledServer(ctx context.Context) (*process, func(), error) {
	dir := filepath.Join(h.dir, "pgbouncer")
	// PgBouncer runs as PostgreSQL's user, which must reach its folder.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	b, stopBouncer, err := pgbouncertest.Run(dir, h.dbURL, pgbouncertest.Options{PoolSize: bouncerPool})
	if err != nil {
		return nil, nil, err
	}
	p, err := h.startServer(ctx, "server-pgbouncer", "DATABASE_URL="+b.URL(), "JOBBOARD_DATABASE_DIRECT_URL="+h.dbURL)
	if err != nil {
		stopBouncer()
		return nil, nil, err
	}
	return p, func() { p.stop(); stopBouncer() }, nil
}

// pairRows are the direct run's row and the PgBouncer run's, with its
// ratio to the direct one; each is the run of median throughput.
func pairRows(name, label string, runs [2][]loadResult, err error) []result {
	direct := result{name: name + ", direct connection, " + label}
	pooled := result{name: name + ", through PgBouncer (transaction mode), " + label}
	if len(runs[0]) == 0 || len(runs[1]) == 0 {
		direct.note, pooled.note = "not measured", "not measured"
		if err != nil {
			direct.note += ": " + err.Error()
			pooled.note = direct.note
		}
		return []result{direct, pooled}
	}
	var med [2]loadResult
	for i, row := range []*result{&direct, &pooled} {
		var all string
		med[i], all = medianLoad(runs[i])
		row.median, row.p99, row.throughput = med[i].latency.median, med[i].latency.p99, med[i].throughput()
		row.note = loadNote(med[i]) + all
	}
	pooled.floor = fmt.Sprintf("%.0f/s", direct.throughput)
	if direct.throughput > 0 {
		pooled.ratio = pooled.throughput / direct.throughput
	}
	pooled.note = fmt.Sprintf("PgBouncer 1.18, %d server connections; the floor column is the direct row and the ratio is "+
		"this row's throughput over it, from runs interleaved in one bench run. ", bouncerPool) + pooled.note
	return []result{direct, pooled}
}

// medianLoad is the run of median throughput, and all of them as text.
func medianLoad(runs []loadResult) (loadResult, string) {
	slices.SortFunc(runs, func(x, y loadResult) int { return cmp.Compare(x.throughput(), y.throughput()) })
	var all []string
	for _, r := range runs {
		all = append(all, fmt.Sprintf("%.0f/s", r.throughput()))
	}
	return runs[len(runs)/2], fmt.Sprintf(" Throughput of the %d runs: %s.", len(runs), strings.Join(all, ", "))
}

// statementMode reads the mode the server logged at start: prepared or
// unprepared.
func statementMode(p *process) string {
	data, err := os.ReadFile(p.logs.Name())
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, `"msg":"database statements"`) {
			_, rest, _ := strings.Cut(line, `"mode":"`)
			mode, _, _ := strings.Cut(rest, `"`)
			return mode
		}
	}
	return "unknown"
}
