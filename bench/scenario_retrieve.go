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
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func init() { register(2, "GET one job by id, 32 connections", retrieveScenario) }

// retrieveConns is the concurrency of every run of the scenario: each
// worker holds one connection and calls again as soon as it has its answer.
const retrieveConns = 32

// retrieveScenario loads the floors, the REST route and the gRPC method in
// turn with h2load and compares each of the service's throughputs with the
// floor loaded by the same client: REST with net/http's, over HTTP/1.1;
// GetJob with a bare grpc-go server's, over HTTP/2.
func retrieveScenario(ctx context.Context, h *harness) ([]result, error) {
	// Five shorter repetitions rather than three long ones: the floors
	// themselves vary by up to a fifth from one run to the next (the
	// 2026-11-27T183451Z report's gRPC floor: 6,892/s to 8,209/s), and the
	// median of five paired ratios moves less with one odd pair.
	warm, d, reps := 2*time.Second, 12*time.Second, 5
	if h.opts.quick {
		warm, d, reps = time.Second, 3*time.Second, 1
	}
	a := h.accounts[0]
	ids, err := activeJobIDs(ctx, h, a)
	if err != nil {
		return nil, err
	}
	// Shuffled so consecutive calls touch unrelated rows and index pages,
	// as independent clients would; the same order for every run.
	rand.New(rand.NewPCG(2, 2)).Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	if err := checkJobAnswer(ctx, newHTTPTarget(h.server.httpBase, a.APIKey, 1), "/api/v2.0/jobs.json/", ids[0]); err != nil {
		return nil, fmt.Errorf("REST: %w", err)
	}
	grpcService, err := checkGetJob(ctx, h.server.grpcAddr, a.APIKey, ids[0])
	if err != nil {
		return nil, fmt.Errorf("gRPC: %w", err)
	}
	// Each client's floor run and service run go back to back, the floor
	// first in even repetitions and last in odd ones, so a slow spell of
	// the shared machine or a drift of its speed hits both sides of a pair
	// alike; each ratio is the median of the repetitions' own ratios. (The
	// pairs were a minute apart, the other clients' runs between them, and
	// the ratios of the 2026-12-02T154535Z report's wrk pairs ranged from
	// 0.57x to 1.20x.)
	var runs retrieveRuns
	for rep := range reps {
		if err := runs.rep(ctx, h, a.ID, a.APIKey, ids, grpcService, warm, d, rep%2 == 0); err != nil {
			return nil, err
		}
	}
	// The quick run judges no target, so it has no use for a profile.
	if !h.opts.quick {
		if err := runs.profileRep(ctx, h, a.ID, a.APIKey, ids, grpcService, warm, d); err != nil {
			return nil, err
		}
	}
	return runs.rows(fmt.Sprintf("%d connections, %.0f s", retrieveConns, d.Seconds())), nil
}

// retrieveRuns are every run of the four targets, in the order they ran.
type retrieveRuns struct {
	floor, grpcFloor, rest, grpc []idRun
	// The REST route and the HTTP floor on wrk: over the shuffled ids,
	// and every request for the same job.
	floorWrk, restWrk, floorWrkOne, restWrkOne []idRun
	restProfile, grpcProfile                   string
	// restLayers compares the REST route's server CPU with the HTTP
	// floor's, layer by layer (layersNote), from a profile of each.
	restLayers string
}

// idRun is one h2load run, the note on the generator's CPU share, and
// what the server's metrics say of the calls it refused during the run.
type idRun struct {
	load     loadResult
	cpu      string
	service  bool   // a run against the service, not a floor
	refusals string // the service's refusalNote over the run; "" when none were counted
}

// side is one side of a pair of runs: a client's load on the floor or
// on the service, and the runs it adds to.
type side struct {
	load func() (loadResult, string, error)
	runs *[]idRun
}

// measure runs the side's load. On the service it reads the server's
// admission refusals by reason around the run: the clients see a 503
// alone, and the reasons tell what the 503s were.
func (s side) measure(ctx context.Context, h *harness, service bool) (idRun, error) {
	if !service {
		l, cpu, err := s.load()
		return idRun{load: l, cpu: cpu}, err
	}
	before, err := refusalCounts(ctx, h.server)
	if err != nil {
		return idRun{}, err
	}
	l, cpu, err := s.load()
	if err != nil {
		return idRun{}, err
	}
	after, err := refusalCounts(ctx, h.server)
	return idRun{load: l, cpu: cpu, service: true, refusals: refusalNote(before, after)}, err
}

// rep starts the floor and runs each client on the floor and on the
// service, one right after the other, the floor first when floorFirst.
func (r *retrieveRuns) rep(ctx context.Context, h *harness, accountID int64, key string, ids []int64, g grpcTarget,
	warm, d time.Duration, floorFirst bool) error {
	floorProc, err := startFloor(ctx, h, accountID)
	if err != nil {
		return err
	}
	defer floorProc.stop()
	floorBase, floorGRPC := floorProc.httpBase, floorProc.grpcAddr
	if err := checkJobAnswer(ctx, newHTTPTarget(floorBase, "", 1), "/jobs/", ids[0]); err != nil {
		return fmt.Errorf("floor: %w", err)
	}
	grpcFloor, err := checkGetJob(ctx, floorGRPC, "", ids[0])
	if err != nil {
		return fmt.Errorf("gRPC floor: %w", err)
	}
	const service = "/api/v2.0/jobs.json/"
	base := h.server.httpBase
	for _, pair := range [][2]side{
		{{func() (loadResult, string, error) {
			return restIDLoad(ctx, h, "floor", floorBase, "/jobs/", "", ids, retrieveConns, warm, d)
		}, &r.floor}, {func() (loadResult, string, error) {
			return restIDLoad(ctx, h, "rest", base, service, key, ids, retrieveConns, warm, d)
		}, &r.rest}},
		{{func() (loadResult, string, error) {
			return restWrkLoad(ctx, h, "floor-wrk", floorBase, "/jobs/", "", ids, retrieveConns, warm, d)
		}, &r.floorWrk}, {func() (loadResult, string, error) {
			return restWrkLoad(ctx, h, "rest-wrk", base, service, key, ids, retrieveConns, warm, d)
		}, &r.restWrk}},
		{{func() (loadResult, string, error) {
			return restWrkLoad(ctx, h, "floor-wrk-one", floorBase, "/jobs/", "", ids[:1], retrieveConns, warm, d)
		}, &r.floorWrkOne}, {func() (loadResult, string, error) {
			return restWrkLoad(ctx, h, "rest-wrk-one", base, service, key, ids[:1], retrieveConns, warm, d)
		}, &r.restWrkOne}},
		{{func() (loadResult, string, error) {
			return grpcIDLoad(ctx, h, "grpc-floor", grpcFloor, retrieveConns, warm, d)
		}, &r.grpcFloor}, {func() (loadResult, string, error) {
			return grpcIDLoad(ctx, h, "grpc", g, retrieveConns, warm, d)
		}, &r.grpc}},
	} {
		order := []int{0, 1} // each pair is the floor's side, then the service's
		if !floorFirst {
			order = []int{1, 0}
		}
		for _, i := range order {
			run, err := pair[i].measure(ctx, h, i == 1)
			if err != nil {
				return err
			}
			*pair[i].runs = append(*pair[i].runs, run)
		}
	}
	return nil
}

// profileRep loads the HTTP floor, the REST route and GetJob once more,
// recording each server's CPU profile over the first half of each run,
// past the warm-up (GetJob's warm-up is a process of its own, started a
// moment later). These runs are not measured: the profiler's sampling
// slows the server, and a repetition that took the profile came out a
// fifth below the others. The floor's profile and the REST route's are
// compared layer by layer.
func (r *retrieveRuns) profileRep(ctx context.Context, h *harness, accountID int64, key string, ids []int64, g grpcTarget,
	warm, d time.Duration) error {
	floor, err := startFloor(ctx, h, accountID)
	if err != nil {
		return err
	}
	defer floor.stop()
	waitProfile := h.profileAfter(ctx, floor.debugAddr, "retrieve-floor", warm, d/2)
	floorLoad, _, err := restIDLoad(ctx, h, "floor-profiled", floor.httpBase, "/jobs/", "", ids, retrieveConns, warm, d)
	floorProfile := waitProfile()
	if err != nil {
		return err
	}
	waitProfile = h.profileAfter(ctx, h.server.debugAddr, "retrieve-rest", warm, d/2)
	restLoad, _, err := restIDLoad(ctx, h, "rest-profiled", h.server.httpBase, "/api/v2.0/jobs.json/", key, ids, retrieveConns, warm, d)
	r.restProfile = waitProfile()
	if err != nil {
		return err
	}
	r.restLayers = compareLayers(r.restProfile, floorProfile, restLoad.throughput(), floorLoad.throughput())
	waitProfile = h.profileAfter(ctx, h.server.debugAddr, "retrieve-grpc", time.Second+warm, d/2)
	_, _, err = grpcIDLoad(ctx, h, "grpc-profiled", g, retrieveConns, warm, d)
	r.grpcProfile = waitProfile()
	return err
}

// compareLayers is layersNote for the profiles at the two paths, or what
// kept it from being written.
func compareLayers(servicePath, floorPath string, serviceRate, floorRate float64) string {
	if servicePath == "" || floorPath == "" {
		return "No layer comparison: a profile was not taken."
	}
	service, err := profileLayers(servicePath, serverLayers)
	if err != nil {
		return fmt.Sprintf("No layer comparison: %v.", err)
	}
	floor, err := profileLayers(floorPath, serverLayers)
	if err != nil {
		return fmt.Sprintf("No layer comparison: %v.", err)
	}
	return layersNote(service, floor, serviceRate, floorRate) + fmt.Sprintf(" Floor profile `%s`.", floorPath)
}

// profileAfter is profileOf started after delay, so a profile can leave
// out a run's warm-up (connections being opened, caches filled).
func (h *harness) profileAfter(ctx context.Context, debugAddr, name string, delay, d time.Duration) (wait func() string) {
	path := make(chan string, 1)
	go func() {
		select {
		case <-time.After(delay):
			path <- h.profileOf(ctx, debugAddr, name, d)()
		case <-ctx.Done():
			path <- ""
		}
	}()
	return func() string { return <-path }
}

// medianRun is the run of median throughput, and every run's throughput as
// text.
func medianRun(runs []idRun) (idRun, string) {
	slices.SortFunc(runs, func(x, y idRun) int { return cmp.Compare(x.load.throughput(), y.load.throughput()) })
	var all []string
	for _, r := range runs {
		all = append(all, fmt.Sprintf("%.0f/s", r.load.throughput()))
	}
	return runs[len(runs)/2], fmt.Sprintf(" Throughput of the %d runs: %s; the median run is shown.", len(runs), strings.Join(all, ", "))
}

// rows are the scenario's four rows: the two floors, then the service's
// routes judged against the floor of the same client.
func (r *retrieveRuns) rows(label string) []result {
	// Paired before medianRun sorts the runs by throughput.
	restRatio, restRatios := pairedRatio(r.rest, r.floor)
	grpcRatio, grpcRatios := pairedRatio(r.grpc, r.grpcFloor)
	row := func(name string, runs []idRun, note string) (result, loadResult) {
		m, all := medianRun(runs)
		return result{
			name: name + ", " + label, median: m.load.latency.median, p99: m.load.latency.p99,
			throughput: m.load.throughput(), note: note + m.cpu + loadNote(m.load) + errorsNote(runs) + all,
		}, m.load
	}
	floorRow, floor := row("GET job by id: floor (net/http + database/sql)", r.floor,
		"bench/floor: the store's query for one job, prepared (one round trip), and encoding/json, no authentication. "+
			"h2load, HTTP/1.1 keep-alive, one request at a time on each connection, the shuffled ids in turn. ")
	grpcFloorRow, grpcFloor := row("GetJob: gRPC floor (grpc-go + database/sql)", r.grpcFloor,
		"bench/floor's gRPC listener: JobService/GetJob alone, the same prepared query, no interceptors or "+
			"authentication. h2load, HTTP/2, one stream on each connection, every call for the same job "+
			"(h2load sends one body), each answer checked to carry the job's message. ")
	if floor.throughput() > 0 {
		grpcFloorRow.note += fmt.Sprintf(" It reaches %.2fx of the HTTP floor.", grpcFloor.throughput()/floor.throughput())
	}
	restRow, rest := row("GET jobs.json/{id}: REST", r.rest, "The same h2load load as the HTTP floor's, Basic auth. ")
	restRow.floor, restRow.target, restRow.profile = rate(floor.throughput()), ">= 0.85x HTTP floor", r.restProfile
	restRow.layers = r.restLayers
	restRow = compareToFloor(restRow, restFloorShare, restRatio, rest, floor)
	restRow.note += restRatios
	var wrkRows []result
	for _, w := range []struct {
		what           string
		service, floor []idRun
	}{{"the shuffled ids in turn", r.restWrk, r.floorWrk}, {"every request for the same job", r.restWrkOne, r.floorWrkOne}} {
		ratio, ratios := pairedRatio(w.service, w.floor)
		floorRow, floor := row("GET job by id: floor on wrk, "+w.what, w.floor,
			"bench/floor's HTTP listener as above, loaded by wrk: HTTP/1.1 keep-alive, "+w.what+". ")
		serviceRow, service := row("GET jobs.json/{id}: REST on wrk, "+w.what, w.service, "The same wrk load as the floor's, Basic auth. ")
		serviceRow.floor, serviceRow.target, serviceRow.profile = rate(floor.throughput()), ">= 0.85x HTTP floor on wrk", r.restProfile
		serviceRow.layers = r.restLayers
		serviceRow = compareToFloor(serviceRow, restFloorShare, ratio, service, floor)
		serviceRow.note += ratios
		wrkRows = append(wrkRows, floorRow, serviceRow)
	}
	grpcRow, g := row("JobService/GetJob: gRPC", r.grpc, "The same h2load load as the gRPC floor's, Bearer key. ")
	grpcRow.floor, grpcRow.target, grpcRow.profile = rate(grpcFloor.throughput()), ">= 0.9x gRPC floor", r.grpcProfile
	grpcRow = compareToFloor(grpcRow, 0.9, grpcRatio, g, grpcFloor)
	grpcRow.note += grpcRatios
	return append([]result{floorRow, grpcFloorRow, restRow, grpcRow}, wrkRows...)
}

// restFloorShare is the least share of the HTTP floor's throughput the
// REST route is to reach, under either generator.
const restFloorShare = 0.85

// pairedRatio is the median of each repetition's throughput over the floor
// run of the same repetition, and the ratios as text.
func pairedRatio(service, floor []idRun) (float64, string) {
	throughputs := func(runs []idRun) []float64 {
		var t []float64
		for _, r := range runs {
			t = append(t, r.load.throughput())
		}
		return t
	}
	ratio, all := medianPairRatio(throughputs(service), throughputs(floor))
	if all == "" {
		return 0, ""
	}
	return ratio, fmt.Sprintf(" Ratio of each repetition to its own floor run: %s; the ratio is their median.", all)
}

// compareToFloor fills in the ratio and the verdict: the throughput target
// met and no call failed, in this run or in the floor's.
func compareToFloor(row result, want, ratio float64, got, floor loadResult) result {
	row.ratio = ratio
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

// errorsNote says, when any run failed calls, how many runs did and, for
// the service's, what its admission refusals were, counted over the whole
// run, warm-up included: none counted means the errors came from elsewhere
// (a 503 is also the answer of a database the server cannot reach). A
// gRPC run counts one error for any calls without a message (grpcIDLoad),
// so there the refusals are the measure.
func errorsNote(runs []idRun) string {
	var failed []string
	for _, r := range runs {
		switch {
		case r.load.errors == 0:
		case !r.service:
			failed = append(failed, fmt.Sprintf("%d errors", r.load.errors))
		default:
			reasons := cmp.Or(r.refusals, "the server counted no admission refusals.")
			failed = append(failed, fmt.Sprintf("%d errors (%s)", r.load.errors, strings.TrimSuffix(reasons, ".")))
		}
	}
	if len(failed) == 0 {
		return ""
	}
	return fmt.Sprintf(" Runs with errors: %d of %d: %s.", len(failed), len(runs), strings.Join(failed, "; "))
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

// floorServer is a running floor (bench/floor): its base URL, its gRPC
// address and its profiler's address.
type floorServer struct {
	httpBase, grpcAddr, debugAddr string
	stop                          func()
}

// startFloor runs the floor server for the account.
func startFloor(ctx context.Context, h *harness, accountID int64) (floorServer, error) {
	logs, err := os.Create(filepath.Join(h.dir, "floor.log"))
	if err != nil {
		return floorServer{}, err
	}
	cmd := exec.Command(filepath.Join(h.binDir, "floor"), "-addr", "127.0.0.1:0", "-grpc-addr", "127.0.0.1:0",
		"-debug-addr", "127.0.0.1:0", "-database-url", h.dbURL, "-account", strconv.FormatInt(accountID, 10))
	cmd.Stderr = logs
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		logs.Close()
		return floorServer{}, err
	}
	if err := cmd.Start(); err != nil {
		logs.Close()
		return floorServer{}, fmt.Errorf("start floor: %w", err)
	}
	stop := func() {
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
		fields := strings.Fields(addrs)
		if !ok || len(fields) != 3 {
			stop()
			log, _ := os.ReadFile(logs.Name())
			return floorServer{}, fmt.Errorf("floor exited before listening: %.500s", log)
		}
		return floorServer{httpBase: "http://" + fields[0], grpcAddr: fields[1], debugAddr: fields[2], stop: stop}, nil
	case <-time.After(30 * time.Second):
		stop()
		return floorServer{}, errors.New("floor did not print its addresses within 30 s")
	case <-ctx.Done():
		stop()
		return floorServer{}, ctx.Err()
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

// selfCPU is the CPU time this process has used so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
