package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The HTTP and gRPC load of the scenarios comes from h2load (Debian's
// nghttp2-client), a C event loop: on two shared cores a Go load generator
// takes a fifth of the machine away from the server it measures and so
// flatters a ratio. h2load also writes one line per request with its status
// and latency, so a scenario can tell the latency of served requests from
// that of refused ones, which wrk's single histogram cannot.

// h2loadPath is the command scripts/ensure-debian-packages.sh installs
// (make bench installs it when missing).
const h2loadPath = "h2load"

// h2loadRun is one h2load process: conns connections, each sending the next
// request as soon as it has the answer to the previous one (a closed loop),
// for warmup and then duration; only the requests of the duration count.
type h2loadRun struct {
	uris     []string // each connection cycles through them in order
	conns    int
	http1    bool // HTTP/1.1 keep-alive; otherwise HTTP/2 (gRPC)
	streams  int  // HTTP/2 only: concurrent streams per connection, default 1
	warmup   time.Duration
	duration time.Duration
	headers  []string // "name: value"
	body     []byte   // sent with every request (a POST) when not nil
	dir      string   // a folder for the URI, body and log files
	name     string   // names the files in dir
}

// h2loadResult is what the duration of a run saw.
type h2loadResult struct {
	elapsed time.Duration
	// latencies per HTTP status, each sorted; a request that got no answer
	// (a transport error or h2load's timeout) is not in here but in failed.
	latencies map[int][]time.Duration
	failed    int64
	// statusless counts answers h2load logged with status 0: it records a
	// status only in the main phase, so an answer whose status line came in
	// the warm-up and whose end came in the duration has none. Such a
	// request was answered; it is in no class's latencies.
	statusless int64
	startSpan  time.Duration // from the first logged request's start to the last's
	dataBytes  int64         // response payload bytes (DATA frames or bodies) of the run, warm-up included
	// started counts the requests of the main phase sent, done those
	// answered or failed: the difference was cut off by the end of the run
	// (some may have had their answer).
	started, done int64
	// done and the log count too the requests sent in the warm-up that
	// ended in the duration; mainDone leaves them out, so started -
	// mainDone were still in flight when the duration ended.
	mainDone int64
	// inFlight bounds from below, for each request still in flight when the
	// duration ended, how long it had waited by then, so a request the
	// server never answered still counts in the tail.
	inFlight []time.Duration
	// ends are the logged requests' ends, from the start of the duration, sorted.
	ends []time.Duration
	// cpu is the generator's own share of all the machine's cores over its
	// whole life, start and warm-up included.
	cpu float64
}

// requests counts the answered requests.
func (r h2loadResult) requests() int64 {
	var n int64
	for _, l := range r.latencies {
		n += int64(len(l))
	}
	return n
}

// count counts the requests answered with one of the statuses.
func (r h2loadResult) count(statuses ...int) int64 {
	var n int64
	for _, s := range statuses {
		n += int64(len(r.latencies[s]))
	}
	return n
}

// of merges the latencies of the given statuses, sorted.
func (r h2loadResult) of(statuses ...int) []time.Duration {
	var all []time.Duration
	for _, s := range statuses {
		all = append(all, r.latencies[s]...)
	}
	slices.Sort(all)
	return all
}

// throughput is answered requests of the given statuses per second of the run.
func (r h2loadResult) throughput(statuses ...int) float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.count(statuses...)) / r.elapsed.Seconds()
}

// cpuNote says how much of the machine the generator took.
func (r h2loadResult) cpuNote() string {
	return fmt.Sprintf("h2load used %.0f%% of the %d cores.", 100*r.cpu, runtime.NumCPU())
}

// start launches the run; wait collects it. Several runs started together
// load the server at once, one process per kind of request.
func (run h2loadRun) start(ctx context.Context) (wait func() (h2loadResult, error), err error) {
	if run.name == "" || run.dir == "" || len(run.uris) == 0 || run.conns < 1 || run.duration <= 0 {
		return nil, fmt.Errorf("h2load run %q: name, dir, uris, conns and duration are required", run.name)
	}
	base := filepath.Join(run.dir, "h2load-"+run.name)
	uriFile, logFile := base+".uris", base+".log"
	if err := os.WriteFile(uriFile, []byte(strings.Join(run.uris, "\n")+"\n"), 0o644); err != nil {
		return nil, err
	}
	// h2load leaves the log as it was when no request reached the main phase.
	if err := os.Remove(logFile); err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	args := []string{
		"-c", strconv.Itoa(run.conns), "-t", "1",
		"-D", strconv.Itoa(int(run.duration.Seconds())),
		"--warm-up-time", strconv.Itoa(int(run.warmup.Seconds())),
		"-i", uriFile, "--log-file", logFile,
	}
	if run.duration%time.Second != 0 || run.warmup%time.Second != 0 {
		return nil, fmt.Errorf("h2load run %q: h2load takes whole seconds", run.name)
	}
	if run.http1 {
		args = append(args, "--h1")
	} else {
		args = append(args, "-m", strconv.Itoa(max(run.streams, 1)))
	}
	for _, hd := range run.headers {
		args = append(args, "-H", hd)
	}
	if run.body != nil {
		bodyFile := base + ".body"
		if err := os.WriteFile(bodyFile, run.body, 0o644); err != nil {
			return nil, err
		}
		args = append(args, "-d", bodyFile)
	}
	cmd := exec.CommandContext(ctx, h2loadPath, args...)
	out := &h2loadOutput{}
	cmd.Stdout, cmd.Stderr = out, out
	started := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("h2load (make bench installs Debian's nghttp2-client): %w", err)
	}
	return func() (h2loadResult, error) {
		err := cmd.Wait()
		wall := time.Since(started)
		if err != nil {
			return h2loadResult{}, fmt.Errorf("h2load %s: %w\n%s", run.name, err, tail(out.String(), 2000))
		}
		maxOpen := run.conns * max(run.streams, 1) // requests in flight at once, at most
		res, err := parseH2load(out.String(), logFile, out.mainPhase(started.Add(run.warmup)), maxOpen)
		if err != nil {
			return h2loadResult{}, fmt.Errorf("h2load %s: %w\n%s", run.name, err, tail(out.String(), 2000))
		}
		// "finished in" spans the warm-up too, while the log holds only the
		// requests of the main phase, which h2load's timer ends after
		// exactly the duration (its own req/s divides by it as well).
		res.elapsed = run.duration
		res.inFlight = inFlightAges(res.ends, run.duration, res.started-res.mainDone, maxOpen)
		cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		res.cpu = cpu.Seconds() / (wall.Seconds() * float64(runtime.NumCPU()))
		return res, nil
	}, nil
}

// h2loadOutput keeps what h2load prints and notes when it said that the
// duration began, the line between the warm-up's requests and the
// duration's in the log. The note comes a little after the fact (h2load
// flushes the line at once; a few milliseconds, under load), so a request
// sent in that moment may pass for one of the warm-up (parseH2load takes
// no more of those than could be in flight at once), and the waits of the
// requests in flight at the end may count those milliseconds too much. The
// process's start is no better a mark: starting 43 processes on a busy
// machine, it came over 150 ms before the duration's (every request in
// flight at the end then showed a wait of 0).
type h2loadOutput struct {
	mu   sync.Mutex
	text strings.Builder
	main time.Time
}

const h2loadMainStarted = "Main benchmark duration is started"

func (o *h2loadOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.text.Write(p)
	if o.main.IsZero() && strings.Contains(o.text.String(), h2loadMainStarted) {
		o.main = time.Now()
	}
	return len(p), nil
}

func (o *h2loadOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.text.String()
}

// mainPhase is when the duration began, or guess when h2load did not say.
func (o *h2loadOutput) mainPhase(guess time.Time) time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.main.IsZero() {
		return guess
	}
	return o.main
}

// run starts the run and waits for it.
func (run h2loadRun) run(ctx context.Context) (h2loadResult, error) {
	wait, err := run.start(ctx)
	if err != nil {
		return h2loadResult{}, err
	}
	return wait()
}

var (
	h2loadFinished = regexp.MustCompile(`(?m)^finished in `)
	h2loadRequests = regexp.MustCompile(`(?m)^requests: \d+ total, (\d+) started, (\d+) done, .* (\d+) errored, (\d+) timeout`)
	h2loadTraffic  = regexp.MustCompile(`(?m)^traffic: .* \((\d+)\) data`)
)

// parseH2load reads the summary h2load printed and its per-request log:
// start time in microseconds, status, microseconds to the end of the answer;
// phase is when the duration started, and maxOpen the most requests in
// flight at once.
func parseH2load(summary, logFile string, phase time.Time, maxOpen int) (h2loadResult, error) {
	var res h2loadResult
	if !h2loadFinished.MatchString(summary) {
		return res, fmt.Errorf("no \"finished in\" line")
	}
	if m := h2loadRequests.FindStringSubmatch(summary); m != nil {
		res.started, _ = strconv.ParseInt(m[1], 10, 64)
		res.done, _ = strconv.ParseInt(m[2], 10, 64)
		errored, _ := strconv.ParseInt(m[3], 10, 64)
		timeouts, _ := strconv.ParseInt(m[4], 10, 64)
		res.failed = errored + timeouts
	}
	if m := h2loadTraffic.FindStringSubmatch(summary); m != nil {
		res.dataBytes, _ = strconv.ParseInt(m[1], 10, 64)
	}
	f, err := os.Open(logFile)
	if os.IsNotExist(err) {
		return res, fmt.Errorf("no request was answered in the measured duration")
	}
	if err != nil {
		return res, err
	}
	defer f.Close()
	res.latencies = map[int][]time.Duration{}
	var first, last int64
	type span struct{ start, micros int64 }
	var spans []span
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 {
			return res, fmt.Errorf("log line %q: want 3 fields", sc.Text())
		}
		start, err0 := strconv.ParseInt(fields[0], 10, 64)
		status, err1 := strconv.Atoi(fields[1])
		micros, err2 := strconv.ParseInt(fields[2], 10, 64)
		if err0 != nil || err1 != nil || err2 != nil {
			return res, fmt.Errorf("log line %q: not numbers", sc.Text())
		}
		if first == 0 || start < first {
			first = start
		}
		last = max(last, start)
		spans = append(spans, span{start, micros})
		// h2load logs a request that got no answer with status -1.
		if status < 0 {
			continue
		}
		if status == 0 {
			res.statusless++
			continue
		}
		res.latencies[status] = append(res.latencies[status], time.Duration(micros)*time.Microsecond)
	}
	if err := sc.Err(); err != nil {
		return res, err
	}
	for _, l := range res.latencies {
		slices.Sort(l)
	}
	res.startSpan = time.Duration(last-first) * time.Microsecond
	res.ends = make([]time.Duration, len(spans))
	var warm int64
	for i, s := range spans {
		res.ends[i] = time.Duration(s.start-phase.UnixMicro()+s.micros) * time.Microsecond
		warm += int64(btoi(s.start < phase.UnixMicro()))
	}
	// At most maxOpen requests of the warm-up were in flight when the duration
	// began: more logged before the noted start were the duration's.
	res.mainDone = int64(len(spans)) - min(warm, int64(maxOpen))
	slices.Sort(res.ends)
	return res, nil
}

// inFlightAges bounds the waits of the requests still in flight when the
// duration ended, from the ends of the logged requests (from the start of
// the duration, sorted), the sent requests of the duration that had no end
// and the open requests a moment has. In h2load's closed loop a request
// ends and its connection sends the next, so open requests are in flight
// all the time: those the duration did not send were sent in the warm-up
// and waited at least the whole duration (a connection stuck from the
// start, of which h2load's counts say nothing). Each sent one started at
// a distinct end, or at the start; supposing they started at the latest
// ends gives every one its least possible wait.
func inFlightAges(ends []time.Duration, duration time.Duration, sent int64, open int) []time.Duration {
	ages := make([]time.Duration, max(sent, int64(open), 0))
	for i := range ages {
		ages[i] = duration
		if int64(i) < sent && i < len(ends) {
			ages[i] = max(0, duration-ends[len(ends)-1-i])
		}
	}
	slices.Sort(ages)
	return ages
}

// tail is the end of s, for error messages.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
