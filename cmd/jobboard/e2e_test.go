package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/internal/openapicheck"
	"github.com/truckjobs/jobboard/internal/testfix"
	"github.com/truckjobs/jobboard/server/store/storetest"
	"github.com/truckjobs/jobboard/server/webhook"
)

// buildDir holds the programs the tests build once per run: the jobboard
// binary, and grpcurl when .bin has none. TestMain removes it after the
// tests; t.TempDir would not do, since it belongs to one test.
var buildDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "jobboard-test-build-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "build directory:", err)
		os.Exit(1)
	}
	buildDir = dir
	code := storetest.Run(m)
	os.RemoveAll(dir)
	os.Exit(code)
}

// jobboardBinary returns the real binary, built once per test run.
func jobboardBinary(t *testing.T) string {
	t.Helper()
	return madeOnce(t, buildJobboard)
}

// madeOnce is the path a once-per-run step made; its error ends each test
// that needs it.
func madeOnce(t *testing.T, step func() (string, error)) string {
	t.Helper()
	path, err := step()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

var buildJobboard = sync.OnceValues(func() (string, error) {
	binary := filepath.Join(buildDir, "jobboard")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return binary, nil
})

// runCommand runs the binary to completion and returns its stdout.
func runCommand(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(jobboardBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("jobboard %v: %v\n%s", args, err, stderr.String())
	}
	return stdout.String()
}

// migratedEnv is the environment for the binary on a fresh database of its
// own, migrated, with settings (NAME=value) added.
func migratedEnv(t *testing.T, settings ...string) []string {
	t.Helper()
	env := append([]string{"DATABASE_URL=" + storetest.URL(t)}, settings...)
	runCommand(t, env, "migrate")
	// Full: callers append their own settings more than once, and each
	// append must copy rather than write into a shared array.
	return env[:len(env):len(env)]
}

type account struct {
	ID            int64  `json:"id"`
	Name          string `json:"name"`
	APIKey        string `json:"apiKey"`
	WebhookSecret string `json:"webhookSecret"`
}

func createAccount(t *testing.T, env []string, name string) account {
	t.Helper()
	var a account
	out := runCommand(t, env, "accounts", "create", "--name", name)
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("accounts create printed %q: %v", out, err)
	}
	if a.Name != name || a.ID == 0 ||
		!regexp.MustCompile(`^jb_live_[0-9A-Za-z]{43}$`).MatchString(a.APIKey) ||
		!regexp.MustCompile(`^whsec_[A-Za-z0-9+/]{43}=$`).MatchString(a.WebhookSecret) {
		t.Fatalf("accounts create printed %+v", a)
	}
	return a
}

// handedOut holds the ports freeAddr gave before. A port it frees is free
// to the kernel again at once, so without it a second call (the gRPC
// address after the HTTP one, or a test running in parallel) could draw
// the same port, and the service that binds it second fails to start.
var handedOut struct {
	sync.Mutex
	ports map[int]bool
}

func freeAddr(t *testing.T) string {
	t.Helper()
	// Below Linux's ephemeral range (32768 and up), from which the kernel
	// hands out the ports of outgoing connections and of listeners on port
	// 0, such as a local PostgreSQL that jobboard dev starts after this
	// address was chosen: a port from that range, freed here, could be
	// taken by it before the caller binds it.
	handedOut.Lock()
	defer handedOut.Unlock()
	if handedOut.ports == nil {
		handedOut.ports = map[int]bool{}
	}
	for range 100 {
		port := 20000 + rand.IntN(12000)
		if handedOut.ports[port] {
			continue
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			handedOut.ports[port] = true
			defer l.Close()
			return l.Addr().String()
		}
	}
	t.Fatal("no free port between 20000 and 32000 in 100 tries")
	return ""
}

// service is a running `jobboard serve`.
type service struct {
	t        *testing.T
	cmd      *exec.Cmd
	httpBase string
	grpcAddr string
	// metricsBase is the metrics listener's http://host:port, unless env
	// set JOBBOARD_METRICS_ADDR.
	metricsBase string
	stderr      *bytes.Buffer
	// client makes the REST requests: http.DefaultClient, or one that
	// trusts the CA of a service serving TLS.
	client *http.Client
}

const internalToken = "internal-test-token"

func startService(t *testing.T, env []string) *service {
	t.Helper()
	return startServiceOver(t, env, nil)
}

// startServiceOver is startService for a service whose env sets TLS with a
// certificate chaining to roots; nil roots is plaintext.
func startServiceOver(t *testing.T, env []string, roots *x509.CertPool) *service {
	t.Helper()
	httpAddr := freeAddr(t)
	s := &service{t: t, httpBase: "http://" + httpAddr, grpcAddr: freeAddr(t), stderr: &bytes.Buffer{}, client: http.DefaultClient}
	if roots != nil {
		s.httpBase = "https://" + httpAddr
		s.client = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, ForceAttemptHTTP2: true}}
	}
	s.cmd = exec.Command(jobboardBinary(t), "serve")
	env = append(env, "JOBBOARD_HTTP_ADDR="+httpAddr,
		"JOBBOARD_GRPC_ADDR="+s.grpcAddr, "JOBBOARD_INTERNAL_TOKEN="+internalToken)
	// Each service gets a metrics address of its own: the default, :9464,
	// is one for the whole machine.
	if !slices.ContainsFunc(env, func(v string) bool { return strings.HasPrefix(v, "JOBBOARD_METRICS_ADDR=") }) {
		s.metricsBase = "http://" + freeAddr(t)
		env = append(env, "JOBBOARD_METRICS_ADDR="+strings.TrimPrefix(s.metricsBase, "http://"))
	}
	s.cmd.Env = append(os.Environ(), env...)
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			_ = s.cmd.Process.Kill()
			_ = s.cmd.Wait()
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := s.client.Get(s.httpBase + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("service not ready: %v\n%s", err, s.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// request sends a REST request; auth is "basic", "bearer" or "".
func (s *service) request(auth, key, method, path, body string) (int, http.Header, string) {
	s.t.Helper()
	return s.requestWithHeader(nil, auth, key, method, path, body)
}

// requestWithHeader is request with extra request headers.
func (s *service) requestWithHeader(header http.Header, auth, key, method, path, body string) (int, http.Header, string) {
	s.t.Helper()
	req, err := http.NewRequest(method, s.httpBase+path, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	for name, values := range header {
		req.Header[name] = values
	}
	switch auth {
	case "basic":
		req.SetBasicAuth(key, "")
	case "bearer":
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	// Every answer the tests read is held to the OpenAPI document.
	if err := openapicheck.Answer(req, resp.StatusCode, resp.Header, b); err != nil {
		s.t.Error(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

// scrape reads the metrics listener's /metrics.
func (s *service) scrape() (int, http.Header, string) {
	s.t.Helper()
	resp, err := http.Get(s.metricsBase + "/metrics")
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func (s *service) grpcConn() *grpc.ClientConn {
	s.t.Helper()
	conn, err := grpc.NewClient(s.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { conn.Close() })
	return conn
}

func withKey(key string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+key)
}

type summary struct {
	Unchanged, Updated, Added, Deleted, Errors int
	ErrorMessages                              map[string]struct {
		Errors []map[string]any `json:"errors"`
	}
}

func decodeSummary(t *testing.T, body string) summary {
	t.Helper()
	var s summary
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		t.Fatalf("summary %q: %v", body, err)
	}
	return s
}

const twoJobs = `[{"referenceNumber":"E1","title":"OTR Driver","state":"TX","driverType":"Company Driver",
 "freightType":"Dry Van","description":"<p>Go</p>","employmentType":["Full-Time","Permanent"]},
 {"referenceNumber":"E2","title":"Local Driver","state":"GA","driverType":"Student","freightType":"Box","description":"x"}]`

const xmlJob = `<?xml version="1.0" encoding="UTF-8"?><jobs><job><referenceNumber>E3</referenceNumber>
<title>Reefer</title><state>CA</state><driverType>Owner Operator</driverType><freightType>Refrigerated</freightType>
<description><![CDATA[<b>Cold</b>]]></description><twicOnly>1</twicOnly></job></jobs>`

// endToEnd is what the steps of TestEndToEnd share: one database, two
// accounts and one running service. The steps run in order and build on
// one another: later ones count the jobs, imports and callbacks of earlier
// ones, and the last stops the service.
type endToEnd struct {
	env  []string
	a, b account
	svc  *service
	conn *grpc.ClientConn
	jobs jobboardv2.JobServiceClient
}

// TestEndToEnd drives the built binary over REST, gRPC and its admin
// commands, one step after another against one service.
func TestEndToEnd(t *testing.T) {
	env := migratedEnv(t)
	e := &endToEnd{env: env, a: createAccount(t, env, "Alpha Freight"), b: createAccount(t, env, "Bravo Logistics")}
	e.svc = startService(t, append(env, "JOBBOARD_CALLBACK_ALLOW_PRIVATE=true", "JOBBOARD_CALLBACK_RETRY_SCHEDULE=100ms,100ms"))
	e.conn = e.svc.grpcConn()
	e.jobs = jobboardv2.NewJobServiceClient(e.conn)
	for _, step := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"rest", e.rest},
		{"grpc", e.grpc},
		{"internal token", e.internalToken},
		{"tenant isolation", e.tenantIsolation},
		{"driver intake", e.driverIntake},
		{"drivers import", e.driversImport},
		{"job import polling", e.jobImportPolling},
		{"job import callback", e.jobImportCallback},
		{"key rotation", e.keyRotation},
		{"access log", e.accessLog},
		{"metrics", e.metrics},
		{"sigterm", e.sigterm},
	} {
		t.Run(step.name, step.run)
	}
}

func (e *endToEnd) rest(t *testing.T) {
	a, svc := e.a, e.svc
	code, _, body := svc.request("basic", a.APIKey, "POST", "/api/v2.0/jobs.json", twoJobs)
	if s := decodeSummary(t, body); code != 200 || s.Added != 2 || s.Errors != 0 {
		t.Fatalf("json post with Basic and a form content type: %d %s", code, body)
	}
	code, hdr, body := svc.request("bearer", a.APIKey, "POST", "/api/v2.0/jobs.xml", xmlJob)
	if code != 200 || !strings.Contains(body, "<added>1</added>") || hdr.Get("Content-Type") != "application/xml; charset=utf-8" {
		t.Fatalf("xml post with Bearer: %d %s", code, body)
	}
	code, _, body = svc.request("basic", a.APIKey, "GET", "/api/v2.0/jobs.json", "")
	var jobs []map[string]any
	if err := json.Unmarshal([]byte(body), &jobs); err != nil || code != 200 || len(jobs) != 3 {
		t.Fatalf("list: %d %s", code, body)
	}
	if jobs[0]["employmentType"] != "Full-Time" || jobs[2]["twicOnly"] != true || jobs[0]["id"].(float64) >= jobs[1]["id"].(float64) {
		t.Errorf("list content: %s", body)
	}
	code, _, body = svc.request("bearer", a.APIKey, "GET", "/api/v2.0/jobs.xml", "")
	if code != 200 || strings.Count(body, "<job>") != 3 || !strings.HasPrefix(body, `<?xml version="1.0" encoding="UTF-8"?>`) {
		t.Errorf("xml list: %d %s", code, body)
	}
	code, hdr, _ = svc.request("", "", "GET", "/api/v2.0/jobs.json", "")
	if code != 401 || hdr.Get("WWW-Authenticate") != `Basic realm="jobboard"` {
		t.Errorf("no credentials: %d %v", code, hdr)
	}
	if code, _, _ := svc.request("basic", "jb_live_wrong", "GET", "/api/v2.0/jobs.json", ""); code != 401 {
		t.Errorf("wrong key: %d", code)
	}
	if code, _, _ := svc.request("bearer", internalToken, "GET", "/api/v2.0/jobs.json", ""); code != 401 {
		t.Errorf("internal token over REST: %d, want 401", code)
	}
	if code, _, body := svc.request("", "", "GET", "/healthz", ""); code != 200 {
		t.Errorf("healthz: %d %s", code, body)
	}
}

func (e *endToEnd) grpc(t *testing.T) {
	a, conn, jobsClient := e.a, e.conn, e.jobs
	list, err := jobsClient.ListJobs(withKey(a.APIKey), &jobboardv2.ListJobsRequest{})
	if err != nil || len(list.Jobs) != 3 {
		t.Fatalf("ListJobs: %v %v", list, err)
	}
	if got := list.Jobs[0].EmploymentType; len(got) != 2 || got[1] != jobboardv2.EmploymentType_EMPLOYMENT_TYPE_PERMANENT {
		t.Errorf("gRPC returns the whole employmentType list, got %q", got)
	}
	post, err := jobsClient.PostJobs(withKey(a.APIKey), &jobboardv2.PostJobsRequest{Jobs: []*jobboardv2.JobInput{
		{ReferenceNumber: "G1", Title: "Flatbed OO", State: "ok", DriverType: jobboardv2.DriverType_DRIVER_TYPE_OWNER_OPERATOR,
			FreightType: jobboardv2.FreightType_FREIGHT_TYPE_FLATBED, Description: "Tarps", TwicOnly: true}}})
	if err != nil || post.Added != 1 {
		t.Fatalf("PostJobs: %v %v", post, err)
	}
	got, err := jobsClient.GetJob(withKey(a.APIKey), &jobboardv2.GetJobRequest{Id: list.Jobs[0].Id})
	if err != nil || got.Job.ReferenceNumber != "E1" {
		t.Fatalf("GetJob: %v %v", got, err)
	}
	del, err := jobsClient.DeleteJobByReference(withKey(a.APIKey), &jobboardv2.DeleteJobByReferenceRequest{ReferenceNumber: "G1"})
	if err != nil || del.Summary.Deleted != 1 {
		t.Fatalf("DeleteJobByReference: %v %v", del, err)
	}
	if _, err := jobsClient.ListJobs(context.Background(), &jobboardv2.ListJobsRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Errorf("no credentials: %v", err)
	}
	if _, err := jobsClient.ListJobs(withKey("jb_live_nope"), &jobboardv2.ListJobsRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Errorf("wrong key: %v", err)
	}
	health, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil || health.Status != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health: %v %v", health, err)
	}
}

func (e *endToEnd) internalToken(t *testing.T) {
	a, jobsClient := e.a, e.jobs
	ctx := withKey(internalToken)
	if _, err := jobsClient.ListJobs(ctx, &jobboardv2.ListJobsRequest{}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("without x-account-id: %v, want InvalidArgument", err)
	}
	list, err := jobsClient.ListJobs(metadata.AppendToOutgoingContext(ctx, "x-account-id", fmt.Sprint(a.ID)), &jobboardv2.ListJobsRequest{})
	if err != nil || len(list.Jobs) != 3 {
		t.Errorf("for account A: %v %v", list, err)
	}
	if _, err := jobsClient.ListJobs(metadata.AppendToOutgoingContext(ctx, "x-account-id", "999999"), &jobboardv2.ListJobsRequest{}); status.Code(err) != codes.NotFound {
		t.Errorf("unknown account: %v, want NotFound", err)
	}
	if _, err := jobsClient.ListJobs(metadata.AppendToOutgoingContext(ctx, "x-account-id", "abc"), &jobboardv2.ListJobsRequest{}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("bad account id: %v, want InvalidArgument", err)
	}
}

func (e *endToEnd) tenantIsolation(t *testing.T) {
	a, b, svc, jobsClient := e.a, e.b, e.svc, e.jobs
	aJobs, err := jobsClient.ListJobs(withKey(a.APIKey), &jobboardv2.ListJobsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	aID := aJobs.Jobs[0].Id
	for _, f := range []string{"json", "xml"} {
		base := "/api/v2.0/jobs." + f
		if code, _, body := svc.request("basic", b.APIKey, "GET", base, ""); code != 200 || strings.Contains(body, "E1") {
			t.Errorf("%s list as B: %d %s", f, code, body)
		}
		if code, _, body := svc.request("basic", b.APIKey, "GET", fmt.Sprintf("%s/%d", base, aID), ""); code != 404 {
			t.Errorf("%s retrieve A's job as B: %d %s", f, code, body)
		}
		for _, c := range []struct{ method, path, body string }{
			{"DELETE", fmt.Sprintf("%s/%d", base, aID), ""},
			{"DELETE", base, map[string]string{"json": fmt.Sprintf("[%d]", aID), "xml": fmt.Sprintf("<jobs><job>%d</job></jobs>", aID)}[f]},
			{"DELETE", base + "/reference/E1", ""},
			{"DELETE", base + "/reference", map[string]string{"json": `["E1"]`, "xml": "<jobs><job>E1</job></jobs>"}[f]},
		} {
			code, _, body := svc.request("basic", b.APIKey, c.method, c.path, c.body)
			if code != 200 || (f == "json" && (decodeSummary(t, body).Deleted != 0 || len(decodeSummary(t, body).ErrorMessages["missingErrors"].Errors) != 1)) ||
				(f == "xml" && !strings.Contains(body, "<deleted>0</deleted>")) {
				t.Errorf("%s %s as B: %d %s", c.method, c.path, code, body)
			}
		}
	}
	// B posting A's reference creates B's own job; A's stays as it was.
	code, _, body := svc.request("basic", b.APIKey, "POST", "/api/v2.0/jobs.json", twoJobs)
	if s := decodeSummary(t, body); code != 200 || s.Added != 2 {
		t.Errorf("B posts the same references: %d %s", code, body)
	}
	bJobs, err := jobsClient.ListJobs(withKey(b.APIKey), &jobboardv2.ListJobsRequest{})
	if err != nil || len(bJobs.Jobs) != 2 || bJobs.Jobs[0].Id == aID {
		t.Errorf("B's jobs: %v %v", bJobs, err)
	}
	if _, err := jobsClient.GetJob(withKey(b.APIKey), &jobboardv2.GetJobRequest{Id: aID}); status.Code(err) != codes.NotFound {
		t.Errorf("gRPC GetJob of A's job as B: %v", err)
	}
	del, err := jobsClient.DeleteJobs(withKey(b.APIKey), &jobboardv2.DeleteJobsRequest{Ids: []int64{aID}})
	if err != nil || del.Summary.Deleted != 0 {
		t.Errorf("gRPC DeleteJobs of A's job as B: %v %v", del, err)
	}
	after, err := jobsClient.ListJobs(withKey(a.APIKey), &jobboardv2.ListJobsRequest{})
	if err != nil || len(after.Jobs) != len(aJobs.Jobs) || after.Jobs[0].Title != "OTR Driver" {
		t.Errorf("A's jobs changed: %v %v", after, err)
	}
}

func (e *endToEnd) driverIntake(t *testing.T) {
	a, b, svc, conn := e.a, e.b, e.svc, e.conn
	intake := jobboardv2.NewDriverIntakeServiceClient(conn)
	app := &jobboardv2.DriverApplication{FirstName: "Ira", LastName: "Cole", Address: "5 Pike St", City: "Joplin",
		State: "MO", Zip: "64801", Email: "ira@example.com", Phone: "4175550100", DriverType: jobboardv2.DriverType_DRIVER_TYPE_COMPANY_DRIVER,
		Experience: "4", Sent: timestamppb.New(time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)), JobApplications: []*jobboardv2.JobApplicationInput{{Reference: "E1"}}}
	req := &jobboardv2.SubmitApplicationRequest{AccountId: a.ID, Application: app}
	if _, err := intake.SubmitApplication(withKey(a.APIKey), req); status.Code(err) != codes.PermissionDenied {
		t.Errorf("intake with an employer key: %v, want PermissionDenied", err)
	}
	mismatch := metadata.AppendToOutgoingContext(withKey(internalToken), "x-account-id", fmt.Sprint(b.ID))
	if _, err := intake.SubmitApplication(mismatch, req); status.Code(err) != codes.InvalidArgument {
		t.Errorf("intake for account A with x-account-id of B: %v, want InvalidArgument", err)
	}
	resp, err := intake.SubmitApplication(withKey(internalToken), req)
	if err != nil || resp.DriverId == 0 {
		t.Fatalf("intake with the internal token: %v %v", resp, err)
	}
	code, hdr, body := svc.request("basic", a.APIKey, "GET", "/api/v2.0/drivers.json?job_title=otr%20driver", "")
	if code != 200 || hdr.Get("X-Total-Count") != "1" || !strings.Contains(body, `"email":"ira@example.com"`) {
		t.Errorf("drivers list after intake: %d %v %s", code, hdr, body)
	}
	if code, _, _ := svc.request("basic", b.APIKey, "GET", fmt.Sprintf("/api/v2.0/drivers.xml/%d", resp.DriverId), ""); code != 404 {
		t.Errorf("B reads A's applicant: %d", code)
	}
	drivers, err := jobboardv2.NewDriverServiceClient(conn).ListDrivers(withKey(a.APIKey), &jobboardv2.ListDriversRequest{State: "mo"})
	if err != nil || len(drivers.Drivers) != 1 || drivers.TotalSize != 1 {
		t.Errorf("gRPC ListDrivers: %v %v", drivers, err)
	}
}

func (e *endToEnd) driversImport(t *testing.T) {
	env, a, svc := e.env, e.a, e.svc
	file := filepath.Join(t.TempDir(), "drivers.json")
	good := `[{"id": 99, "first_name": "Lu", "last_name": "Park", "address": "1 A St", "address2": null, "city": "Omaha",
		"state": "NE", "zip": "68102", "email": "lu@example.com", "phone": "4025550100", "driver_type": "Student",
		"experience": "1", "sent": "2026-10-01T10:00:00+00:00", "has_job_apps": true,
		"endorsement": "Doubles/Triples (T), HAZMAT (H)", "license_state": "Nebraska", "date_of_birth": "02/03/1990",
		"last_license_suspension": null, "last_dui": 2012, "employment_history": [{"company": "X", "state": "NE",
		"phone": "4025550101", "start_date": "2020-01-01", "end_date": null}],
		"job_applications": [{"job_id": 1, "title": "ignored", "reference": "E2", "is_direct_app": true,
		"created_at": "2026-10-01T11:00:00+00:00"}], "is_premium": false}]`
	if err := os.WriteFile(file, []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	before := e.events(t)
	out := runCommand(t, env, "drivers", "import", "--account", fmt.Sprint(a.ID), file)
	if strings.TrimSpace(out) != `{"imported":1}` {
		t.Errorf("import printed %q", out)
	}
	// The import wrote the driver's event, its data what GET shows.
	after := e.events(t)
	if len(after) != len(before)+1 {
		t.Fatalf("%d events after importing one driver, %d before", len(after), len(before))
	}
	last := after[len(after)-1]
	var driver struct{ ID int64 }
	_ = json.Unmarshal(last.Data, &driver)
	code, _, detail := svc.request("basic", a.APIKey, "GET", fmt.Sprintf("/api/v2.0/drivers.json/%d", driver.ID), "")
	if last.Type != "driver.application.received" || code != 200 || string(last.Data) != strings.TrimSuffix(detail, "\n") {
		t.Errorf("the imported driver's event %s %s, GET %d %s", last.Type, last.Data, code, detail)
	}
	bad := strings.Replace(good, `"reference": "E2"`, `"reference": "NOPE"`, 1)
	bad = strings.Replace(bad, "lu@example.com", "lu2@example.com", 1)
	if err := os.WriteFile(file, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(jobboardBinary(t), "drivers", "import", "--account", fmt.Sprint(a.ID), file)
	cmd.Env = append(os.Environ(), env...)
	msg, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(msg), `[0] job_applications[0].reference: "NOPE" is not the reference number of one of the account's jobs`) {
		t.Errorf("bad import: %v %s", err, msg)
	}
	code, _, body := svc.request("basic", a.APIKey, "GET", "/api/v2.0/drivers.json?email=LU2@example.com", "")
	if code != 200 || body != "[]\n" {
		t.Errorf("a failed import left data: %s", body)
	}
	if n := len(e.events(t)); n != len(after) {
		t.Errorf("a failed import left %d events", n-len(after))
	}
}

// feedEvent is an event of the REST feed, its data as sent.
type feedEvent struct {
	Type string
	Data json.RawMessage
}

// events reads every event of account A from the feed, following links.next.
func (e *endToEnd) events(t *testing.T) []feedEvent {
	t.Helper()
	var all []feedEvent
	next := "/api/v2.0/events?limit=1000"
	for {
		code, _, body := e.svc.request("basic", e.a.APIKey, "GET", next, "")
		var page struct {
			Data  []feedEvent
			Links struct{ Next string }
		}
		if err := json.Unmarshal([]byte(body), &page); code != 200 || err != nil {
			t.Fatalf("GET %s: %d %s", next, code, body)
		}
		if len(page.Data) == 0 {
			return all
		}
		all = append(all, page.Data...)
		next = strings.TrimPrefix(page.Links.Next, e.svc.httpBase)
	}
}

func (e *endToEnd) jobImportPolling(t *testing.T) {
	a, b, svc := e.a, e.b, e.svc
	body := `{"jobs": [{"referenceNumber": "Q1", "title": "Queued", "state": "OH", "driverType": "Student",
		"freightType": "Box", "description": "x"}, {"referenceNumber": "Q2"}], "deleteJobs": false}`
	if code, _, got := svc.request("basic", a.APIKey, "POST", "/api/v2.0/job-imports", " "); code != 400 {
		t.Errorf("empty import body: %d %s", code, got)
	}
	code, hdr, _ := svc.requestWithHeader(http.Header{"X-Forwarded-Host": {"evil.example"}},
		"basic", a.APIKey, "POST", "/api/v2.0/job-imports", `{"jobs": []}`)
	if loc := hdr.Get("Location"); code != 202 || !strings.HasPrefix(loc, svc.httpBase+"/") {
		t.Errorf("a client's X-Forwarded-Host reached the links: %d %s", code, loc)
	}
	code, hdr, created := svc.request("basic", a.APIKey, "POST", "/api/v2.0/job-imports", body)
	var imp struct {
		Data struct {
			ID, Status, RequestedAt string
			CompletedAt             *string
			Results                 *struct{ Added, Failed, Processed int }
		}
		Links struct{ Self string }
	}
	if err := json.Unmarshal([]byte(created), &imp); err != nil || code != 202 || imp.Data.Status != "pending" ||
		hdr.Get("Location") != imp.Links.Self || !strings.HasPrefix(imp.Links.Self, svc.httpBase+"/api/v2.0/job-imports/") ||
		!regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`).MatchString(imp.Data.RequestedAt) {
		t.Fatalf("create: %d %v %s", code, hdr, created)
	}
	deadline := time.Now().Add(20 * time.Second)
	for imp.Data.Status != "complete" && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		_, _, got := svc.request("bearer", a.APIKey, "GET", strings.TrimPrefix(imp.Links.Self, svc.httpBase), "")
		if err := json.Unmarshal([]byte(got), &imp); err != nil {
			t.Fatalf("poll: %s", got)
		}
	}
	if r := imp.Data.Results; imp.Data.Status != "complete" || r == nil || r.Added != 1 || r.Failed != 1 || r.Processed != 2 || imp.Data.CompletedAt == nil {
		t.Errorf("import: %+v", imp.Data)
	}
	if code, _, _ := svc.request("basic", b.APIKey, "GET", strings.TrimPrefix(imp.Links.Self, svc.httpBase), ""); code != 404 {
		t.Errorf("B reads A's import: %d", code)
	}
}

func (e *endToEnd) jobImportCallback(t *testing.T) {
	env, a, svc := e.env, e.a, e.svc
	type delivery struct {
		id, signature, timestamp, requestID string
		body                                []byte
	}
	got := make(chan delivery, 4)
	calls := 0
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- delivery{r.Header.Get("webhook-id"), r.Header.Get("webhook-signature"), r.Header.Get("webhook-timestamp"),
			r.Header.Get("X-Request-Id"), body}
		calls++
		if calls == 1 {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer receiver.Close()
	body := fmt.Sprintf(`{"jobs": [{"referenceNumber": "CB1", "title": "Called back", "state": "OH",
		"driverType": "Student", "freightType": "Box", "description": "x"}], "callbackUrl": %q}`, receiver.URL+"/hooks/jobs")
	code, _, created := svc.requestWithHeader(http.Header{"X-Request-Id": {"trace-import-cb"}},
		"basic", a.APIKey, "POST", "/api/v2.0/job-imports", body)
	if code != 202 {
		t.Fatalf("create: %d %s", code, created)
	}
	var first, second delivery
	for i, d := range []*delivery{&first, &second} {
		select {
		case *d = <-got:
		case <-time.After(20 * time.Second):
			t.Fatalf("callback %d did not arrive", i+1)
		}
	}
	ts, _ := strconv.ParseInt(second.timestamp, 10, 64)
	want, err := webhook.Sign(a.WebhookSecret, second.id, ts, second.body)
	if err != nil || second.signature != want || first.id != second.id || !strings.HasPrefix(first.id, "msg_") {
		t.Errorf("deliveries %+v and %+v; signature with the account's secret: %s", first, second, want)
	}
	var payload struct {
		Data  struct{ ID, Status string }
		Links struct{ Self string }
	}
	if err := json.Unmarshal(second.body, &payload); err != nil || payload.Data.Status != "complete" {
		t.Errorf("callback body: %s", second.body)
	}
	if first.requestID != "trace-import-cb" || second.requestID != "trace-import-cb" {
		t.Errorf("callbacks carry X-Request-Id %q and %q, want the creating request's trace-import-cb", first.requestID, second.requestID)
	}
	// The success is recorded after the receiver answers.
	var shown string
	testfix.Eventually(10*time.Second, func() bool {
		shown = runCommand(t, env, "imports", "show", payload.Data.ID)
		return strings.Count(shown, `"attempt":`) == 2
	})
	if strings.Count(shown, `"attempt":`) != 2 || !strings.Contains(shown, `"statusCode": 500`) || !strings.Contains(shown, `"statusCode": 200`) ||
		!strings.Contains(shown, `"requestId": "trace-import-cb"`) {
		t.Errorf("imports show: %s", shown)
	}
	// The worker's lines about the import name the request that created it.
	for _, msg := range []string{"job import complete", "callback failed", "callback delivered"} {
		lines := logLines(svc.stderr.String(), msg, payload.Data.ID)
		if len(lines) != 1 || !strings.Contains(lines[0], `"request_id":"trace-import-cb"`) {
			t.Errorf("log lines %q of the import: %q, want one with its request id", msg, lines)
		}
	}
	rotated := runCommand(t, env, "accounts", "rotate-webhook-secret", "--account", fmt.Sprint(a.ID))
	if !regexp.MustCompile(`"webhookSecret":"whsec_[A-Za-z0-9+/]{43}="`).MatchString(rotated) || strings.Contains(rotated, a.WebhookSecret) {
		t.Errorf("rotate-webhook-secret printed %s", rotated)
	}
}

func (e *endToEnd) keyRotation(t *testing.T) {
	env, b, svc, jobsClient := e.env, e.b, e.svc, e.jobs
	var added struct {
		AccountID int64  `json:"accountId"`
		APIKey    string `json:"apiKey"`
		Prefix    string `json:"prefix"`
	}
	out := runCommand(t, env, "keys", "create", "--account", fmt.Sprint(b.ID))
	if err := json.Unmarshal([]byte(out), &added); err != nil || added.AccountID != b.ID || !strings.HasPrefix(added.APIKey, added.Prefix) {
		t.Fatalf("keys create printed %q", out)
	}
	for _, key := range []string{b.APIKey, added.APIKey} {
		if code, _, _ := svc.request("basic", key, "GET", "/api/v2.0/jobs.json", ""); code != 200 {
			t.Errorf("before revoking, a key of B gets %d", code)
		}
	}
	list := runCommand(t, env, "accounts", "list")
	if !strings.Contains(list, added.Prefix) || !strings.Contains(list, `"name":"Bravo Logistics"`) || strings.Contains(list, added.APIKey) {
		t.Errorf("accounts list: %s", list)
	}
	if out := runCommand(t, env, "keys", "revoke", b.APIKey); !strings.Contains(out, `"revoked":1,"servers":1,"confirmed":1`) {
		t.Errorf("keys revoke printed %q", out)
	}
	if code, _, _ := svc.request("basic", b.APIKey, "GET", "/api/v2.0/jobs.json", ""); code != 401 {
		t.Errorf("the revoked key gets %d, want 401", code)
	}
	if _, err := jobsClient.ListJobs(withKey(b.APIKey), &jobboardv2.ListJobsRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Errorf("the revoked key over gRPC: %v", err)
	}
	if code, _, _ := svc.request("bearer", added.APIKey, "GET", "/api/v2.0/jobs.json", ""); code != 200 {
		t.Errorf("the new key gets %d", code)
	}
}

func (e *endToEnd) accessLog(t *testing.T) {
	a, b, svc, jobsClient := e.a, e.b, e.svc, e.jobs
	code, hdr, _ := svc.requestWithHeader(http.Header{"X-Request-Id": {"trace-e2e-1"}}, "basic", a.APIKey, "GET", "/api/v2.0/jobs.json/1", "")
	if got := hdr.Get("X-Request-Id"); got != "trace-e2e-1" {
		t.Errorf("X-Request-Id echoed as %q", got)
	}
	if _, hdr, _ := svc.request("basic", a.APIKey, "GET", "/api/v2.0/jobs.json", ""); len(hdr.Get("X-Request-Id")) != 24 {
		t.Errorf("generated X-Request-Id %q", hdr.Get("X-Request-Id"))
	}
	// gRPC calls: the request id is taken or made and echoed, and each
	// call is logged once with its method, code and account.
	var header metadata.MD
	ctx := metadata.AppendToOutgoingContext(withKey(a.APIKey), "x-request-id", "trace-grpc-1")
	if _, err := jobsClient.ListJobs(ctx, &jobboardv2.ListJobsRequest{}, grpc.Header(&header)); err != nil {
		t.Fatal(err)
	}
	if got := header.Get("x-request-id"); len(got) != 1 || got[0] != "trace-grpc-1" {
		t.Errorf("gRPC x-request-id echoed as %q", got)
	}
	ctx = metadata.AppendToOutgoingContext(withKey(internalToken), "x-request-id", strings.Repeat("x", 200), "x-account-id", fmt.Sprint(a.ID))
	if _, err := jobsClient.ListJobs(ctx, &jobboardv2.ListJobsRequest{}, grpc.Header(&header)); err != nil {
		t.Fatal(err)
	}
	if got := header.Get("x-request-id"); len(got) != 1 || len(got[0]) != 24 {
		t.Errorf("gRPC x-request-id for a too-long one: %q, want a new 24-character id", got)
	}
	// Refused calls get a line a second per reason, and the calls refused
	// within that second a line of their count up to a second later; that
	// line counts too. This one comes two quiet seconds after the last
	// refused call of its reason (an earlier subtest's), so its own line,
	// with its request id, is written.
	time.Sleep(2100 * time.Millisecond)
	ctx = metadata.AppendToOutgoingContext(withKey("jb_live_not-a-key"), "x-request-id", "trace-grpc-2")
	if _, err := jobsClient.ListJobs(ctx, &jobboardv2.ListJobsRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Errorf("wrong key: %v", err)
	}
	// A REST request reaches the services in-process: one access line, no gRPC line.
	svc.requestWithHeader(http.Header{"X-Request-Id": {"trace-rest-only"}}, "bearer", a.APIKey, "GET", "/api/v2.0/jobs.json", "")

	time.Sleep(100 * time.Millisecond)
	logs := svc.stderr.String()
	want := fmt.Sprintf(`"route":"/api/v2.0/jobs.json/{id}","status":%d`, code)
	if !strings.Contains(logs, want) || !strings.Contains(logs, `"request_id":"trace-e2e-1","account_id":`+fmt.Sprint(a.ID)) {
		t.Errorf("no access line with %s and the request id and account:\n%s", want, logs)
	}
	rpcLine := regexp.MustCompile(`"msg":"rpc","method":"/jobboard.v2.JobService/ListJobs","code":"OK","duration_ms":[0-9.e-]+,` +
		`"request_id":"trace-grpc-1","account_id":` + fmt.Sprint(a.ID) + `}`)
	if n := len(rpcLine.FindAllString(logs, -1)); n != 1 {
		t.Errorf("%d gRPC access lines for trace-grpc-1, want 1 with method, code and account:\n%s", n, logs)
	}
	if !regexp.MustCompile(`"msg":"rpc","method":"/jobboard.v2.JobService/ListJobs","code":"Unauthenticated","refused_calls":[0-9]+,"duration_ms":[0-9.e-]+,"request_id":"trace-grpc-2"}`).MatchString(logs) {
		t.Errorf("no gRPC access line for the refused call trace-grpc-2:\n%s", logs)
	}
	if n := strings.Count(logs, `"request_id":"trace-rest-only"`); n != 1 || len(logLines(logs, "rpc", "trace-rest-only")) != 0 {
		t.Errorf("a REST request is logged %d times (want once, by the REST access log):\n%s", n, logs)
	}
	// Nothing secret is ever logged, whatever the requests above sent,
	// over REST or gRPC.
	for name, secret := range map[string]string{"A's key": a.APIKey, "B's key": b.APIKey, "internal token": internalToken,
		"webhook secret": a.WebhookSecret, "Authorization header": "Authorization", "Basic credentials": "Basic ",
		"authorization metadata": "authorization", "Bearer credentials": "Bearer ", "a refused key": "jb_live_not-a-key"} {
		if strings.Contains(logs, secret) {
			t.Errorf("the logs contain %s", name)
		}
	}
}

func (e *endToEnd) metrics(t *testing.T) {
	a, svc := e.a, e.svc
	e.importOverGRPC(t)
	// Requests no route takes, with a path and a method a client made up,
	// are counted under fixed labels.
	svc.request("basic", a.APIKey, "GET", "/api/v2.0/no-such-thing-7f3a9", "")
	svc.request("", "", "BREW", "/coffee-7f3a9", "")
	// The delivery is counted after the receiver answers.
	var code int
	var hdr http.Header
	var body string
	testfix.Eventually(10*time.Second, func() bool {
		code, hdr, body = svc.scrape()
		n, _ := parseMetrics(t, body).find("jobboard_callback_delivery_attempts_total", map[string]string{"outcome": "delivered"})
		return code != 200 || n >= 2
	})
	if code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain") {
		t.Fatalf("/metrics: %d %v\n%s", code, hdr, body)
	}
	samples := parseMetrics(t, body)
	for _, tt := range endToEndMetrics {
		t.Run(tt.name, func(t *testing.T) {
			v, ok := samples.find(tt.family, tt.labels)
			if !ok {
				t.Fatalf("no %s sample with %v in:\n%s", tt.family, tt.labels, samples.family(tt.family))
			}
			if v < tt.min {
				t.Errorf("%s%v = %v, want at least %v", tt.family, tt.labels, v, tt.min)
			}
		})
	}
	// Route and method labels come from fixed sets: nothing a client
	// put in a path or a method becomes a label.
	for _, raw := range []string{"7f3a9", "BREW", "/api/v2.0/jobs.json/1\"", "no-such-thing"} {
		if strings.Contains(body, raw) {
			t.Errorf("a label holds %q from a request", raw)
		}
	}
}

// importOverGRPC creates an import over gRPC with a callback: its request
// id comes from the gRPC metadata, and it feeds the import and callback
// metrics.
func (e *endToEnd) importOverGRPC(t *testing.T) {
	a, svc, conn := e.a, e.svc, e.conn
	hook := make(chan string, 1)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hook <- r.Header.Get("X-Request-Id")
	}))
	defer receiver.Close()
	cb := receiver.URL + "/hook"
	ctx := metadata.AppendToOutgoingContext(withKey(a.APIKey), "x-request-id", "trace-grpc-import")
	created, err := jobboardv2.NewJobImportServiceClient(conn).CreateJobImport(ctx, &jobboardv2.CreateJobImportRequest{
		Jobs: []*jobboardv2.JobInput{}, CallbackUrl: &cb})
	if err != nil {
		t.Fatalf("CreateJobImport: %v", err)
	}
	// The link answered to a gRPC caller is the REST address of the host
	// it dialled, not the gRPC port.
	if want := svc.httpBase + "/api/v2.0/job-imports/" + created.GetData().GetId(); created.GetLinks().GetSelf() != want {
		t.Errorf("links.self over gRPC = %q, want %q", created.GetLinks().GetSelf(), want)
	}
	select {
	case id := <-hook:
		if id != "trace-grpc-import" {
			t.Errorf("callback of a gRPC import carries X-Request-Id %q, want trace-grpc-import", id)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("callback did not arrive")
	}
}

// endToEndMetrics are the samples the metrics step of TestEndToEnd
// expects after the steps before it, each with the least value it must
// have.
var endToEndMetrics = []struct {
	name   string
	family string
	labels map[string]string
	min    float64
}{
	{"REST request count by route pattern", "jobboard_http_requests_total",
		map[string]string{"route": "/api/v2.0/jobs.json", "method": "GET", "code": "200"}, 1},
	{"REST request count with a path parameter", "jobboard_http_requests_total",
		map[string]string{"route": "/api/v2.0/jobs.json/{id}", "method": "GET"}, 1},
	{"REST 401", "jobboard_http_requests_total",
		map[string]string{"route": "/api/v2.0/jobs.json", "method": "GET", "code": "401"}, 1},
	{"import creation", "jobboard_http_requests_total",
		map[string]string{"route": "/api/v2.0/job-imports", "method": "POST", "code": "202"}, 1},
	{"fixed path", "jobboard_http_requests_total", map[string]string{"route": "/healthz", "method": "GET", "code": "200"}, 1},
	{"unrouted request", "jobboard_http_requests_total", map[string]string{"route": "unmatched", "method": "GET"}, 1},
	{"unknown method", "jobboard_http_requests_total", map[string]string{"route": "unmatched", "method": "other"}, 1},
	{"REST latency", "jobboard_http_request_duration_seconds_count",
		map[string]string{"route": "/api/v2.0/jobs.json", "method": "GET", "code": "200"}, 1},
	{"REST latency buckets", "jobboard_http_request_duration_seconds_bucket",
		map[string]string{"route": "/api/v2.0/jobs.json", "method": "GET", "code": "200", "le": "+Inf"}, 1},
	{"gRPC handled", "grpc_server_handled_total",
		map[string]string{"grpc_service": "jobboard.v2.JobService", "grpc_method": "ListJobs", "grpc_code": "OK", "grpc_type": "unary"}, 1},
	{"gRPC refused", "grpc_server_handled_total",
		map[string]string{"grpc_service": "jobboard.v2.JobService", "grpc_method": "ListJobs", "grpc_code": "Unauthenticated"}, 1},
	{"gRPC started", "grpc_server_started_total", map[string]string{"grpc_method": "CreateJobImport"}, 1},
	{"gRPC handling time", "grpc_server_handling_seconds_count",
		map[string]string{"grpc_service": "jobboard.v2.JobService", "grpc_method": "ListJobs"}, 1},
	{"imports complete", "jobboard_job_imports_finished_total", map[string]string{"status": "complete"}, 3},
	{"imports failed", "jobboard_job_imports_finished_total", map[string]string{"status": "failed"}, 0},
	{"import duration", "jobboard_job_import_duration_seconds_count", map[string]string{"status": "complete"}, 3},
	{"queue depth", "jobboard_queue_jobs", map[string]string{"kind": "job_import", "state": "available"}, 0},
	{"callback queue depth", "jobboard_queue_jobs", map[string]string{"kind": "job_import_callback", "state": "retryable"}, 0},
	{"oldest waiting import", "jobboard_queue_oldest_job_age_seconds", map[string]string{"kind": "job_import", "state": "available"}, 0},
	{"queue read", "jobboard_queue_read_timestamp_seconds", nil, 1},
	{"build", "jobboard_build_info", nil, 1},
	{"ready", "jobboard_ready", nil, 1},
	{"database up", "jobboard_database_up", nil, 1},
	{"callbacks delivered", "jobboard_callback_delivery_attempts_total", map[string]string{"outcome": "delivered"}, 2},
	{"callbacks to retry", "jobboard_callback_delivery_attempts_total", map[string]string{"outcome": "failed_retry"}, 1},
	{"callbacks gone", "jobboard_callback_delivery_attempts_total", map[string]string{"outcome": "gone_410"}, 0},
	{"callbacks given up", "jobboard_callback_delivery_attempts_total", map[string]string{"outcome": "gave_up"}, 0},
	{"database pool", "go_sql_max_open_connections", map[string]string{"db_name": "jobboard"}, 20},
	{"database pool use", "go_sql_open_connections", map[string]string{"db_name": "jobboard"}, 1},
	{"Go runtime", "go_goroutines", nil, 1},
	{"Go GC", "go_gc_duration_seconds_count", nil, 0},
	{"process", "process_resident_memory_bytes", nil, 1},
	{"process CPU", "process_cpu_seconds_total", nil, 0},
}

func (e *endToEnd) sigterm(t *testing.T) {
	svc := e.svc
	if err := svc.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- svc.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v\n%s", err, svc.stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("still running 15 s after SIGTERM")
	}
}

// TestTwoReplicas: two server processes on one database work 20 imports;
// each import is processed exactly once.
func TestTwoReplicas(t *testing.T) {
	env := migratedEnv(t)
	acct := createAccount(t, env, "Shared")
	replicas := []*service{startService(t, env), startService(t, env)}
	var selfs []string
	for i := 0; i < 20; i++ {
		body := fmt.Sprintf(`{"jobs": [{"referenceNumber": "R%d", "title": "Replica job", "state": "OH",
			"driverType": "Student", "freightType": "Box", "description": "x"}]}`, i)
		code, hdr, created := replicas[i%2].request("basic", acct.APIKey, "POST", "/api/v2.0/job-imports", body)
		if code != 202 {
			t.Fatalf("create %d: %d %s", i, code, created)
		}
		selfs = append(selfs, hdr.Get("Location"))
	}
	deadline := time.Now().Add(60 * time.Second)
	for i, self := range selfs {
		for {
			_, _, got := replicas[0].request("basic", acct.APIKey, "GET", strings.TrimPrefix(self, replicas[i%2].httpBase), "")
			if strings.Contains(got, `"status":"complete"`) {
				if !strings.Contains(got, `"added":1`) {
					t.Errorf("import %d: %s", i, got)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("import %d not complete: %s", i, got)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// Each import was worked once: one "job import complete" line in all
	// the replicas' logs together, and the work was shared.
	perReplica := []int{}
	total := 0
	for _, r := range replicas {
		n := strings.Count(r.stderr.String(), `"msg":"job import complete"`)
		perReplica = append(perReplica, n)
		total += n
	}
	if total != 20 {
		t.Errorf("imports processed %d times in all (per replica %v), want 20", total, perReplica)
	}
	_, _, list := replicas[1].request("basic", acct.APIKey, "GET", "/api/v2.0/jobs.json", "")
	if n := strings.Count(list, `"referenceNumber":"R`); n != 20 {
		t.Errorf("%d jobs, want 20", n)
	}
	t.Logf("imports worked per replica: %v", perReplica)

	// The page token key lives in the database: a token one replica
	// answered pages on the other, over gRPC as over REST.
	jobs := jobboardv2.NewJobServiceClient(replicas[0].grpcConn())
	first, err := jobs.ListJobs(withKey(acct.APIKey), &jobboardv2.ListJobsRequest{PageSize: 15})
	if err != nil || first.NextPageToken == "" {
		t.Fatalf("first page from replica 0: %v %v", first, err)
	}
	rest, err := jobboardv2.NewJobServiceClient(replicas[1].grpcConn()).ListJobs(withKey(acct.APIKey),
		&jobboardv2.ListJobsRequest{PageSize: 15, PageToken: first.NextPageToken})
	if err != nil || len(rest.Jobs) != 5 || rest.NextPageToken != "" {
		t.Errorf("the rest from replica 1 with replica 0's token: %v %v", rest, err)
	}
	if code, _, body := replicas[1].request("basic", acct.APIKey, "GET",
		"/api/v2.0/jobs.json?page_size=15&page_token="+url.QueryEscape(first.NextPageToken), ""); code != 200 ||
		strings.Count(body, `"referenceNumber":"R`) != 5 {
		t.Errorf("REST on replica 1 with replica 0's token: %d %s", code, body)
	}

	// Both replicas remember the key from the calls above; once keys revoke
	// returns, each refuses it on the very next request.
	for i, r := range replicas {
		if code, _, _ := r.request("bearer", acct.APIKey, "GET", "/api/v2.0/jobs.json/1", ""); code == 401 {
			t.Fatalf("replica %d refused the key before it was revoked", i)
		}
	}
	if out := runCommand(t, env, "keys", "revoke", acct.APIKey); !strings.Contains(out, `"revoked":1,"servers":2,"confirmed":2`) {
		t.Errorf("keys revoke printed %q, want both replicas confirming", out)
	}
	for i, r := range replicas {
		if code, _, _ := r.request("bearer", acct.APIKey, "GET", "/api/v2.0/jobs.json/1", ""); code != 401 {
			t.Errorf("replica %d answered %d to the revoked key, want 401", i, code)
		}
	}
}

// TestImportSurvivesSIGKILL: a server killed with SIGKILL while its import
// transaction is part-way leaves nothing written; after a restart the
// import is taken over, runs once from the start, and its counts add up.
func TestImportSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the queue's leader lease and rescuer (up to a minute)")
	}
	dbURL := storetest.URL(t)
	env := []string{"DATABASE_URL=" + dbURL, "JOBBOARD_IMPORT_RESCUE_AFTER=3s"}
	runCommand(t, env, "migrate")
	acct := createAccount(t, env, "Crash")
	db, err := sqlx.Open("postgres", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	activeJobs := func() (n, distinct int) {
		row := db.QueryRow(`SELECT count(*), count(DISTINCT reference_number) FROM jobs WHERE account_id = $1 AND deleted_at IS NULL`, acct.ID)
		if err := row.Scan(&n, &distinct); err != nil {
			t.Fatal(err)
		}
		return n, distinct
	}

	// Hold the account row as writers of its jobs do, so the import's
	// transaction stops part-way at a real lock wait: the kill lands there.
	hold, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Rollback()
	if _, err := hold.Exec(`SELECT id FROM accounts WHERE id = $1 FOR NO KEY UPDATE`, acct.ID); err != nil {
		t.Fatal(err)
	}

	first := startService(t, env)
	var feed strings.Builder
	feed.WriteString(`{"jobs": [`)
	for i := 0; i < 10_000; i++ {
		if i > 0 {
			feed.WriteString(",")
		}
		fmt.Fprintf(&feed, `{"referenceNumber": "K%d", "title": "Crash-safe job %d", "state": "OH", "driverType": "Student", "freightType": "Box", "description": "x"}`, i, i)
	}
	feed.WriteString(`]}`)
	code, hdr, created := first.request("basic", acct.APIKey, "POST", "/api/v2.0/job-imports", feed.String())
	if code != 202 {
		t.Fatalf("create: %d %s", code, created)
	}
	path := strings.TrimPrefix(hdr.Get("Location"), first.httpBase)
	waitFor := func(s *service, want string, limit time.Duration) string {
		deadline := time.Now().Add(limit)
		for {
			_, _, got := s.request("basic", acct.APIKey, "GET", path, "")
			if strings.Contains(got, `"status":"`+want+`"`) || time.Now().After(deadline) {
				return got
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if got := waitFor(first, "running", 20*time.Second); !strings.Contains(got, `"status":"running"`) {
		t.Fatalf("import never started: %s", got)
	}
	var waiting int
	for deadline := time.Now().Add(10 * time.Second); waiting == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		_ = db.Get(&waiting, `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`)
	}
	if waiting == 0 {
		t.Fatal("the import transaction never reached the lock")
	}
	if err := first.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = first.cmd.Wait()
	if err := hold.Rollback(); err != nil {
		t.Fatal(err)
	}
	if n, _ := activeJobs(); n != 0 {
		t.Fatalf("%d jobs written by the killed import", n)
	}

	started := time.Now()
	second := startService(t, env)
	got := waitFor(second, "complete", 90*time.Second)
	if !strings.Contains(got, `"added":10000`) || !strings.Contains(got, `"processed":10000`) || !strings.Contains(got, `"failed":0`) {
		t.Fatalf("after restart: %s", got)
	}
	if n, distinct := activeJobs(); n != 10_000 || distinct != 10_000 {
		t.Errorf("%d active jobs, %d distinct references, want 10000 of each", n, distinct)
	}
	if runs := strings.Count(second.stderr.String(), `"msg":"job import complete"`); runs != 1 {
		t.Errorf("the import ran %d times after the restart", runs)
	}
	t.Logf("figures: import SIGKILL: killed part-way through a 10,000-job import, 0 jobs left by the killed run; taken over and completed %.1f s after the restart, once: 10,000 added and active, 0 failed",
		time.Since(started).Seconds())
}

// logLines are the log lines with message msg that contain every one of has.
func logLines(logs, msg string, has ...string) []string {
	var out []string
	for _, line := range strings.Split(logs, "\n") {
		if !strings.Contains(line, `"msg":"`+msg+`"`) {
			continue
		}
		ok := true
		for _, h := range has {
			ok = ok && strings.Contains(line, h)
		}
		if ok {
			out = append(out, line)
		}
	}
	return out
}

// metricSamples is a scrape in the Prometheus text format: one sample per
// line, as name{labels} value.
type metricSamples []string

var sampleLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$`)

func parseMetrics(t *testing.T, body string) metricSamples {
	t.Helper()
	var out metricSamples
	for _, line := range strings.Split(body, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !sampleLine.MatchString(line) {
			t.Fatalf("not a sample line: %q", line)
		}
		out = append(out, line)
	}
	return out
}

// find returns the value of the first sample of family carrying every
// label in labels.
func (m metricSamples) find(family string, labels map[string]string) (float64, bool) {
	for _, line := range m {
		parts := sampleLine.FindStringSubmatch(line)
		if parts[1] != family {
			continue
		}
		ok := true
		for k, v := range labels {
			ok = ok && strings.Contains(parts[2], fmt.Sprintf("%s=%q", k, v))
		}
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(parts[3], 64)
		return v, err == nil
	}
	return 0, false
}

// family is the samples of a family, for failure messages.
func (m metricSamples) family(name string) string {
	var b strings.Builder
	for _, line := range m {
		if strings.HasPrefix(line, name) {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}
