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

// bouncerSetup is a way to deploy PgBouncer in front of the service.
type bouncerSetup struct {
	name string
	opts pgbouncertest.Options
}

// bouncerSetups are the deployments measured: as docs/deploy.md runs it
// (first), then what an operator can change when PgBouncer is the limit:
// fewer server connections (fewer backends taking turns on the cores),
// and two processes sharing the port (so_reuseport), as PgBouncer uses
// one core each, with the same server connections in all.
var bouncerSetups = []bouncerSetup{
	{fmt.Sprintf("one process, pool of %d", bouncerPool), pgbouncertest.Options{PoolSize: bouncerPool}},
	{"one process, pool of 8", pgbouncertest.Options{PoolSize: 8}},
	{fmt.Sprintf("two processes (so_reuseport), pools of %d", bouncerPool/2), pgbouncertest.Options{PoolSize: bouncerPool / 2, Processes: 2}},
}

// pgbouncerScenario says what PgBouncer in transaction mode costs the job
// retrieve: the harness's server, on a direct connection (prepared hot
// reads), against a second server whose DATABASE_URL is PgBouncer (each
// query parsed and planned again, and a hop more), loaded in turn with
// scenario 2's load over the same ids; then the REST load again for each
// other deployment of bouncerSetups, in turn with the direct server. Each
// REST run also measures the cores the server, PgBouncer and PostgreSQL
// used.
func pgbouncerScenario(ctx context.Context, h *harness) ([]result, error) {
	warm, d, reps := 2*time.Second, 10*time.Second, 3
	if h.opts.quick {
		warm, d, reps = time.Second, 3*time.Second, 1
	}
	if _, err := pgbouncertest.Binary(); err != nil {
		return []result{{name: "GET job by id through PgBouncer", note: "not measured: " + err.Error()}}, nil
	}
	a := h.accounts[0]
	ids, err := activeJobIDs(ctx, h, a)
	if err != nil {
		return nil, err
	}
	rand.New(rand.NewPCG(2, 2)).Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	label := fmt.Sprintf("%d connections, %.0f s", retrieveConns, d.Seconds())
	restName := "GET jobs.json/{id}: REST (h2load, HTTP/1.1)"
	var rows []result
	for i, setup := range bouncerSetups {
		pooled, stop, err := h.startPooledServer(ctx, setup.opts)
		if err != nil {
			return nil, err
		}
		servers := []*process{h.server, pooled.process}
		groups := [2][]processGroup{h.serverGroups(h.server, nil), h.serverGroups(pooled.process, pooled.bouncer)}
		var targets [2]grpcTarget
		for k, p := range servers {
			if err := checkJobAnswer(ctx, newHTTPTarget(p.httpBase, a.APIKey, 1), "/api/v2.0/jobs.json/", ids[0]); err != nil {
				stop()
				return nil, fmt.Errorf("%s: %w", p.name, err)
			}
			if i == 0 {
				if targets[k], err = checkGetJob(ctx, p.grpcAddr, a.APIKey, ids[0]); err != nil {
					stop()
					return nil, fmt.Errorf("%s: %w", p.name, err)
				}
			}
		}
		var rest, grpc [2][]loadResult
		var shares [2][]map[string]float64
		for range reps {
			for k, p := range servers {
				var r loadResult
				share, err := cpuShares(groups[k], func() (err error) {
					r, _, err = restIDLoad(ctx, h, p.name+"-rest", p.httpBase, "/api/v2.0/jobs.json/", a.APIKey, ids, retrieveConns, warm, d)
					return err
				})
				if err != nil {
					stop()
					return nil, err
				}
				rest[k], shares[k] = append(rest[k], r), append(shares[k], share)
				if i > 0 {
					continue // the gRPC pair is the first deployment's
				}
				g, _, err := grpcIDLoad(ctx, h, p.name+"-grpc", targets[k], retrieveConns, warm, d)
				if err != nil {
					stop()
					return nil, err
				}
				grpc[k] = append(grpc[k], g)
			}
		}
		modes := fmt.Sprintf(" Statements: %s directly, %s through PgBouncer (the servers' start lines).",
			statementMode(h.server), statementMode(pooled.process))
		stop()
		pair := pairRows(restName, label, setup.name, rest, nil)
		pair[0].note += sharesNote(groups[0], shares[0])
		pair[1].note += sharesNote(groups[1], shares[1]) + modes
		if i > 0 {
			// The direct runs of this pair are its row's floor column.
			rows = append(rows, pair[1])
			continue
		}
		rows = append(rows, pair...)
		grpcRows := pairRows("JobService/GetJob: gRPC (h2load, HTTP/2, one job)", label, setup.name, grpc, nil)
		grpcRows[1].note += modes
		rows = append(rows, grpcRows...)
	}
	return rows, nil
}

// pooledServer is a server whose database connection goes through
// PgBouncer, and PgBouncer's processes.
type pooledServer struct {
	process *process
	bouncer []int
}

// serverGroups are the processes whose cores a load of p counts: the
// server, PgBouncer's (bouncer, none for a direct server) and PostgreSQL's.
func (h *harness) serverGroups(p *process, bouncer []int) []processGroup {
	postmaster := postmasterPID(filepath.Join(h.dir, "pg", "data"))
	return []processGroup{
		{"server", func() []int { return []int{p.cmd.Process.Pid} }},
		{"PgBouncer", func() []int { return bouncer }},
		{"PostgreSQL", func() []int { return withChildren(postmaster) }},
	}
}

// startPooledServer runs PgBouncer in transaction mode in front of the
// harness's database, as opts says, and a second server whose
// DATABASE_URL goes through it, as docs/deploy.md 3 runs it; stop ends
// both.
func (h *harness) startPooledServer(ctx context.Context, opts pgbouncertest.Options) (pooledServer, func(), error) {
	dir := filepath.Join(h.dir, "pgbouncer")
	// PgBouncer runs as PostgreSQL's user, which must reach its folder.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return pooledServer{}, nil, err
	}
	b, stopBouncer, err := pgbouncertest.Run(dir, h.dbURL, opts)
	if err != nil {
		return pooledServer{}, nil, err
	}
	p, err := h.startServer(ctx, "server-pgbouncer", "DATABASE_URL="+b.URL(), "JOBBOARD_DATABASE_DIRECT_URL="+h.dbURL)
	if err != nil {
		stopBouncer()
		return pooledServer{}, nil, err
	}
	return pooledServer{process: p, bouncer: b.PIDs()}, func() { p.stop(); stopBouncer() }, nil
}

// pairRows are the direct run's row and the PgBouncer run's, with its
// ratio to the direct one; each is the run of median throughput.
func pairRows(name, label, setup string, runs [2][]loadResult, err error) []result {
	direct := result{name: name + ", direct connection, " + label}
	pooled := result{name: name + ", through PgBouncer (transaction mode, " + setup + "), " + label}
	if len(runs[0]) == 0 || len(runs[1]) == 0 {
		direct.note, pooled.note = "not measured", "not measured"
		if err != nil {
			direct.note += ": " + err.Error()
			pooled.note = direct.note
		}
		return []result{direct, pooled}
	}
	againstMedian(&direct, &pooled, runs)
	pooled.note = "PgBouncer 1.18, " + setup + "; the floor column is the direct runs' and the ratio is " +
		"this row's throughput over it, from runs interleaved in one bench run. " + pooled.note
	return []result{direct, pooled}
}

// againstMedian fills base's row and row's from the runs of median
// throughput of runs[0] and runs[1], with row's ratio to base.
func againstMedian(base, row *result, runs [2][]loadResult) {
	for i, r := range []*result{base, row} {
		med, all := medianLoad(runs[i])
		r.median, r.p99, r.throughput = med.latency.median, med.latency.p99, med.throughput()
		r.note = loadNote(med) + all
	}
	row.floor = fmt.Sprintf("%.0f/s", base.throughput)
	if base.throughput > 0 {
		row.ratio = row.throughput / base.throughput
	}
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
