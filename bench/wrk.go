package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// wrk (Debian's wrk, C, epoll, one event loop a thread) is the second
// generator of the single-job reads beside h2load: the two disagree on
// how close the service comes to its floor (h2load's single thread can be
// what limits a fast server, and each measures its own way), so the rows
// report both.

// wrkPath is Debian's wrk, which make loadgen installs.
const wrkPath = "wrk"

// wrkThreads are wrk's threads, one a core: its connections are shared
// among them.
var wrkThreads = runtime.NumCPU()

// wrkRun is one run of wrk over HTTP/1.1 keep-alive, each connection
// asking for the paths in turn (each thread from its own place in the
// list), for warmup (not counted, a run of its own) and then duration.
type wrkRun struct {
	base             string
	paths            []string
	header           string // one "Name: value" header, or none
	conns            int
	warmup, duration time.Duration
	dir, name        string
}

// wrkResult is what a run's done() reported.
type wrkResult struct {
	requests, errors int64
	firstError       string
	elapsed          time.Duration
	median, p99, max time.Duration
	cpu              float64 // wrk's share of all the machine's cores over its life
	threads          int
}

// wrkScript is the Lua script of a run: the paths, the header, a request
// function that walks the paths, and a done() that prints the figures on
// one line the harness parses. Latencies are wrk's, in microseconds.
const wrkScript = `local paths = {%s}
local header_name, header_value = %q, %q
local thread_count = 0
setup = function(thread)
  thread:set("start", thread_count * 7919)
  thread_count = thread_count + 1
end
local i
request = function()
  i = (i or start) + 1
  local headers = {}
  if header_name ~= "" then headers[header_name] = header_value end
  return wrk.format("GET", paths[(i %% #paths) + 1], headers)
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("wrk-result requests=%%d duration_us=%%d connect=%%d read=%%d write=%%d status=%%d timeout=%%d p50_us=%%d p99_us=%%d max_us=%%d\n",
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99), latency.max))
end
`

// run runs the warm-up, then the measured run.
func (run wrkRun) run(ctx context.Context) (wrkResult, error) {
	if run.name == "" || run.dir == "" || len(run.paths) == 0 || run.conns < 1 || run.duration <= 0 {
		return wrkResult{}, fmt.Errorf("wrk run %q: name, dir, paths, conns and duration are required", run.name)
	}
	quoted := make([]string, len(run.paths))
	for i, p := range run.paths {
		quoted[i] = strconv.Quote(p)
	}
	name, value, _ := strings.Cut(run.header, ":")
	script := filepath.Join(run.dir, "wrk-"+run.name+".lua")
	if err := os.WriteFile(script, []byte(fmt.Sprintf(wrkScript, strings.Join(quoted, ","),
		strings.TrimSpace(name), strings.TrimSpace(value))), 0o644); err != nil {
		return wrkResult{}, err
	}
	if run.warmup > 0 {
		if _, err := run.once(ctx, script, run.warmup); err != nil {
			return wrkResult{}, err
		}
	}
	return run.once(ctx, script, run.duration)
}

// once runs wrk for d and parses its result line.
func (run wrkRun) once(ctx context.Context, script string, d time.Duration) (wrkResult, error) {
	if d%time.Second != 0 {
		return wrkResult{}, fmt.Errorf("wrk run %q: wrk takes whole seconds", run.name)
	}
	threads := min(wrkThreads, run.conns)
	cmd := exec.CommandContext(ctx, wrkPath, "-t", strconv.Itoa(threads), "-c", strconv.Itoa(run.conns),
		"-d", fmt.Sprintf("%ds", int(d.Seconds())), "--timeout", "10s", "-s", script, run.base)
	started := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(started)
	if err != nil {
		return wrkResult{}, fmt.Errorf("wrk %s (make loadgen installs Debian's wrk): %w\n%s", run.name, err, tail(string(out), 2000))
	}
	res, err := parseWrk(string(out))
	if err != nil {
		return wrkResult{}, fmt.Errorf("wrk %s: %w\n%s", run.name, err, tail(string(out), 2000))
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	res.cpu = cpu.Seconds() / (wall.Seconds() * float64(runtime.NumCPU()))
	res.threads = threads
	return res, nil
}

// parseWrk reads the line done() printed. wrk counts an answer of status
// 400 or more as an error of status; a connection it could not open, read
// or write, or a request past the timeout, as errors of their kinds.
func parseWrk(out string) (wrkResult, error) {
	for _, line := range strings.Split(out, "\n") {
		rest, ok := strings.CutPrefix(line, "wrk-result ")
		if !ok {
			continue
		}
		v := map[string]int64{}
		for _, field := range strings.Fields(rest) {
			k, s, _ := strings.Cut(field, "=")
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return wrkResult{}, fmt.Errorf("result field %q: %w", field, err)
			}
			v[k] = n
		}
		us := func(k string) time.Duration { return time.Duration(v[k]) * time.Microsecond }
		res := wrkResult{requests: v["requests"], elapsed: us("duration_us"), median: us("p50_us"), p99: us("p99_us"), max: us("max_us")}
		var kinds []string
		for _, k := range []string{"connect", "read", "write", "status", "timeout"} {
			if v[k] > 0 {
				res.errors += v[k]
				kinds = append(kinds, fmt.Sprintf("%d of %s", v[k], k))
			}
		}
		if len(kinds) > 0 {
			res.firstError = "wrk errors: " + strings.Join(kinds, ", ")
		}
		if res.elapsed <= 0 {
			return wrkResult{}, fmt.Errorf("no duration in %q", line)
		}
		return res, nil
	}
	return wrkResult{}, fmt.Errorf("no result line")
}

// load is the run as the other generators' figures.
func (r wrkResult) load() loadResult {
	return loadResult{requests: r.requests, errors: r.errors, elapsed: r.elapsed, firstError: r.firstError,
		latency: stats{n: int(r.requests), median: r.median, p99: r.p99, max: r.max}}
}

// cpuNote says how much of the machine the generator took.
func (r wrkResult) cpuNote() string {
	return fmt.Sprintf("wrk (%d threads) used %.0f%% of the %d cores.", r.threads, 100*r.cpu, runtime.NumCPU())
}

// restWrkLoad is restIDLoad on wrk: GET base+prefix+{id} over the ids in
// turn with conns connections, Basic auth with key when set.
func restWrkLoad(ctx context.Context, h *harness, name, base, prefix, key string, ids []int64, conns int, warm, d time.Duration) (loadResult, string, error) {
	paths := make([]string, len(ids))
	for i, id := range ids {
		paths[i] = prefix + strconv.FormatInt(id, 10)
	}
	run := wrkRun{base: base, paths: paths, conns: conns, warmup: warm, duration: d, dir: h.dir, name: name}
	if key != "" {
		run.header = basicAuthHeader(key)
	}
	res, err := run.run(ctx)
	if err != nil {
		return loadResult{}, "", err
	}
	return res.load(), res.cpuNote() + " ", nil
}
