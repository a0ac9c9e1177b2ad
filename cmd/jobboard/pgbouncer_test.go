package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/internal/openapicheck"
	"github.com/truckjobs/jobboard/internal/pgbouncertest"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// behindPgBouncer is a service whose DATABASE_URL is PgBouncer in
// transaction pooling mode, with the direct URL for what needs a session,
// as docs/deploy.md 3 runs it.
type behindPgBouncer struct {
	env      []string
	bouncer  *pgbouncertest.Bouncer
	svc      *service
	accounts []account
	// jobIDs and driverIDs are each account's, by account index.
	jobIDs, driverIDs [][]int64
}

// TestBehindPgBouncer: under concurrent mixed load from several accounts
// (job posts, job reads over REST and gRPC, the drivers list and detail),
// with an import through the queue to its callback and an API key
// revoked meanwhile, every request succeeds and nothing anywhere mentions
// a prepared statement. PgBouncer has 3 server connections for a dozen
// clients, so consecutive transactions of one client connection run on
// different server connections.
func TestBehindPgBouncer(t *testing.T) {
	direct := storetest.URL(t)
	bouncer := pgbouncertest.Start(t, direct, pgbouncertest.Options{PoolSize: 3})
	env := []string{"DATABASE_URL=" + bouncer.URL(), "JOBBOARD_DATABASE_DIRECT_URL=" + direct}
	runCommand(t, env, "migrate")
	b := &behindPgBouncer{env: env, bouncer: bouncer}
	b.svc = startService(t, append(env, "JOBBOARD_CALLBACK_ALLOW_PRIVATE=true",
		"JOBBOARD_CALLBACK_RETRY_SCHEDULE=100ms,100ms", "JOBBOARD_RATE_LIMIT=0"))
	for i := range 3 {
		b.addAccount(t, i)
	}
	grpcDrivers := jobboardv2.NewDriverServiceClient(b.svc.grpcConn())

	var wg sync.WaitGroup
	var requests, failures atomic.Int64
	var failed sync.Map // first failure of each kind, for the message
	for w := range 9 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.load(w, grpcDrivers, &requests, &failures, &failed)
		}()
	}
	importDone := make(chan string, 1)
	go func() { importDone <- b.importWithCallback() }()
	revoked := b.revokeKey(t)
	wg.Wait()
	if msg := <-importDone; msg != "" {
		t.Error(msg)
	}
	if revoked != "" {
		t.Error(revoked)
	}
	t.Logf("figures: %d requests through PgBouncer (transaction mode, 3 server connections), %d failed", requests.Load(), failures.Load())
	failed.Range(func(k, v any) bool { t.Errorf("%s: %s", k, v); return true })
	logs := b.svc.stderr.String()
	for _, bad := range []string{"prepared statement", `"level":"ERROR"`} {
		if strings.Contains(logs, bad) {
			t.Errorf("the service logged %q:\n%s", bad, logs)
		}
	}
	if strings.Contains(bouncer.Log(), "prepared statement") {
		t.Errorf("PgBouncer logged a prepared statement error:\n%s", bouncer.Log())
	}
}

// addAccount creates account i with four jobs and three drivers who
// applied to them, and notes their ids.
func (b *behindPgBouncer) addAccount(t *testing.T, i int) {
	a := createAccount(t, b.env, fmt.Sprintf("Pooled %d", i))
	b.accounts = append(b.accounts, a)
	var jobs, drivers []string
	for n := range 4 {
		jobs = append(jobs, fmt.Sprintf(`{"referenceNumber":"P%d","title":"T%d","state":"TX","driverType":"Student","freightType":"Box","description":"x"}`, n, n))
	}
	if code, _, body := b.svc.request("basic", a.APIKey, "POST", "/api/v2.0/jobs.json", "["+strings.Join(jobs, ",")+"]"); code != 200 {
		t.Fatalf("post jobs: %d %s", code, body)
	}
	for d := range 3 {
		drivers = append(drivers, fmt.Sprintf(`{"first_name": "D%d", "last_name": "Pool", "address": "1 A St",
			"city": "Omaha", "state": "NE", "zip": "68102", "email": "d%d-%d@example.com", "phone": "4025550100",
			"driver_type": "Student", "experience": "1", "sent": "2026-10-01T10:00:00Z",
			"job_applications": [{"reference": "P%d", "is_direct_app": true, "created_at": "2026-10-01T11:00:00Z"}]}`, d, i, d, d))
	}
	file := filepath.Join(t.TempDir(), "drivers.json")
	if err := os.WriteFile(file, []byte("["+strings.Join(drivers, ",")+"]"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := runCommand(t, b.env, "drivers", "import", "--account", fmt.Sprint(a.ID), file); strings.TrimSpace(out) != `{"imported":3}` {
		t.Fatalf("drivers import printed %q", out)
	}
	b.readIDs(t, i)
}

// readIDs notes account i's job and driver ids.
func (b *behindPgBouncer) readIDs(t *testing.T, i int) {
	a := b.accounts[i]
	var jobs []struct{ ID int64 }
	_, _, body := b.svc.request("basic", a.APIKey, "GET", "/api/v2.0/jobs.json", "")
	var drivers []struct{ ID int64 }
	_, _, dbody := b.svc.request("basic", a.APIKey, "GET", "/api/v2.0/drivers.json", "")
	if json.Unmarshal([]byte(body), &jobs) != nil || json.Unmarshal([]byte(dbody), &drivers) != nil || len(jobs) != 4 || len(drivers) != 3 {
		t.Fatalf("account %d: jobs %s, drivers %s", i, body, dbody)
	}
	b.jobIDs = append(b.jobIDs, nil)
	b.driverIDs = append(b.driverIDs, nil)
	for _, j := range jobs {
		b.jobIDs[i] = append(b.jobIDs[i], j.ID)
	}
	for _, d := range drivers {
		b.driverIDs[i] = append(b.driverIDs[i], d.ID)
	}
}

// load is one client's share of the mixed load: 40 rounds of a post and
// reads of every kind, for account w mod 3 (the account whose key is
// revoked meanwhile uses its second key).
func (b *behindPgBouncer) load(w int, grpcDrivers jobboardv2.DriverServiceClient, requests, failures *atomic.Int64, failed *sync.Map) {
	i := w % len(b.accounts)
	a := b.accounts[i]
	for round := range 40 {
		jobID, driverID := b.jobIDs[i][round%4], b.driverIDs[i][round%3]
		post := fmt.Sprintf(`[{"referenceNumber":"W%d-%d","title":"Load","state":"OH","driverType":"Student","freightType":"Box","description":"x"}]`, w, round)
		for _, r := range []struct{ kind, method, path, body string }{
			{"post jobs", "POST", "/api/v2.0/jobs.json", post},
			{"list jobs", "GET", "/api/v2.0/jobs.json?page_size=5", ""},
			{"retrieve job", "GET", fmt.Sprintf("/api/v2.0/jobs.json/%d", jobID), ""},
			{"list drivers", "GET", "/api/v2.0/drivers.json?max=2&sort=-sent", ""},
			{"driver detail", "GET", fmt.Sprintf("/api/v2.0/drivers.json/%d", driverID), ""},
		} {
			requests.Add(1)
			if code, body, err := b.svc.call(a.APIKey, r.method, r.path, r.body); err != nil || code != 200 {
				failures.Add(1)
				failed.LoadOrStore(r.kind, fmt.Sprintf("%d %s %v", code, body, err))
			}
		}
		requests.Add(1)
		if _, err := grpcDrivers.ListDrivers(withKey(a.APIKey), &jobboardv2.ListDriversRequest{PageSize: 2}); err != nil {
			failures.Add(1)
			failed.LoadOrStore("gRPC ListDrivers", err.Error())
		}
	}
}

// importWithCallback runs an import through the queue and waits for its
// completion callback; it returns what went wrong, if anything.
func (b *behindPgBouncer) importWithCallback() string {
	delivered := make(chan string, 4)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		delivered <- string(body)
	}))
	defer receiver.Close()
	body := fmt.Sprintf(`{"jobs": [{"referenceNumber": "IMP1", "title": "Imported", "state": "OH", "driverType": "Student",
		"freightType": "Box", "description": "x"}], "callbackUrl": %q}`, receiver.URL+"/done")
	code, created, err := b.svc.call(b.accounts[0].APIKey, "POST", "/api/v2.0/job-imports", body)
	if err != nil || code != 202 {
		return fmt.Sprintf("import: %d %s %v", code, created, err)
	}
	select {
	case got := <-delivered:
		if !strings.Contains(got, `"status":"complete"`) || !strings.Contains(got, `"added":1`) {
			return "import callback: " + got
		}
		return ""
	case <-time.After(30 * time.Second):
		return "the import's callback did not arrive within 30 s"
	}
}

// revokeKey revokes a key of the third account during the load, through
// the admin command, and checks the running server confirmed it and
// refuses the key at once. It returns what went wrong, if anything.
func (b *behindPgBouncer) revokeKey(t *testing.T) string {
	a := b.accounts[2]
	second := createKey(t, b.env, a.ID)
	time.Sleep(200 * time.Millisecond) // into the load
	if code, _, err := b.svc.call(second, "GET", "/api/v2.0/jobs.json?page_size=1", ""); err != nil || code != 200 {
		return fmt.Sprintf("the key to revoke, before: %d %v", code, err)
	}
	out := runCommand(t, b.env, "keys", "revoke", second)
	if !strings.Contains(out, `"revoked":1,"servers":1,"confirmed":1`) {
		return "keys revoke printed " + out
	}
	if code, _, err := b.svc.call(second, "GET", "/api/v2.0/jobs.json?page_size=1", ""); err != nil || code != 401 {
		return fmt.Sprintf("the revoked key right after keys revoke: %d %v, want 401", code, err)
	}
	return ""
}

// call is request for goroutines other than the test's: it returns the
// error instead of failing the test.
func (s *service) call(key, method, path, body string) (int, string, error) {
	req, err := http.NewRequestWithContext(context.Background(), method, s.httpBase+path, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.SetBasicAuth(key, "")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil {
		err = openapicheck.Answer(req, resp.StatusCode, resp.Header, b)
	}
	return resp.StatusCode, string(b), err
}

// TestReadDatabaseDown: with a read database that cannot be reached the
// service is ready, the drivers list and detail answer from the primary,
// and the logs and metrics say the read database is down, without its
// password.
func TestReadDatabaseDown(t *testing.T) {
	env := migratedEnv(t)
	a := createAccount(t, env, "Reads")
	svc := startService(t, append(env, "JOBBOARD_READ_DATABASE_URL="+closedURL(t))) // ready, or it fails
	for _, path := range []string{"/api/v2.0/drivers.json", "/api/v2.0/drivers.xml?max=5", "/api/v2.0/drivers.json/1"} {
		want := 200
		if strings.HasSuffix(path, "/1") {
			want = 404 // no driver: found nowhere, not a failure
		}
		if code, _, body := svc.request("basic", a.APIKey, "GET", path, ""); code != want {
			t.Errorf("%s with the read database down: %d %s", path, code, body)
		}
	}
	_, _, body := svc.scrape()
	m := parseMetrics(t, body)
	if up, ok := m.find("jobboard_read_database_up", nil); !ok || up != 0 {
		t.Errorf("jobboard_read_database_up %v (%v), want 0:\n%s", up, ok, m.family("jobboard_read_database"))
	}
	if n, ok := m.find("jobboard_read_database_fallbacks_total", nil); !ok || n != 3 {
		t.Errorf("jobboard_read_database_fallbacks_total %v (%v), want 3", n, ok)
	}
	logs := svc.stderr.String()
	if lines := logLines(logs, "read database unreachable; the drivers list and detail and job search are read from the primary until it is back"); len(lines) != 1 {
		t.Errorf("warnings that the read database is down: %q, want 1\n%s", lines, logs)
	}
	if strings.Contains(logs, secretPassword) {
		t.Errorf("the logs show the read database's password:\n%s", logs)
	}
}

// TestDatabaseStatementsMode: the service says once at start, and in
// jobboard_database_prepared_statements, whether its hottest reads are
// prepared: yes on a direct connection, no through PgBouncer; the log line
// gives the addresses compared, never the URL's password.
func TestDatabaseStatementsMode(t *testing.T) {
	direct := strings.Replace(storetest.URL(t), "postgres://jobboard@", "postgres://jobboard:s3cret-word@", 1)
	bouncer := pgbouncertest.Start(t, direct, pgbouncertest.Options{PoolSize: 2})
	for _, tt := range []struct {
		name, url, mode, metric string
	}{
		{"direct", direct, "prepared", "jobboard_database_prepared_statements 1"},
		{"through PgBouncer", bouncer.URL(), "unprepared", "jobboard_database_prepared_statements 0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			svc := startService(t, []string{"DATABASE_URL=" + tt.url, "JOBBOARD_DATABASE_DIRECT_URL=" + direct})
			var lines []string
			for _, line := range strings.Split(svc.stderr.String(), "\n") {
				if strings.Contains(line, `"msg":"database statements"`) {
					lines = append(lines, line)
				}
			}
			if len(lines) != 1 || !strings.Contains(lines[0], `"mode":"`+tt.mode+`"`) || strings.Contains(lines[0], "s3cret") {
				t.Errorf("want one line with mode %s and no password, got %q", tt.mode, lines)
			}
			resp, err := http.Get(svc.metricsBase + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if !strings.Contains(string(body), "\n"+tt.metric+"\n") {
				t.Errorf("no %q in the metrics", tt.metric)
			}
		})
	}
}
