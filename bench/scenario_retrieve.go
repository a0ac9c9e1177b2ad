package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

func init() { register(2, "GET one job by id, 32 connections", retrieveScenario) }

// retrieveConns is the concurrency of every run of the scenario: each
// worker holds one connection and calls again as soon as it has its answer.
const retrieveConns = 32

// ghzPath is where scripts/install-tools.sh (make tools) puts the pinned ghz.
const ghzPath = ".bin/ghz"

// retrieveScenario loads the floor, the REST route and the gRPC method in
// turn with the same closed-loop load over the same shuffled job ids, and
// compares the service's throughput with the floor's.
func retrieveScenario(ctx context.Context, h *harness) ([]result, error) {
	warm, d := 2*time.Second, 20*time.Second
	if h.opts.quick {
		warm, d = 500*time.Millisecond, 3*time.Second
	}
	a := h.accounts[0]
	ids, err := activeJobIDs(ctx, h, a)
	if err != nil {
		return nil, err
	}
	// Shuffled so consecutive calls touch unrelated rows and index pages,
	// as independent clients would; the same order for every run.
	rand.New(rand.NewPCG(2, 2)).Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	label := fmt.Sprintf("%d connections, %.0f s", retrieveConns, d.Seconds())

	// Each target runs reps times, interleaved, so a slow spell of the
	// shared machine hits all three alike; each row is the run with the
	// median throughput.
	reps := 3
	if h.opts.quick {
		reps = 1
	}
	restTarget := newHTTPTarget(h.server.httpBase, a.APIKey, retrieveConns)
	if err := checkJobAnswer(ctx, restTarget, "/api/v2.0/jobs.json/", ids[0]); err != nil {
		return nil, fmt.Errorf("REST: %w", err)
	}
	type run struct {
		load loadResult
		note string
	}
	var floors, grpcFloors, rests, grpcs []run
	var grpcErr, grpcFloorErr error
	for rep := range reps {
		floorBase, floorGRPC, stopFloor, err := startFloor(ctx, h, a.ID)
		if err != nil {
			return nil, err
		}
		floorTarget := newHTTPTarget(floorBase, "", retrieveConns)
		if err := checkJobAnswer(ctx, floorTarget, "/jobs/", ids[0]); err != nil {
			stopFloor()
			return nil, fmt.Errorf("floor: %w", err)
		}
		floor, floorCPU := httpIDLoad(ctx, floorTarget, "/jobs/", ids, warm, d)
		floors = append(floors, run{floor, floorCPU})
		grpcFloor, notes, err := ghzIDLoad(ctx, h, floorGRPC, "", ids, warm, d)
		stopFloor()
		if err != nil {
			grpcFloorErr = err
		} else {
			grpcFloors = append(grpcFloors, run{grpcFloor, notes})
		}

		waitProfile := func() {}
		if rep == 0 {
			waitProfile = h.profile(ctx, "retrieve-rest", d/2)
		}
		rest, restCPU := httpIDLoad(ctx, restTarget, "/api/v2.0/jobs.json/", ids, warm, d)
		waitProfile()
		rests = append(rests, run{rest, restCPU})

		if rep == 0 {
			waitProfile = h.profile(ctx, "retrieve-grpc", d/2)
		}
		grpcRes, notes, err := ghzIDLoad(ctx, h, h.server.grpcAddr, a.APIKey, ids, warm, d)
		waitProfile()
		if err != nil {
			grpcErr = err
			continue
		}
		grpcs = append(grpcs, run{grpcRes, notes})
	}
	medianRun := func(runs []run) (run, string) {
		slices.SortFunc(runs, func(x, y run) int { return cmp.Compare(x.load.throughput(), y.load.throughput()) })
		var all []string
		for _, r := range runs {
			all = append(all, fmt.Sprintf("%.0f/s", r.load.throughput()))
		}
		return runs[len(runs)/2], fmt.Sprintf(" Throughput of the %d runs: %s; the median run is shown.", len(runs), strings.Join(all, ", "))
	}
	floor, floorRuns := medianRun(floors)
	floorRow := result{
		name:   "GET job by id: floor (net/http + database/sql), " + label,
		median: floor.load.latency.median, p99: floor.load.latency.p99, throughput: floor.load.throughput(),
		note: "bench/floor: the store's query for one job, prepared (one round trip), and encoding/json, " +
			"no authentication; load generator, server and PostgreSQL share the machine's cores. " +
			floor.note + loadNote(floor.load) + floorRuns,
	}
	floorRate := fmt.Sprintf("%.0f/s", floor.load.throughput())

	rest, restRuns := medianRun(rests)
	restRow := compareToFloor(result{
		name:   "GET jobs.json/{id}: REST, " + label,
		median: rest.load.latency.median, p99: rest.load.latency.p99, throughput: rest.load.throughput(),
		floor: floorRate, target: ">= 0.6x floor",
		note: "Go net/http client, HTTP/1.1 keep-alive, one connection per worker, Basic auth. " +
			rest.note + loadNote(rest.load) + restRuns,
	}, 0.6, rest.load, floor.load)

	grpcRow := result{
		name: "JobService/GetJob: gRPC (ghz), " + label, floor: floorRate, target: ">= 0.9x floor",
	}
	if len(grpcs) == 0 {
		grpcRow.note = "not measured: " + grpcErr.Error()
	} else {
		g, grpcRuns := medianRun(grpcs)
		grpcRow.median, grpcRow.p99, grpcRow.throughput = g.load.latency.median, g.load.latency.p99, g.load.throughput()
		grpcRow.note = g.note + loadNote(g.load) + grpcRuns
		grpcRow = compareToFloor(grpcRow, 0.9, g.load, floor.load)
	}
	// The same call on a bare grpc-go server, loaded by the same ghz: what
	// gRPC and its client cost on this machine before the service adds
	// anything. Not judged; it explains the gRPC row.
	grpcFloorRow := result{name: "GetJob: gRPC floor (grpc-go + database/sql, ghz), " + label}
	if len(grpcFloors) == 0 {
		grpcFloorRow.note = "not measured: " + grpcFloorErr.Error()
	} else {
		gf, gfRuns := medianRun(grpcFloors)
		grpcFloorRow.median, grpcFloorRow.p99, grpcFloorRow.throughput = gf.load.latency.median, gf.load.latency.p99, gf.load.throughput()
		grpcFloorRow.note = "bench/floor's gRPC listener: JobService/GetJob alone, the same prepared query, no " +
			"interceptors or authentication. " + gf.note + loadNote(gf.load) + gfRuns
		if floor.load.throughput() > 0 {
			grpcFloorRow.note += fmt.Sprintf(" It reaches %.2fx of the HTTP floor.", gf.load.throughput()/floor.load.throughput())
		}
		if len(grpcs) > 0 && gf.load.throughput() > 0 {
			grpcRow.note += fmt.Sprintf(" Against the gRPC floor (the same client): %.2fx.", grpcRow.throughput/gf.load.throughput())
		}
	}
	return []result{floorRow, grpcFloorRow, restRow, grpcRow}, nil
}

// compareToFloor fills in the ratio and the verdict: the throughput target
// met and no call failed, in this run or in the floor's.
func compareToFloor(row result, want float64, got, floor loadResult) result {
	if floor.throughput() > 0 {
		row.ratio = got.throughput() / floor.throughput()
	}
	row.pass = row.ratio >= want && got.errors == 0 && floor.errors == 0 && got.requests > 0
	if floor.errors > 0 {
		row.note += " The floor had errors, so the ratio is not a fair comparison."
	}
	return row
}

// loadNote counts a run's calls and names its first failure.
func loadNote(l loadResult) string {
	s := fmt.Sprintf("%d calls in %.1f s, %d errors.", l.requests, l.elapsed.Seconds(), l.errors)
	if l.firstError != "" {
		s += fmt.Sprintf(" First error: %.200s", l.firstError)
	}
	return s
}

// activeJobIDs lists the account's active jobs.
func activeJobIDs(ctx context.Context, h *harness, a account) ([]int64, error) {
	var ids []int64
	err := h.store.DB().SelectContext(ctx, &ids,
		`SELECT id FROM jobs WHERE account_id = $1 AND deleted_at IS NULL ORDER BY id`, a.ID)
	if err != nil {
		return nil, fmt.Errorf("list job ids: %w", err)
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("account %d has no active jobs", a.ID)
	}
	return ids, nil
}

// startFloor runs the floor server for the account and returns its base URL,
// its gRPC address and a function that stops it.
func startFloor(ctx context.Context, h *harness, accountID int64) (httpBase, grpcAddr string, stop func(), err error) {
	logs, err := os.Create(filepath.Join(h.dir, "floor.log"))
	if err != nil {
		return "", "", nil, err
	}
	cmd := exec.Command(filepath.Join(h.binDir, "floor"), "-addr", "127.0.0.1:0", "-grpc-addr", "127.0.0.1:0",
		"-database-url", h.dbURL, "-account", strconv.FormatInt(accountID, 10))
	cmd.Stderr = logs
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		logs.Close()
		return "", "", nil, err
	}
	if err := cmd.Start(); err != nil {
		logs.Close()
		return "", "", nil, fmt.Errorf("start floor: %w", err)
	}
	stop = func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logs.Close()
	}
	// The floor prints its addresses once it listens; a floor that dies
	// before that closes stdout, which ends the wait.
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case addrs, ok := <-line:
		httpAddr, grpcAddr, found := strings.Cut(strings.TrimSpace(addrs), " ")
		if !ok || !found {
			stop()
			log, _ := os.ReadFile(logs.Name())
			return "", "", nil, fmt.Errorf("floor exited before listening: %.500s", log)
		}
		return "http://" + httpAddr, grpcAddr, stop, nil
	case <-time.After(30 * time.Second):
		stop()
		return "", "", nil, errors.New("floor did not print its addresses within 30 s")
	case <-ctx.Done():
		stop()
		return "", "", nil, ctx.Err()
	}
}

// httpTarget is one HTTP server under load, with a client of its own whose
// pool keeps one idle connection per worker, so no run pays for dialling
// once it is warm.
type httpTarget struct {
	client *http.Client
	base   string
	key    string // API key sent with Basic auth; none for the floor
}

func newHTTPTarget(base, key string, conns int) httpTarget {
	return httpTarget{
		client: &http.Client{Transport: &http.Transport{
			MaxIdleConns: conns + 16, MaxIdleConnsPerHost: conns + 16, IdleConnTimeout: time.Minute,
		}},
		base: base, key: key,
	}
}

// send makes one request and reads the answer; body, when not nil,
// receives it, otherwise it is discarded.
func (t httpTarget) send(ctx context.Context, method, path string, payload []byte, body *bytes.Buffer) (int, error) {
	var r io.Reader
	if payload != nil {
		r = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, t.base+path, r)
	if err != nil {
		return 0, err
	}
	if t.key != "" {
		req.SetBasicAuth(t.key, "")
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	// The body is read to its end in both cases so the connection is reused.
	if body != nil {
		_, err = body.ReadFrom(resp.Body)
	} else {
		_, err = io.Copy(io.Discard, resp.Body)
	}
	return resp.StatusCode, err
}

// checkJobAnswer makes sure the route answers the job itself before it is
// timed, so a run cannot measure fast failures.
func checkJobAnswer(ctx context.Context, t httpTarget, prefix string, id int64) error {
	var body bytes.Buffer
	code, err := t.send(ctx, http.MethodGet, prefix+strconv.FormatInt(id, 10), nil, &body)
	if err != nil {
		return err
	}
	var j struct {
		ID json.Number `json:"id"`
	}
	if code != 200 || json.Unmarshal(body.Bytes(), &j) != nil || j.ID.String() != strconv.FormatInt(id, 10) {
		return fmt.Errorf("GET %s%d: %d %.300s", prefix, id, code, body.String())
	}
	return nil
}

// httpIDLoad warms the target's connections and then loads it for d, each
// call taking the next id in turn. Any answer but 200 is an error. It also
// says how much of the machine the load generator itself took.
func httpIDLoad(ctx context.Context, t httpTarget, prefix string, ids []int64, warm, d time.Duration) (loadResult, string) {
	var next atomic.Uint64
	call := func(ctx context.Context, _, _ int) error {
		id := ids[next.Add(1)%uint64(len(ids))]
		path := prefix + strconv.FormatInt(id, 10)
		code, err := t.send(ctx, http.MethodGet, path, nil, nil)
		if err == nil && code != http.StatusOK {
			err = fmt.Errorf("GET %s: %d", path, code)
		}
		return err
	}
	load(ctx, retrieveConns, warm, call)
	before := selfCPU()
	r := load(ctx, retrieveConns, d, call)
	return r, cpuNote(selfCPU()-before, r.elapsed)
}

// selfCPU is the CPU time this process has used so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuNote tells how much of the machine's cores the load generator kept
// busy, which the service and the floor did not have.
func cpuNote(cpu, wall time.Duration) string {
	if cpu <= 0 || wall <= 0 {
		return ""
	}
	return fmt.Sprintf("The load generator used %.0f%% of the %d cores. ",
		100*cpu.Seconds()/(wall.Seconds()*float64(runtime.NumCPU())), runtime.NumCPU())
}

// ghzReport is the part of ghz's JSON report the scenario reads. Durations
// are in nanoseconds; a detail's timestamp is when the call ended.
type ghzReport struct {
	Count          uint64         `json:"count"`
	Total          time.Duration  `json:"total"`
	Rps            float64        `json:"rps"`
	StatusCodeDist map[string]int `json:"statusCodeDistribution"`
	ErrorDist      map[string]int `json:"errorDistribution"`
	LatencyDist    []struct {
		Percentage int           `json:"percentage"`
		Latency    time.Duration `json:"latency"`
	} `json:"latencyDistribution"`
	Details []struct {
		Timestamp time.Time     `json:"timestamp"`
		Latency   time.Duration `json:"latency"`
		Error     string        `json:"error"`
		Status    string        `json:"status"`
	} `json:"details"`
}

// ghzIDLoad runs ghz for warm+d over the ids in turn and keeps the calls
// that ended after the warm-up, so its figures, like the HTTP runs', come
// from connections that were already open and in use. It returns the run
// and a note on how ghz was set up.
func ghzIDLoad(ctx context.Context, h *harness, addr, apiKey string, ids []int64, warm, d time.Duration) (loadResult, string, error) {
	bin, err := filepath.Abs(ghzPath)
	if err != nil {
		return loadResult{}, "", err
	}
	if _, err := os.Stat(bin); err != nil {
		return loadResult{}, "", fmt.Errorf("%s is missing: run make tools", ghzPath)
	}
	dir, err := os.MkdirTemp(h.dir, "ghz-")
	if err != nil {
		return loadResult{}, "", err
	}
	defer os.RemoveAll(dir)
	// One message per id: for a unary call ghz sends the array's messages
	// in turn, the same order the HTTP runs use, with no templates to
	// execute per call. The key goes in a file, not on the command line.
	msgs := make([]map[string]int64, len(ids))
	for i, id := range ids {
		msgs[i] = map[string]int64{"id": id}
	}
	md := map[string]string{}
	if apiKey != "" {
		md["authorization"] = "Bearer " + apiKey
	}
	files := map[string]any{"data.json": msgs, "metadata.json": md}
	for name, v := range files {
		b, _ := json.Marshal(v)
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return loadResult{}, "", err
		}
	}
	out := filepath.Join(dir, "report.json")
	// One connection per worker, as each HTTP/1.1 worker holds its own TCP
	// connection; ghz's default of one connection would multiplex all 32
	// workers over a single HTTP/2 connection and measure that instead.
	// Calls still in flight at the end are dropped (ignore), as load drops
	// the calls the end of its run cuts off.
	args := []string{
		"--insecure", "--call", "jobboard.v2.JobService/GetJob",
		"--data-file", filepath.Join(dir, "data.json"), "--metadata-file", filepath.Join(dir, "metadata.json"),
		"--disable-template-functions", "--disable-template-data",
		"-c", strconv.Itoa(retrieveConns), "--connections", strconv.Itoa(retrieveConns),
		"-z", (warm + d).String(), "--duration-stop", "ignore",
		"--format", "json", "-o", out, addr,
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stderr = &stderr
	started := time.Now()
	if err := cmd.Run(); err != nil {
		return loadResult{}, "", fmt.Errorf("ghz: %v: %.500s", err, stderr.String())
	}
	ghzCPU := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	wall := time.Since(started)
	data, err := os.ReadFile(out)
	if err != nil {
		return loadResult{}, "", err
	}
	var rep ghzReport
	if err := json.Unmarshal(data, &rep); err != nil {
		return loadResult{}, "", fmt.Errorf("read ghz report: %w", err)
	}
	auth := "Bearer key"
	if apiKey == "" {
		auth = "no key"
	}
	note := fmt.Sprintf("ghz %s, %d workers on %d HTTP/2 connections (one each), reflection, %s. %s",
		strings.TrimPrefix(ghzVersion, "v"), retrieveConns, retrieveConns, auth, cpuNote(ghzCPU, wall))
	if uint64(len(rep.Details)) < rep.Count || len(rep.Details) == 0 {
		// ghz keeps at most a million calls' details: fall back on its own
		// summary, which includes the warm-up.
		return ghzSummary(rep), note + "Figures from ghz's summary, warm-up included. ", nil
	}
	return ghzWindow(rep, warm), note, nil
}

// ghzVersion is the version scripts/install-tools.sh pins.
const ghzVersion = "v0.120.0"

// ghzWindow measures the calls that ended at least warm after the first
// call started, up to the last call's end.
func ghzWindow(rep ghzReport, warm time.Duration) loadResult {
	start := rep.Details[0].Timestamp.Add(-rep.Details[0].Latency)
	end := start
	for _, c := range rep.Details {
		if b := c.Timestamp.Add(-c.Latency); b.Before(start) {
			start = b
		}
		if c.Timestamp.After(end) {
			end = c.Timestamp
		}
	}
	from := start.Add(warm)
	var r loadResult
	var lats []time.Duration
	for _, c := range rep.Details {
		if c.Timestamp.Before(from) {
			continue
		}
		r.requests++
		lats = append(lats, c.Latency)
		if c.Status != "OK" || c.Error != "" {
			r.errors++
			if r.firstError == "" {
				r.firstError = c.Status + ": " + c.Error
			}
		}
	}
	r.elapsed = end.Sub(from)
	r.latency = summarize(lats)
	return r
}

// ghzSummary reads the figures ghz computed itself.
func ghzSummary(rep ghzReport) loadResult {
	r := loadResult{requests: int64(rep.Count), elapsed: rep.Total}
	r.errors = int64(rep.Count) - int64(rep.StatusCodeDist["OK"])
	for msg := range rep.ErrorDist {
		r.firstError = msg
		break
	}
	for _, l := range rep.LatencyDist {
		switch l.Percentage {
		case 50:
			r.latency.median = l.Latency
		case 99:
			r.latency.p99 = l.Latency
		}
	}
	r.latency.n = int(rep.Count)
	return r
}
