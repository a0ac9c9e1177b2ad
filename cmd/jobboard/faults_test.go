package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/truckjobs/jobboard/internal/pglocal"
	"github.com/truckjobs/jobboard/internal/testfix"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// The fault tests inject real faults into a running `jobboard serve`:
// SIGKILL, SIGTERM, a stopped database, contending writers. They take
// about two minutes together, so make test-faults runs them and make test
// does not. Each logs its figures ("figures:"), which docs/reliability.md
// quotes.

func faultTest(t *testing.T) {
	t.Helper()
	if os.Getenv("JOBBOARD_TEST_FAULTS") == "" {
		t.Skip("a fault test: make test-faults runs it")
	}
}

// TestCallbackSurvivesSIGKILL: the server is killed while a callback is on
// the wire. After a restart the delivery is taken over and retried, and
// every attempt carries the same webhook-id, so the receiver can tell it is
// one event; the import itself was processed once.
func TestCallbackSurvivesSIGKILL(t *testing.T) {
	faultTest(t)
	var mu sync.Mutex
	var ids []string
	var bodies []string
	arrived := make(chan struct{}, 10)
	release := make(chan struct{})
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		ids = append(ids, r.Header.Get("webhook-id"))
		bodies = append(bodies, string(body))
		first := len(ids) == 1
		mu.Unlock()
		arrived <- struct{}{}
		if first {
			<-release // hold the first delivery until its sender is dead
		}
	}))
	defer receiver.Close()
	defer close(release)

	env := migratedEnv(t, "JOBBOARD_IMPORT_RESCUE_AFTER=3s",
		"JOBBOARD_CALLBACK_ALLOW_PRIVATE=true", "JOBBOARD_CALLBACK_RETRY_SCHEDULE=1s,1s,1s,1s,1s")
	acct := createAccount(t, env, "Callback crash")
	first := startService(t, env)
	var feed strings.Builder
	for i := range 10 {
		if i > 0 {
			feed.WriteString(",")
		}
		fmt.Fprintf(&feed, `{"referenceNumber":"CB%d","title":"T","state":"OH","driverType":"Student","freightType":"Box","description":"x"}`, i)
	}
	code, hdr, body := first.request("basic", acct.APIKey, "POST", "/api/v2.0/job-imports",
		`{"jobs":[`+feed.String()+`],"callbackUrl":"`+receiver.URL+`/hook"}`)
	if code != 202 {
		t.Fatalf("create: %d %s", code, body)
	}
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the first delivery never arrived")
	}
	if err := first.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = first.cmd.Wait()
	killedAt := time.Now()

	second := startService(t, env)
	select {
	case <-arrived:
	case <-time.After(90 * time.Second):
		t.Fatalf("no delivery after the restart\n%s", second.stderr)
	}
	took := time.Since(killedAt)
	mu.Lock()
	defer mu.Unlock()
	if ids[0] == "" || ids[1] != ids[0] {
		t.Errorf("webhook-ids %q: want the same id on every attempt", ids)
	}
	if !strings.Contains(bodies[1], `"status":"complete"`) || !strings.Contains(bodies[1], `"added":10`) || !strings.Contains(bodies[1], `"processed":10`) {
		t.Errorf("the delivered body: %s", bodies[1])
	}
	path := strings.TrimPrefix(hdr.Get("Location"), first.httpBase)
	_, _, got := second.request("basic", acct.APIKey, "GET", path, "")
	if !strings.Contains(got, `"added":10`) {
		t.Errorf("the import after the restart: %s", got)
	}
	t.Logf("figures: callback SIGKILL: 1 kill during delivery; %d deliveries received, all with webhook-id %s; redelivered %.1f s after the kill; import processed once (added 10)",
		len(ids), ids[0], took.Seconds())
}

// TestDatabaseOutage: PostgreSQL stops for 10 s under traffic. Requests
// fail fast with 503 and a body that says so, /readyz says not ready, and
// the service recovers by itself once the database is back.
func TestDatabaseOutage(t *testing.T) {
	faultTest(t)
	ctx := context.Background()
	// A cluster of its own: the shared one serves the other tests.
	dir, err := os.MkdirTemp("", "jobboard-outage-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	cluster, err := pglocal.Start(ctx, dir, pglocal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cluster.Stop() }()
	if err := cluster.CreateDatabase(ctx, "jobboard"); err != nil {
		t.Fatal(err)
	}
	env := []string{"DATABASE_URL=" + cluster.URL("jobboard"), "JOBBOARD_RATE_LIMIT=0"}
	runCommand(t, env, "migrate")
	acct := createAccount(t, env, "Outage")
	svc := startService(t, env)
	if code, _, body := svc.request("basic", acct.APIKey, "POST", "/api/v2.0/jobs.json",
		`[{"referenceNumber":"O1","title":"T","state":"OH","driverType":"Student","freightType":"Box","description":"x"}]`); code != 200 {
		t.Fatalf("post: %d %s", code, body)
	}

	type outcome struct {
		at      time.Time
		status  int // 0: no answer
		took    time.Duration
		unavail bool // the body names UNAVAILABLE
	}
	var mu sync.Mutex
	var outcomes []outcome
	stop := make(chan struct{})
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 5 * time.Second}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequest("GET", svc.httpBase+"/api/v2.0/jobs.json", nil)
				req.SetBasicAuth(acct.APIKey, "")
				start := time.Now()
				o := outcome{at: start}
				if resp, err := client.Do(req); err == nil {
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					o.status, o.unavail = resp.StatusCode, strings.Contains(string(body), `"status":"UNAVAILABLE"`)
				}
				o.took = time.Since(start)
				mu.Lock()
				outcomes = append(outcomes, o)
				mu.Unlock()
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	readyz := func() int {
		resp, err := client.Get(svc.httpBase + "/readyz")
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}

	grpcHealth := grpcHealthOf(svc)

	time.Sleep(2 * time.Second)
	// A scrape before the outage, as Prometheus makes them all along: the
	// queue gauges are read now, and read again only after 5 s.
	svc.scrape()
	if err := cluster.Stop(); err != nil {
		t.Fatal(err)
	}
	stoppedAt := time.Now()
	time.Sleep(time.Second)
	notReady := readyz()
	// gRPC health follows readiness within a second or two (followReadiness).
	grpcNotServing := testfix.Eventually(3*time.Second, func() bool {
		return grpcHealth() == healthpb.HealthCheckResponse_NOT_SERVING
	})
	grpcDownAfter := time.Since(stoppedAt)
	// Past the queue gauges' 5 s, so this scrape tries the database and
	// fails.
	time.Sleep(7*time.Second - grpcDownAfter)
	_, _, scraped := svc.scrape()
	duringOutage := parseMetrics(t, scraped)
	time.Sleep(10*time.Second - time.Since(stoppedAt))
	// The database accepts connections some time before Start returns: a
	// request that began after this may be answered by the returned one.
	restarting := time.Now()
	if _, err := pglocal.Start(ctx, dir, pglocal.Options{Port: cluster.Port()}); err != nil {
		t.Fatal(err)
	}
	backAt := time.Now()
	var readyAgain time.Duration
	for readyz() != 200 && time.Since(backAt) < 30*time.Second {
		time.Sleep(50 * time.Millisecond)
	}
	readyAgain = time.Since(backAt)
	grpcServing := testfix.Eventually(30*time.Second, func() bool {
		return grpcHealth() == healthpb.HealthCheckResponse_SERVING
	})
	grpcAgain := time.Since(backAt)
	// Traffic goes on until requests succeed again, and then 2 s more.
	var recovered time.Duration
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		mu.Lock()
		last := outcomes[len(outcomes)-1]
		mu.Unlock()
		if last.status == 200 && last.at.After(backAt) {
			recovered = last.at.Sub(backAt)
			break
		}
	}
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()

	if notReady != http.StatusServiceUnavailable {
		t.Errorf("/readyz answered %d during the outage, want 503", notReady)
	}
	if !grpcNotServing {
		t.Errorf("gRPC health still %v %v after the database stopped, want NOT_SERVING", grpcHealth(), grpcDownAfter)
	}
	checkOutageMetrics(t, duringOutage, stoppedAt)
	if !grpcServing {
		t.Errorf("gRPC health %v 30 s after the database returned, want SERVING", grpcHealth())
	}
	if readyAgain >= 30*time.Second || recovered == 0 {
		t.Fatalf("not recovered within 30 s of the database's return (ready after %v)", readyAgain)
	}
	var during, failed503, others int
	var slowest time.Duration
	for _, o := range outcomes {
		if o.at.Before(stoppedAt.Add(500*time.Millisecond)) || o.at.After(restarting) {
			if o.at.After(backAt.Add(recovered)) && o.status != 200 {
				t.Errorf("after recovery: status %d", o.status)
			}
			continue
		}
		during++
		switch {
		case o.status == http.StatusServiceUnavailable && o.unavail:
			failed503++
			slowest = max(slowest, o.took)
		default:
			others++
			t.Errorf("during the outage: status %d (no answer is 0) after %v, want 503 UNAVAILABLE", o.status, o.took)
		}
	}
	if during == 0 {
		t.Fatal("no request was made during the outage")
	}
	if slowest > 2*time.Second {
		t.Errorf("the slowest 503 took %v; failing fast means well under 2 s", slowest)
	}
	t.Logf("figures: database outage: stopped 10 s; %d requests in all, %d during the outage, all %d answered 503 UNAVAILABLE (slowest %v), %d other answers; /readyz 503 during, 200 again %.1f s after the database returned; gRPC health NOT_SERVING %.1f s after the stop, SERVING again %.1f s after the return; requests succeeded again after %.1f s",
		len(outcomes), during, failed503, slowest.Round(time.Millisecond), others, readyAgain.Seconds(),
		grpcDownAfter.Seconds(), grpcAgain.Seconds(), recovered.Seconds())
}

// grpcHealthOf checks the whole server's gRPC health of svc; UNKNOWN
// when the check fails.
func grpcHealthOf(svc *service) func() healthpb.HealthCheckResponse_ServingStatus {
	client := healthpb.NewHealthClient(svc.grpcConn())
	return func() healthpb.HealthCheckResponse_ServingStatus {
		resp, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{})
		if err != nil {
			return healthpb.HealthCheckResponse_UNKNOWN
		}
		return resp.GetStatus()
	}
}

// checkOutageMetrics checks a scrape made during a database outage that
// began at stoppedAt: the readiness gauges at 0, and the queue gauges
// still there with their last values, read before the stop.
func checkOutageMetrics(t *testing.T, during metricSamples, stoppedAt time.Time) {
	t.Helper()
	for _, gauge := range []string{"jobboard_database_up", "jobboard_ready"} {
		if v, ok := during.find(gauge, nil); !ok || v != 0 {
			t.Errorf("%s %v (%v) during the outage, want 0", gauge, v, ok)
		}
	}
	if v, ok := during.find("jobboard_queue_jobs", map[string]string{"kind": "job_import", "state": "available"}); !ok || v != 0 {
		t.Errorf("jobboard_queue_jobs of available imports %v (%v) during the outage, want the last value read, 0", v, ok)
	}
	stopped := float64(stoppedAt.UnixNano()) / 1e9
	if v, ok := during.find("jobboard_queue_read_timestamp_seconds", nil); !ok || v > stopped {
		t.Errorf("jobboard_queue_read_timestamp_seconds %.3f (%v) during the outage, want the read before the stop (%.3f)",
			v, ok, stopped)
	}
}

// TestSIGTERMUnderLoad: SIGTERM while clients post and read. A post whose
// body is still arriving when the signal comes completes; no request gets a 5xx; new
// connections are refused once the server has stopped listening; the
// process exits 0.
func TestSIGTERMUnderLoad(t *testing.T) {
	faultTest(t)
	env := migratedEnv(t, "JOBBOARD_RATE_LIMIT=0")
	acct := createAccount(t, env, "Shutdown")
	svc := startService(t, env)
	batch := func(prefix string, n int) string {
		var b strings.Builder
		b.WriteString("[")
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"referenceNumber":"%s%d","title":"T","state":"OH","driverType":"Student","freightType":"Box","description":"<p>x</p>"}`, prefix, i)
		}
		return b.String() + "]"
	}

	var ok, fiveXX, refused, otherErr atomic.Int64
	var lastErr atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Timeout: 30 * time.Second}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				method, path, body := "GET", "/api/v2.0/jobs.json", ""
				if w%2 == 0 {
					method, path, body = "POST", "/api/v2.0/jobs.json", batch(fmt.Sprintf("W%dI%d", w, i), 20)
				}
				req, _ := http.NewRequest(method, svc.httpBase+path, strings.NewReader(body))
				req.SetBasicAuth(acct.APIKey, "")
				resp, err := client.Do(req)
				switch {
				case err != nil && errors.Is(err, syscall.ECONNREFUSED):
					refused.Add(1)
					time.Sleep(10 * time.Millisecond)
				case err != nil:
					// A keep-alive connection the server closed while idle:
					// the request never reached a handler.
					otherErr.Add(1)
					lastErr.Store(err.Error())
				case resp.StatusCode >= 500:
					fiveXX.Add(1)
					resp.Body.Close()
				default:
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					ok.Add(1)
				}
			}
		}()
	}
	time.Sleep(2 * time.Second)

	// A post of 1,000 jobs in flight when the signal arrives: its headers
	// and the first part of its body are sent, then the signal, then the
	// rest, so the server has accepted it and is still reading it.
	big := batch("BIG", 1000)
	bodyR, bodyW := io.Pipe()
	req, _ := http.NewRequest("POST", svc.httpBase+"/api/v2.0/jobs.json", bodyR)
	req.ContentLength = int64(len(big))
	req.SetBasicAuth(acct.APIKey, "")
	inflight := make(chan string, 1)
	go func() {
		resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
		if err != nil {
			inflight <- err.Error()
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		inflight <- fmt.Sprintf("%d %s", resp.StatusCode, body)
	}()
	if _, err := bodyW.Write([]byte(big[:1024])); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	signalled := time.Now()
	if err := svc.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if _, err := bodyW.Write([]byte(big[1024:])); err != nil {
		t.Errorf("the rest of the body after SIGTERM: %v", err)
	}
	bodyW.Close()
	got := <-inflight
	if !strings.HasPrefix(got, "200 ") || !strings.Contains(got, `"added":1000`) {
		t.Errorf("the post in flight at SIGTERM: %.300s", got)
	}
	err := svc.cmd.Wait()
	exited := time.Since(signalled)
	close(stop)
	wg.Wait()
	if err != nil || svc.cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("exit: %v (status %d)\n%s", err, svc.cmd.ProcessState.ExitCode(), svc.stderr)
	}
	if _, err := net.DialTimeout("tcp", strings.TrimPrefix(svc.httpBase, "http://"), time.Second); err == nil {
		t.Error("a new connection was accepted after shutdown")
	}
	if fiveXX.Load() != 0 {
		t.Errorf("%d answers were 5xx", fiveXX.Load())
	}
	if ok.Load() == 0 {
		t.Error("no request succeeded")
	}
	t.Logf("figures: SIGTERM under load: 16 clients; %d answered 2xx/4xx, %d 5xx, %d refused connections after shutdown, %d requests cut on idle keep-alive connections (last: %v); the 1,000-job post in flight completed; exit 0 %.1f s after the signal",
		ok.Load(), fiveXX.Load(), refused.Load(), otherErr.Load(), lastErr.Load(), exited.Seconds())
}

// TestConcurrentWriters: 8 clients post overlapping batches for 30 s into
// one account, past its 10,000 active jobs. No referenceNumber is stored
// twice, the account never holds more than 10,000 active jobs, and the
// summaries add up to the final state.
func TestConcurrentWriters(t *testing.T) {
	faultTest(t)
	dbURL := storetest.URL(t)
	env := []string{"DATABASE_URL=" + dbURL, "JOBBOARD_RATE_LIMIT=0"}
	runCommand(t, env, "migrate")
	acct := createAccount(t, env, "Contention")
	svc := startService(t, env)
	db, err := sqlx.Open("postgres", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	const pool, batchSize, writers = 12_000, 250, 8
	duration := 30 * time.Second
	var added, updated, unchanged, limited, sent, posts atomic.Int64
	var maxActive atomic.Int64
	deadline := time.Now().Add(duration)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			client := &http.Client{Timeout: 60 * time.Second}
			for i := 0; time.Now().Before(deadline); i++ {
				// A run of references from the shared pool, so writers
				// overlap, with a title that changes now and then.
				start := rng.IntN(pool - batchSize)
				var b strings.Builder
				b.WriteString("[")
				for k := range batchSize {
					if k > 0 {
						b.WriteString(",")
					}
					fmt.Fprintf(&b, `{"referenceNumber":"P%d","title":"Title %d","state":"OH","driverType":"Student","freightType":"Box","description":"x"}`,
						start+k, rng.IntN(3))
				}
				b.WriteString("]")
				req, _ := http.NewRequest("POST", svc.httpBase+"/api/v2.0/jobs.json", strings.NewReader(b.String()))
				req.SetBasicAuth(acct.APIKey, "")
				resp, err := client.Do(req)
				if err != nil {
					t.Errorf("post: %v", err)
					return
				}
				var sum struct {
					Added, Updated, Unchanged, Errors int64
					ErrorMessages                     map[string]struct{ Errors []json.RawMessage }
				}
				err = json.NewDecoder(resp.Body).Decode(&sum)
				resp.Body.Close()
				if err != nil || resp.StatusCode != 200 {
					t.Errorf("post: %d %v", resp.StatusCode, err)
					return
				}
				limits := int64(len(sum.ErrorMessages["limitErrors"].Errors))
				if sum.Errors != limits {
					t.Errorf("a post reported %d errors, %d of them limits: only limits were expected", sum.Errors, limits)
				}
				added.Add(sum.Added)
				updated.Add(sum.Updated)
				unchanged.Add(sum.Unchanged)
				limited.Add(limits)
				sent.Add(batchSize)
				posts.Add(1)
			}
		}()
	}
	// Watch the active count while the writers run.
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		for time.Now().Before(deadline) {
			var n int64
			if err := db.Get(&n, `SELECT count(*) FROM jobs WHERE account_id = $1 AND deleted_at IS NULL`, acct.ID); err == nil && n > maxActive.Load() {
				maxActive.Store(n)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	wg.Wait()
	<-watchDone

	var active, distinct int64
	if err := db.QueryRow(`SELECT count(*), count(DISTINCT reference_number) FROM jobs WHERE account_id = $1 AND deleted_at IS NULL`, acct.ID).Scan(&active, &distinct); err != nil {
		t.Fatal(err)
	}
	var rows int64
	if err := db.Get(&rows, `SELECT count(*) FROM jobs WHERE account_id = $1`, acct.ID); err != nil {
		t.Fatal(err)
	}
	if active != distinct || rows != active {
		t.Errorf("%d active jobs, %d distinct references, %d rows: a reference is stored twice", active, distinct, rows)
	}
	if active > 10_000 || maxActive.Load() > 10_000 {
		t.Errorf("active jobs reached %d (at the end %d), above 10,000", maxActive.Load(), active)
	}
	if added.Load() != active {
		t.Errorf("the summaries added %d jobs; %d are stored", added.Load(), active)
	}
	if got := added.Load() + updated.Load() + unchanged.Load() + limited.Load(); got != sent.Load() {
		t.Errorf("summaries account for %d of %d jobs sent", got, sent.Load())
	}
	if limited.Load() == 0 {
		t.Error("no post met the active limit: the test did not push the account past it")
	}
	t.Logf("figures: concurrent writers: %d writers for %v, %d posts of %d jobs (%d jobs sent): %d added, %d updated, %d unchanged, %d refused at the limit; %d active at most, %d at the end, 0 duplicates",
		writers, duration, posts.Load(), batchSize, sent.Load(), added.Load(), updated.Load(), unchanged.Load(), limited.Load(),
		maxActive.Load(), active)
}
