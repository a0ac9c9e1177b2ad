package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/truckjobs/jobboard/internal/pglocal"
	"github.com/truckjobs/jobboard/server/store"
)

// harness is what every scenario works with: the database, the running
// server and two accounts loaded with the data set.
type harness struct {
	opts       options
	dir        string
	cluster    *pglocal.Cluster
	dbURL      string
	store      *store.Store
	binDir     string
	server     *process
	accounts   [2]account
	jobsPer    int // active jobs per account
	appsPer    int // driver applications per account
	client     *http.Client
	setupNotes []string
	started    time.Time
	profiles   []string
}

type account struct {
	ID     int64  `json:"id"`
	APIKey string `json:"apiKey"`
	Secret string `json:"webhookSecret"`
}

func setup(ctx context.Context, opts options) (*harness, error) {
	h := &harness{opts: opts, jobsPer: 10_000, appsPer: 100_000, started: time.Now()}
	if opts.quick {
		h.jobsPer, h.appsPer = 2_000, 10_000
	}
	h.client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 512, MaxConnsPerHost: 0, IdleConnTimeout: time.Minute}}
	var err error
	if h.dir, err = os.MkdirTemp("", "jobboard-bench-"); err != nil {
		return nil, err
	}
	// Run as root, PostgreSQL runs as an unprivileged user that must reach its folder.
	if err := os.Chmod(h.dir, 0o755); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			h.close()
		}
	}()

	t := time.Now()
	h.binDir = filepath.Join(h.dir, "bin")
	for _, pkg := range []string{"./cmd/jobboard", "./bench/floor"} {
		out, err := exec.CommandContext(ctx, "go", "build", "-o", h.binDir+"/", pkg).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	slog.Info("built", "seconds", time.Since(t).Seconds())
	if opts.server != "" {
		if err := copyFile(opts.server, filepath.Join(h.binDir, "jobboard")); err != nil {
			return nil, fmt.Errorf("the server binary to measure: %w", err)
		}
		h.setupNotes = append(h.setupNotes, "Server measured: "+opts.server+" (-server), not this tree's build; floors and load generators are this tree's.")
	}

	// A durable cluster, as production runs: commits wait for the disk.
	if h.cluster, err = pglocal.Start(ctx, filepath.Join(h.dir, "pg"), pglocal.Options{Durable: true, MaxConnections: 300}); err != nil {
		return nil, err
	}
	if err := h.cluster.CreateDatabase(ctx, "jobboard"); err != nil {
		return nil, err
	}
	h.dbURL = h.cluster.URL("jobboard")
	if _, err := h.jobboard(ctx, "migrate"); err != nil {
		return nil, err
	}
	for i, name := range []string{"Bench Carrier A", "Bench Carrier B"} {
		out, err := h.jobboard(ctx, "accounts", "create", "--name", name)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(out, &h.accounts[i]); err != nil {
			return nil, fmt.Errorf("accounts create printed %q: %w", out, err)
		}
	}
	if h.store, err = store.Open(ctx, h.dbURL); err != nil {
		return nil, err
	}
	if h.server, err = h.startServer(ctx, "server"); err != nil {
		return nil, err
	}
	if opts.scale || opts.search { // scale.go and search.go load their own data, step by step
		ok = true
		return h, nil
	}

	t = time.Now()
	for _, a := range h.accounts {
		if err := h.loadJobs(ctx, a); err != nil {
			return nil, err
		}
		if _, err := h.jobboard(ctx, "demo", "seed", "--account", strconv.FormatInt(a.ID, 10),
			"--drivers", strconv.Itoa(h.appsPer), "--seed", strconv.FormatInt(a.ID, 10)); err != nil {
			return nil, err
		}
	}
	if err := h.settle(ctx); err != nil {
		return nil, err
	}
	var jobApps int64
	if err := h.store.DB().GetContext(ctx, &jobApps, `SELECT count(*) FROM job_applications`); err != nil {
		return nil, err
	}
	h.setupNotes = append(h.setupNotes, fmt.Sprintf(
		"Data set: 2 accounts, each with %d active jobs and %d driver applications (%d job applications in all), loaded in %.1f s.",
		h.jobsPer, h.appsPer, jobApps, time.Since(t).Seconds()))
	ok = true
	return h, nil
}

// loadJobs posts the account's jobs through the API, 1,000 per request.
func (h *harness) loadJobs(ctx context.Context, a account) error {
	for start := 0; start < h.jobsPer; start += 1000 {
		body := jobsJSON(start, min(1000, h.jobsPer-start), "D", "Driver")
		if err := h.postJobs(ctx, a, body); err != nil {
			return err
		}
	}
	return nil
}

func (h *harness) close() {
	if h.server != nil {
		h.server.stop()
	}
	if h.store != nil {
		h.store.Close()
	}
	if h.cluster != nil {
		_ = h.cluster.Stop()
	}
	if h.dir != "" {
		_ = os.RemoveAll(h.dir)
	}
}

// jobboard runs an administrative command of the binary.
func (h *harness) jobboard(ctx context.Context, args ...string) ([]byte, error) {
	out, _, err := h.jobboardLogged(ctx, args...)
	return out, err
}

// jobboardLogged is jobboard that also returns what the command logged.
func (h *harness) jobboardLogged(ctx context.Context, args ...string) (out, logged []byte, err error) {
	cmd := exec.CommandContext(ctx, filepath.Join(h.binDir, "jobboard"), args...)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+h.dbURL)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err = cmd.Output()
	if err != nil {
		return nil, nil, fmt.Errorf("jobboard %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out, stderr.Bytes(), nil
}

// process is a server the harness started.
type process struct {
	name      string
	cmd       *exec.Cmd
	httpBase  string
	grpcAddr  string
	debugAddr string
	// metricsBase serves the Prometheus metrics, which tell why admission
	// control refused what it refused.
	metricsBase string
	logs        *os.File
	exited      chan struct{} // closed when the process has ended and been waited for
}

// startServer runs the service with its log in name.log; env, when given,
// is added to (and overrides) the harness's settings. The addresses are
// free when picked but not held until the server listens on them: another
// process may take one meanwhile (an outgoing connection's local port, of
// which a round of deliveries opens thousands). A server that could not
// listen is started again on new addresses, up to three times.
func (h *harness) startServer(ctx context.Context, name string, env ...string) (*process, error) {
	for attempt := 1; ; attempt++ {
		p, err := h.startServerOnce(ctx, name, env...)
		if err == nil || !errors.Is(err, errAddressTaken) || attempt == 3 {
			return p, err
		}
		slog.Warn("bench: a server's address was taken before it listened; starting it again", "server", name, "err", err)
	}
}

// errAddressTaken is a server's exit because an address was in use.
var errAddressTaken = errors.New("address taken")

// startServerOnce is one attempt of startServer, on addresses picked now.
func (h *harness) startServerOnce(ctx context.Context, name string, env ...string) (*process, error) {
	httpAddr, grpcAddr, debugAddr, metricsAddr := freeAddr(), freeAddr(), freeAddr(), freeAddr()
	logPath := filepath.Join(h.dir, name+".log")
	logs, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(filepath.Join(h.binDir, "jobboard"), "serve")
	cmd.Env = append(os.Environ(), "DATABASE_URL="+h.dbURL, "JOBBOARD_HTTP_ADDR="+httpAddr,
		"JOBBOARD_GRPC_ADDR="+grpcAddr, "JOBBOARD_CALLBACK_ALLOW_PRIVATE=true", "JOBBOARD_DEBUG_ADDR="+debugAddr,
		// Metrics are served as in production, on an address of their own
		// rather than the machine-wide default.
		"JOBBOARD_METRICS_ADDR="+metricsAddr,
		// The scenarios measure throughput on one key, far above any
		// per-key rate a client would be granted.
		"JOBBOARD_RATE_LIMIT=0", "JOBBOARD_INTERNAL_TOKEN="+benchInternalToken)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		logs.Close()
		return nil, err
	}
	p := &process{name: name, cmd: cmd, httpBase: "http://" + httpAddr, grpcAddr: grpcAddr, debugAddr: debugAddr,
		metricsBase: "http://" + metricsAddr, logs: logs, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	if err := waitReady(ctx, p.httpBase+"/readyz", p.exited); err != nil {
		p.stop()
		return nil, exitedEarly(err, logPath)
	}
	return p, nil
}

// exitedEarly adds to a server's failure to start the end of its log, and
// marks an exit for an address in use as errAddressTaken.
func exitedEarly(err error, logPath string) error {
	log, _ := os.ReadFile(logPath)
	end := tail(string(log), 2000)
	if strings.Contains(end, "address already in use") {
		err = fmt.Errorf("%w: %w", errAddressTaken, err)
	}
	return fmt.Errorf("%w; the end of its log:\n%s", err, end)
}

// withServerStopped stops the harness's server, runs fn and starts the
// server again, for scenarios whose own servers must not share a queue
// with it.
func (h *harness) withServerStopped(ctx context.Context, fn func() error) error {
	h.server.stop()
	h.server = nil
	err := fn()
	p, startErr := h.startServer(ctx, "server")
	if startErr != nil {
		return errors.Join(err, fmt.Errorf("start the harness's server again: %w", startErr))
	}
	h.server = p
	return err
}

func (p *process) stop() {
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.exited:
	case <-time.After(40 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	p.logs.Close()
}

// memory reads the server's resident set and its peak, in bytes.
func (p *process) memory() (rss, peak int64) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = kb << 10
		case "VmHWM:":
			peak = kb << 10
		}
	}
	return rss, peak
}

// resetPeak starts a new peak-RSS measurement (Linux clear_refs 5); it
// returns the resident set at that moment.
func (p *process) resetPeak() int64 {
	_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", p.cmd.Process.Pid), []byte("5"), 0)
	rss, _ := p.memory()
	return rss
}

func waitReady(ctx context.Context, url string, exited <-chan struct{}) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		select {
		case <-exited:
			return fmt.Errorf("%s: the server exited before it was ready", url)
		default:
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s not ready: %v", url, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// do sends a request with the account's key and reads the whole answer.
func (h *harness) do(ctx context.Context, a account, method, path string, body []byte) (int, []byte, error) {
	resp, err := h.send(ctx, a, method, path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

// dropAnswer sends a GET with the account's key and drops the answer as it
// arrives: its status and length.
func (h *harness) dropAnswer(ctx context.Context, a account, path string) (int, int64, error) {
	resp, err := h.send(ctx, a, http.MethodGet, path, nil)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, n, err
}

// send sends a request with the account's key and returns the answer,
// its body still to read (and close).
func (h *harness) send(ctx context.Context, a account, method, path string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, h.server.httpBase+path, body)
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(a.APIKey, "")
	return h.client.Do(req)
}

// postJobs posts a jobs.json body and fails on any error in the summary.
func (h *harness) postJobs(ctx context.Context, a account, body []byte) error {
	code, resp, err := h.do(ctx, a, http.MethodPost, "/api/v2.0/jobs.json", body)
	if err != nil {
		return err
	}
	var sum struct{ Errors int }
	if code != 200 || json.Unmarshal(resp, &sum) != nil || sum.Errors != 0 {
		return fmt.Errorf("post jobs: %d %.300s", code, resp)
	}
	return nil
}

// newAccount creates an account with no jobs, for scenarios that write.
func (h *harness) newAccount(ctx context.Context, name string) (account, error) {
	var a account
	out, err := h.jobboard(ctx, "accounts", "create", "--name", name)
	if err != nil {
		return a, err
	}
	return a, json.Unmarshal(out, &a)
}

// withdrawAll deletes the account's active jobs, untimed, so a scenario can
// add jobs again without reaching the active-job limit.
func (h *harness) withdrawAll(ctx context.Context, a account) error {
	_, err := h.store.DB().ExecContext(ctx,
		`UPDATE jobs SET deleted_at = now() WHERE account_id = $1 AND deleted_at IS NULL`, a.ID)
	return err
}

func listen(addr string) (net.Listener, error) { return net.Listen("tcp", addr) }

// profile records the server's CPU profile for d, starting now, into
// bench/results/profiles/; wait returns its path once it is written, or ""
// if it failed, which only costs the profile.
func (h *harness) profile(ctx context.Context, name string, d time.Duration) (wait func() string) {
	return h.profileOf(ctx, h.server.debugAddr, name, d)
}

// profileOf is profile for the process whose profiler listens at
// debugAddr: the server's, or a floor's.
func (h *harness) profileOf(ctx context.Context, debugAddr, name string, d time.Duration) (wait func() string) {
	done := make(chan struct{})
	var written string
	go func() {
		defer close(done)
		written = h.saveProfileOf(ctx, debugAddr, name, fmt.Sprintf("profile?seconds=%d", int(d.Seconds())))
	}()
	return func() string { <-done; return written }
}

// saveProfile fetches /debug/pprof/QUERY from the server and keeps it with
// the report; it returns the file's path, or "" when that failed.
func (h *harness) saveProfile(ctx context.Context, name, query string) string {
	return h.saveProfileOf(ctx, h.server.debugAddr, name, query)
}

// saveProfileOf is saveProfile for the process whose profiler listens at
// debugAddr.
func (h *harness) saveProfileOf(ctx context.Context, debugAddr, name, query string) string {
	url := fmt.Sprintf("http://%s/debug/pprof/%s", debugAddr, query)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return ""
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		slog.Warn("profile", "name", name, "error", err)
		return ""
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		slog.Warn("profile", "name", name, "status", resp.StatusCode, "error", err)
		return ""
	}
	dir := filepath.Join(h.opts.out, "profiles")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return ""
	}
	path := filepath.Join(dir, strings.TrimSuffix(filepath.Base(reportPath("", h.started, h.opts.quick)), ".md")+"-"+name+".pprof")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return ""
	}
	h.profiles = append(h.profiles, path)
	return path
}

// copyFile copies an executable from to to.
func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o755)
}

// settle leaves the database with no work of its own pending: VACUUM
// ANALYZE, so autovacuum has nothing to start on what the load or the last
// scenario wrote, then CHECKPOINT, so the buffers they dirtied are not
// written (and fsynced) by the checkpointer while the next scenario is
// timed.
func (h *harness) settle(ctx context.Context) error {
	t := time.Now()
	if _, err := h.store.DB().ExecContext(ctx, `VACUUM ANALYZE`); err != nil {
		return fmt.Errorf("settle: %w", err)
	}
	if _, err := h.store.DB().ExecContext(ctx, `CHECKPOINT`); err != nil {
		return fmt.Errorf("settle: %w", err)
	}
	slog.Info("settled", "seconds", time.Since(t).Seconds())
	return nil
}
