package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/server/store"
)

// oneJob is a post of one job with the reference.
func oneJob(ref string) string {
	return fmt.Sprintf(`[{"referenceNumber":%q,"title":"Regional Driver","state":"TX","driverType":"Company Driver","freightType":"Dry Van","description":"x"}]`, ref)
}

// answer is a request made in the background.
type answer struct {
	name string
	code int
	body string
	err  error
}

// sendAsync makes a request on a goroutine of its own (the test's helpers
// may not fail the test from there) and delivers its answer to done.
func sendAsync(svc *service, done chan<- answer, name, key, method, path, body string) {
	go func() {
		a := answer{name: name}
		req, err := http.NewRequest(method, svc.httpBase+path, strings.NewReader(body))
		if err == nil {
			req.SetBasicAuth(key, "")
			var resp *http.Response
			if resp, err = http.DefaultClient.Do(req); err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				a.code, a.body = resp.StatusCode, string(b)
			}
		}
		a.err = err
		done <- a
	}()
}

// waitGauge waits until the metrics show the admission gauge at n.
func waitGauge(t *testing.T, svc *service, gauge string, n int) {
	t.Helper()
	want := fmt.Sprintf("\njobboard_admission_%s %d\n", gauge, n)
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, _, metrics := svc.scrape()
		if strings.Contains(metrics, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobboard_admission_%s never reached %d", gauge, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestAdmissionControl saturates a server allowed one request at a time and
// four in line, by holding a lock on the jobs table so the request at work
// cannot finish. Requests then wait in arrival order (the posts' job ids,
// given as each runs, follow it), one account may take at most half the
// line, and past it REST answers 503 UNAVAILABLE with Retry-After in the
// suffix's format and gRPC Unavailable with a RetryInfo, at once; health,
// readiness and metrics keep answering. Once the lock goes, every waiting
// request is served and stored, the refused post stored nothing, and the
// refusals made one log line.
func TestAdmissionControl(t *testing.T) {
	env := migratedEnv(t)
	a := createAccount(t, env, "Busy")
	b := createAccount(t, env, "Neighbour")
	svc := startService(t, append(env, "JOBBOARD_MAX_IN_FLIGHT=1", "JOBBOARD_ADMISSION_QUEUE=4", "JOBBOARD_ADMISSION_WAIT=1m"))
	if code, _, body := svc.request("basic", a.APIKey, "POST", "/api/v2.0/jobs.json", twoJobs); code != 200 {
		t.Fatalf("posting before the overload: %d %s", code, body)
	}
	if code, _, body := svc.request("basic", b.APIKey, "GET", "/api/v2.0/jobs.json", ""); code != 200 {
		t.Fatalf("b's first request: %d %s", code, body)
	}
	st, err := store.Open(context.Background(), strings.TrimPrefix(env[0], "DATABASE_URL="))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tx, err := st.DB().BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}

	done := make(chan answer, 8)
	sendAsync(svc, done, "the request at work", a.APIKey, "GET", "/api/v2.0/jobs.json", "")
	waitGauge(t, svc, "in_progress", 1)
	for i, q := range []struct{ name, key, ref string }{
		{"a's first post", a.APIKey, "Q1"}, {"b's first post", b.APIKey, "Q2"},
		{"a's second post", a.APIKey, "Q3"}, {"b's second post", b.APIKey, "Q4"},
	} {
		sendAsync(svc, done, q.name, q.key, "POST", "/api/v2.0/jobs.json", oneJob(q.ref))
		waitGauge(t, svc, "queued", i+1)
		if i == 2 {
			// a holds its half of the line (2 of 4): its third waits not.
			checkSaturated(t, svc, a.APIKey, "POST", "/api/v2.0/jobs.json", oneJob("REFUSED"), "this account already has 2 requests waiting")
		}
	}
	checkSaturated(t, svc, b.APIKey, "GET", "/api/v2.0/drivers.xml", "", "1 requests in progress and 4 waiting")
	checkGRPCRefusal(t, svc, b.APIKey)
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, _, body := svc.request("", "", "GET", path, ""); code != 200 {
			t.Errorf("%s while saturated: %d %s", path, code, body)
		}
	}

	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if ans := <-done; ans.err != nil || ans.code != 200 {
			t.Errorf("%s: %d %s %v, want 200 once the lock went", ans.name, ans.code, ans.body, ans.err)
		}
	}
	checkStoredInOrder(t, st, []string{"Q1", "Q2", "Q3", "Q4"})
	checkAdmissionMetrics(t, svc)
	if n := strings.Count(svc.stderr.String(), "refusing requests: the server is saturated"); n != 1 {
		t.Errorf("%d refusal log lines for 3 refusals within seconds, want 1", n)
	}
}

// checkSaturated makes a request that must be refused at once: 503
// UNAVAILABLE with Retry-After 1, the reason in the message, in the
// suffix's format.
func checkSaturated(t *testing.T, svc *service, key, method, path, body, reason string) {
	t.Helper()
	started := time.Now()
	code, hdr, got := svc.request("basic", key, method, path, body)
	if took := time.Since(started); took > 2*time.Second {
		t.Errorf("%s %s refused after %s, want at once", method, path, took)
	}
	if code != 503 || hdr.Get("Retry-After") != "1" {
		t.Errorf("%s %s: %d with Retry-After %q, want 503 and 1", method, path, code, hdr.Get("Retry-After"))
	}
	wantBody := `{"error":{"code":503,"status":"UNAVAILABLE","message":"the server is saturated: `
	if strings.HasSuffix(path, ".xml") {
		wantBody = `<error><code>503</code><status>UNAVAILABLE</status><message>the server is saturated: `
	}
	if !strings.Contains(got, wantBody) || !strings.Contains(got, reason) || !strings.Contains(got, "retry after 1 s") {
		t.Errorf("%s %s: body %s, want %s... naming %q", method, path, got, wantBody, reason)
	}
}

func checkGRPCRefusal(t *testing.T, svc *service, key string) {
	t.Helper()
	_, err := jobboardv2.NewJobServiceClient(svc.grpcConn()).ListJobs(withKey(key), &jobboardv2.ListJobsRequest{})
	st := status.Convert(err)
	if st.Code() != codes.Unavailable || !strings.Contains(st.Message(), "the server is saturated") {
		t.Fatalf("gRPC while saturated: %v, want Unavailable saying the server is saturated", err)
	}
	for _, d := range st.Details() {
		if r, ok := d.(*errdetails.RetryInfo); ok && r.GetRetryDelay().AsDuration() == time.Second {
			return
		}
	}
	t.Errorf("gRPC details %v, want a RetryInfo of 1 s", st.Details())
}

// checkStoredInOrder: the jobs posted while the server was saturated are
// all stored, their ids in the order given, and every other job is the
// one posted before (the refused post stored nothing).
func checkStoredInOrder(t *testing.T, st *store.Store, refs []string) {
	t.Helper()
	var stored []string
	if err := st.DB().Select(&stored, `SELECT reference_number FROM jobs ORDER BY id`); err != nil {
		t.Fatal(err)
	}
	want := append([]string{"E1", "E2"}, refs...)
	if strings.Join(stored, ",") != strings.Join(want, ",") {
		t.Errorf("jobs stored in id order %v, want %v", stored, want)
	}
}

// checkAdmissionMetrics: the refusals counted by reason, the waits timed,
// and nothing left in progress or in line.
func checkAdmissionMetrics(t *testing.T, svc *service) {
	t.Helper()
	_, _, metrics := svc.scrape()
	for _, want := range []string{
		`jobboard_admission_refused_total{reason="account_share"} 1`,
		`jobboard_admission_refused_total{reason="queue_full"} 2`,
		`jobboard_admission_refused_total{reason="expected_wait"} 0`,
		`jobboard_admission_refused_total{reason="wait_timeout"} 0`,
		`jobboard_admission_refused_total{reason="account_in_progress"} 0`,
		`jobboard_admission_refused_total{reason="queue_bytes"} 0`,
		`jobboard_admission_queue_wait_seconds_count 4`,
		"jobboard_admission_queued 0",
		"jobboard_admission_in_progress 0",
	} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(want) + `$`).MatchString(metrics) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

func TestAdmissionSettingsChecked(t *testing.T) {
	for _, tt := range []struct{ env, want string }{
		{"JOBBOARD_MAX_IN_FLIGHT=many", `JOBBOARD_MAX_IN_FLIGHT: "many" is not a whole number`},
		{"JOBBOARD_MAX_IN_FLIGHT=-1", `JOBBOARD_MAX_IN_FLIGHT: "-1" is not a whole number`},
		{"JOBBOARD_ADMISSION_QUEUE=1.5", `JOBBOARD_ADMISSION_QUEUE: "1.5" is not a whole number`},
		{"JOBBOARD_ADMISSION_WAIT=1", `JOBBOARD_ADMISSION_WAIT: "1" is not a positive Go duration`},
		{"JOBBOARD_ADMISSION_WAIT=0s", `JOBBOARD_ADMISSION_WAIT: "0s" is not a positive Go duration`},
		{"JOBBOARD_ADMISSION_ACCOUNT_IN_FLIGHT=33", `JOBBOARD_ADMISSION_ACCOUNT_IN_FLIGHT: "33" is not a whole number of requests from 0`},
		{"JOBBOARD_ADMISSION_ACCOUNT_IN_FLIGHT=-1", `JOBBOARD_ADMISSION_ACCOUNT_IN_FLIGHT: "-1" is not a whole number`},
	} {
		t.Run(tt.env, func(t *testing.T) {
			cfg := config{rateLimit: "50", rateBurst: "100", authFailureLimit: "10", authFailureBurst: "20",
				httpAddr: ":8080", callbackAllowPrivate: "false", importRescueAfter: "10m", webhookWorkers: "20",
				webhookDisableAfter: "120h", maxInFlight: defaultMaxInFlight, admissionQueue: defaultAdmissionQueue,
				admissionWait: defaultAdmissionWait, accountFlight: defaultAccountInFlight}
			name, value, _ := strings.Cut(tt.env, "=")
			*map[string]*string{"JOBBOARD_MAX_IN_FLIGHT": &cfg.maxInFlight, "JOBBOARD_ADMISSION_QUEUE": &cfg.admissionQueue,
				"JOBBOARD_ADMISSION_WAIT": &cfg.admissionWait, "JOBBOARD_ADMISSION_ACCOUNT_IN_FLIGHT": &cfg.accountFlight}[name] = value
			_, err := cfg.serverConfig()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestSlowBodiesHoldNoPlace: two accounts sending request bodies slowly on
// many connections hold no place of the admission control while their
// bytes arrive (docs/api.md 7), so a third account's REST and gRPC calls are
// admitted at once, and the slow posts are still stored once their bodies
// arrive in full.
func TestSlowBodiesHoldNoPlace(t *testing.T) {
	env := migratedEnv(t)
	slow := []account{createAccount(t, env, "Slow One"), createAccount(t, env, "Slow Two")}
	third := createAccount(t, env, "Third")
	// 4 places, 2 an account, a line of 4: 8 slow bodies holding places
	// would leave the third account nothing but a refusal.
	svc := startService(t, append(env, "JOBBOARD_MAX_IN_FLIGHT=4", "JOBBOARD_ADMISSION_QUEUE=4", "JOBBOARD_ADMISSION_WAIT=2s"))
	var conns []*slowPost
	for i := range 8 {
		p := startSlowPost(t, svc, slow[i%2].APIKey, oneJob(fmt.Sprintf("SLOW%d", i)))
		conns = append(conns, p)
	}
	// Each has sent its headers and a first byte; the server reads them
	// within moments (on the code before this rule, each then held a place).
	time.Sleep(500 * time.Millisecond)
	started := time.Now()
	if code, _, body := svc.request("basic", third.APIKey, "GET", "/api/v2.0/jobs.json", ""); code != 200 {
		t.Errorf("third account's REST call during the slow bodies: %d %s", code, body)
	}
	if _, err := jobboardv2.NewJobServiceClient(svc.grpcConn()).ListJobs(withKey(third.APIKey), &jobboardv2.ListJobsRequest{}); err != nil {
		t.Errorf("third account's gRPC call during the slow bodies: %v", err)
	}
	took := time.Since(started)
	t.Logf("third account's REST and gRPC calls during %d slow bodies: %s", len(conns), took)
	if took > time.Second {
		t.Errorf("third account's calls took %s during the slow bodies, want well under the 2 s admission wait", took)
	}
	for _, p := range conns {
		if code, body := p.finish(t); code != 200 {
			t.Errorf("slow post once its body arrived: %d %s", code, body)
		}
	}
}

// slowPost is a REST post whose body is being sent by hand, over a
// connection of its own.
type slowPost struct {
	conn net.Conn
	body string
}

// startSlowPost sends a post's headers and the first byte of its body.
func startSlowPost(t *testing.T, svc *service, key, body string) *slowPost {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(svc.httpBase, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	auth := base64.StdEncoding.EncodeToString([]byte(key + ":"))
	if _, err := fmt.Fprintf(conn, "POST /api/v2.0/jobs.json HTTP/1.1\r\nHost: jobboard\r\nAuthorization: Basic %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", auth, len(body), body[:1]); err != nil {
		t.Fatal(err)
	}
	return &slowPost{conn: conn, body: body[1:]}
}

// finish sends the rest of the body and reads the answer.
func (p *slowPost) finish(t *testing.T) (int, string) {
	t.Helper()
	if _, err := io.WriteString(p.conn, p.body); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(p.conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
