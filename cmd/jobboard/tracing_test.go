package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc/metadata"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/internal/testfix"
)

// traceparent is a W3C traceparent of a new sampled trace, as a caller
// already tracing would send it, with the ids of its trace and span.
func traceparent(t *testing.T) (header, traceID, parentID string) {
	t.Helper()
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	traceID, parentID = hex.EncodeToString(b[:16]), hex.EncodeToString(b[16:])
	return "00-" + traceID + "-" + parentID + "-01", traceID, parentID
}

// tracedService is a service exporting its spans to an OTLP receiver of
// the test, with an account to call it with.
type tracedService struct {
	svc      *service
	receiver *otlpReceiver
	a        account
}

// TestTracing: with OTEL_EXPORTER_OTLP_ENDPOINT set, a REST request and a
// gRPC call continue the caller's trace down to their SQL statements, an
// import posted in a trace is processed and called back in it (the
// callback carries its traceparent), and the log lines name the trace.
func TestTracing(t *testing.T) {
	receiver := newOTLPReceiver(t)
	env := migratedEnv(t, "OTEL_EXPORTER_OTLP_ENDPOINT="+receiver.url, "OTEL_SERVICE_NAME=jobboard-traced",
		"OTEL_BSP_SCHEDULE_DELAY=50", "JOBBOARD_CALLBACK_ALLOW_PRIVATE=true")
	ts := &tracedService{svc: startService(t, env), receiver: receiver, a: createAccount(t, env, "traced")}
	if lines := logLines(ts.svc.stderr.String(), "tracing on: spans are exported over OTLP"); len(lines) != 1 {
		t.Errorf("the start does not say tracing is on:\n%s", ts.svc.stderr.String())
	}
	t.Run("REST", ts.rest)
	t.Run("unsampled caller", ts.unsampledCaller)
	t.Run("gRPC", ts.grpc)
	t.Run("import and callback", ts.importCallback)
}

// rest: the server span is a child of the caller's span, named by the
// route (not the path with its id), and SQL statements descend from it.
func (ts *tracedService) rest(t *testing.T) {
	tp, traceID, parentID := traceparent(t)
	code, _, body := ts.svc.requestWithHeader(http.Header{"Traceparent": {tp}}, "basic", ts.a.APIKey, "GET", "/api/v2.0/jobs.json/424242", "")
	if code != http.StatusNotFound {
		t.Fatalf("GET a missing job: %d %s", code, body)
	}
	const name = "GET /api/v2.0/jobs.json/{id}"
	tr := ts.receiver.waitTrace(traceID, 10*time.Second, func(tr receivedTrace) bool {
		return len(tr.named(name)) == 1 && len(tr.sqlUnder(parentID)) > 0
	})
	server := tr.named(name)
	if len(server) != 1 || server[0].parentID != parentID || server[0].kind != tracepb.Span_SPAN_KIND_SERVER ||
		server[0].attrs["http.route"] != "/api/v2.0/jobs.json/{id}" || server[0].service != "jobboard-traced" {
		t.Fatalf("want one server span %q, child of the caller's %s; trace %s:%v", name, parentID, traceID, tr)
	}
	if sql := tr.sqlUnder(server[0].spanID); len(sql) == 0 {
		t.Errorf("no SQL statement span under the request's span:%v", tr)
	}
	ts.loggedInTrace(t, "request", traceID, `"route":"/api/v2.0/jobs.json/{id}"`)
}

// unsampledCaller: the sampled flag of a caller's traceparent does not
// decide for the service (by default every request is traced), so a
// client cannot keep its requests out of the traces.
func (ts *tracedService) unsampledCaller(t *testing.T) {
	tp, traceID, parentID := traceparent(t)
	tp = strings.TrimSuffix(tp, "-01") + "-00"
	if code, _, body := ts.svc.requestWithHeader(http.Header{"Traceparent": {tp}}, "basic", ts.a.APIKey, "GET", "/api/v2.0/jobs.json", ""); code != 200 {
		t.Fatalf("GET jobs: %d %s", code, body)
	}
	tr := ts.receiver.waitTrace(traceID, 10*time.Second, func(tr receivedTrace) bool { return len(tr.named("GET /api/v2.0/jobs.json")) == 1 })
	if s := tr.named("GET /api/v2.0/jobs.json"); len(s) != 1 || s[0].parentID != parentID {
		t.Errorf("want the request traced as a child of %s despite the flag 00; trace %s:%v", parentID, traceID, tr)
	}
}

// grpc: the same for a gRPC call with a traceparent in its metadata.
func (ts *tracedService) grpc(t *testing.T) {
	tp, traceID, parentID := traceparent(t)
	ctx := metadata.AppendToOutgoingContext(withKey(ts.a.APIKey), "traceparent", tp)
	if _, err := jobboardv2.NewJobServiceClient(ts.svc.grpcConn()).ListJobs(ctx, &jobboardv2.ListJobsRequest{}); err != nil {
		t.Fatalf("ListJobs: %v", err)
	}
	const name = "jobboard.v2.JobService/ListJobs"
	tr := ts.receiver.waitTrace(traceID, 10*time.Second, func(tr receivedTrace) bool {
		return len(tr.named(name)) == 1 && len(tr.sqlUnder(parentID)) > 0
	})
	server := tr.named(name)
	if len(server) != 1 || server[0].parentID != parentID || server[0].kind != tracepb.Span_SPAN_KIND_SERVER {
		t.Fatalf("want one server span %q, child of the caller's %s; trace %s:%v", name, parentID, traceID, tr)
	}
	if sql := tr.sqlUnder(server[0].spanID); len(sql) == 0 {
		t.Errorf("no SQL statement span under the call's span:%v", tr)
	}
	ts.loggedInTrace(t, "rpc", traceID, `"method":"/jobboard.v2.JobService/ListJobs"`)
}

// importCallback: an import posted in a trace is worked, and its callback
// delivered, in spans of that trace; the delivery sends a traceparent
// naming its own client span.
func (ts *tracedService) importCallback(t *testing.T) {
	sent := make(chan string, 1)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case sent <- r.Header.Get("Traceparent"):
		default:
		}
	}))
	defer receiver.Close()
	tp, traceID, parentID := traceparent(t)
	body := fmt.Sprintf(`{"jobs": [{"referenceNumber": "TR1", "title": "Traced", "state": "OH", "driverType": "Student",
		"freightType": "Box", "description": "x"}], "callbackUrl": %q}`, receiver.URL+"/hooks/secret-token?sig=abc")
	code, _, created := ts.svc.requestWithHeader(http.Header{"Traceparent": {tp}}, "basic", ts.a.APIKey, "POST", "/api/v2.0/job-imports", body)
	if code != http.StatusAccepted {
		t.Fatalf("create: %d %s", code, created)
	}
	var got string
	select {
	case got = <-sent:
	case <-time.After(20 * time.Second):
		t.Fatal("the callback did not arrive")
	}
	tr := ts.receiver.waitTrace(traceID, 10*time.Second, func(tr receivedTrace) bool {
		return len(tr.named("process job_import")) == 1 && len(tr.named("process job_import_callback")) == 1 && len(tr.named("POST")) == 1
	})
	for _, name := range []string{"POST /api/v2.0/job-imports", "process job_import", "process job_import_callback", "POST"} {
		spans := tr.named(name)
		if len(spans) != 1 || !tr.under(spans[0], parentID) {
			t.Errorf("want one span %q descending from the caller's %s; trace %s:%v", name, parentID, traceID, tr)
		}
	}
	if worker := tr.named("process job_import"); len(worker) == 1 && len(tr.sqlUnder(worker[0].spanID)) == 0 {
		t.Errorf("no SQL statement span under the import's processing:%v", tr)
	}
	delivery := tr.named("POST")
	if len(delivery) == 1 {
		if want := "00-" + traceID + "-" + delivery[0].spanID + "-01"; got != want {
			t.Errorf("callback traceparent %q, want %q (the delivery's span)", got, want)
		}
		for k, v := range delivery[0].attrs {
			if strings.Contains(v, "secret-token") || strings.Contains(v, "sig=") {
				t.Errorf("the delivery span records the receiver's path or query: %s=%s", k, v)
			}
		}
	}
	for _, msg := range []string{"job import complete", "callback delivered"} {
		ts.loggedInTrace(t, msg, traceID)
	}
}

// loggedInTrace checks that one log line with message msg (and has) names
// the trace and a span.
func (ts *tracedService) loggedInTrace(t *testing.T, msg, traceID string, has ...string) {
	t.Helper()
	var lines []string
	stderr := ts.svc.stderr
	for range 100 { // the access log line is written as the answer leaves
		if lines = logLines(stderr.String(), msg, append(has, `"trace_id":"`+traceID+`"`)...); len(lines) > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(lines) != 1 || !strings.Contains(lines[0], `"span_id":"`) {
		t.Errorf("want one %q line with trace_id %s and a span_id, got %q; log:\n%s", msg, traceID, lines, stderr.String())
	}
}

// TestTracingOff: without an endpoint no exporter is set up, and a
// traceparent a request carries shows nowhere.
func TestTracingOff(t *testing.T) {
	env := migratedEnv(t, "OTEL_SERVICE_NAME=jobboard-untraced")
	svc := startService(t, env)
	a := createAccount(t, env, "untraced")
	tp, traceID, _ := traceparent(t)
	if code, _, body := svc.requestWithHeader(http.Header{"Traceparent": {tp}}, "basic", a.APIKey, "GET", "/api/v2.0/jobs.json", ""); code != 200 {
		t.Fatalf("GET jobs: %d %s", code, body)
	}
	// The line is written as the answer leaves.
	testfix.Eventually(5*time.Second, func() bool {
		return len(logLines(svc.stderr.String(), "request", `"route":"/api/v2.0/jobs.json"`)) == 1
	})
	logs := svc.stderr.String()
	if len(logLines(logs, "request", `"route":"/api/v2.0/jobs.json"`)) != 1 || strings.Contains(logs, "trace_id") ||
		strings.Contains(logs, traceID) || strings.Contains(logs, "tracing") {
		t.Errorf("want the request's line without trace ids, and nothing said of tracing:\n%s", logs)
	}
}

// TestTracingFlushedOnDrain: over OTLP/gRPC, with spans batched for a
// minute, the span of the last request still reaches the receiver: the
// drain after SIGTERM flushes them before the process exits.
func TestTracingFlushedOnDrain(t *testing.T) {
	receiver := newOTLPGRPCReceiver(t)
	env := migratedEnv(t, "OTEL_EXPORTER_OTLP_ENDPOINT="+receiver.url, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc",
		"OTEL_BSP_SCHEDULE_DELAY=60000")
	svc := startService(t, env)
	a := createAccount(t, env, "drained")
	tp, traceID, parentID := traceparent(t)
	if code, _, body := svc.requestWithHeader(http.Header{"Traceparent": {tp}}, "basic", a.APIKey, "GET", "/api/v2.0/jobs.json", ""); code != 200 {
		t.Fatalf("GET jobs: %d %s", code, body)
	}
	if len(receiver.trace(traceID)) != 0 {
		t.Fatal("spans exported before the drain: the test shows nothing")
	}
	if err := svc.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := svc.cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, svc.stderr.String())
	}
	tr := receiver.trace(traceID)
	if s := tr.named("GET /api/v2.0/jobs.json"); len(s) != 1 || s[0].parentID != parentID || s[0].service != "jobboard" {
		t.Errorf("want the request's span (service jobboard, the default name) exported at exit; trace %s:%v", traceID, tr)
	}
}
