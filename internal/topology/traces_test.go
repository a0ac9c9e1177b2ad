package topology

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// tracedImport: an import posted through HAProxy with a sampled
// traceparent is found in Jaeger as one trace: the REST request on one
// replica, the import's processing on another, SQL statements under both,
// and the callback's delivery, whose traceparent (as the receiver got it)
// names the delivery's span. Which replica works an import is the queue's
// choice, so imports are posted four at a time until one was worked away
// from the replica that took its request.
func tracedImport(t *testing.T, acct account) {
	recv := newTraceparentReceiver(t)
	for round := 1; round <= 3; round++ {
		posted := map[string]tracedPost{} // by import id
		for range 4 {
			p := postTracedImport(t, acct, recv.URL+"/hook")
			posted[p.importID] = p
		}
		for id, p := range posted {
			got := recv.await(t, id, 30*time.Second)
			tr := awaitTrace(t, p.traceID, 30*time.Second)
			request, worker := tr.Replica(tr.one(t, "POST /api/v2.0/job-imports")), tr.Replica(tr.one(t, "process job_import"))
			if request == worker {
				continue
			}
			checkImportTrace(t, tr, p, got)
			t.Logf("figures: traced import: trace %s in Jaeger, %d spans (%d SQL statements) from %d replicas: "+
				"the request on %s, the import worked on %s; round %d of imports posted four at a time",
				p.traceID, len(tr.Spans), len(tr.sql()), len(tr.Processes), request, worker, round)
			t.Logf("the trace as make topology-trace TRACE=%s prints it:\n%s", p.traceID, strings.Join(tr.Tree(), "\n"))
			return
		}
	}
	t.Errorf("12 imports were each worked on the replica that took their request; want one worked elsewhere")
}

// checkImportTrace checks one import's trace: every span descends from
// the caller's, the processing and the callback's delivery are in it with
// SQL statements under the processing, and the receiver's traceparent
// names the delivery's span.
func checkImportTrace(t *testing.T, tr jaegerTrace, p tracedPost, traceparent string) {
	t.Helper()
	for _, s := range tr.Spans {
		if !tr.under(s, p.parentID) {
			t.Errorf("span %q does not descend from the caller's span %s:%v", s.OperationName, p.parentID, tr)
		}
	}
	for _, name := range []string{"process job_import_callback", "POST"} {
		tr.one(t, name)
	}
	if worker := tr.one(t, "process job_import"); len(tr.sqlUnder(worker.SpanID)) == 0 {
		t.Errorf("no SQL statement span under the import's processing:%v", tr)
	}
	if request := tr.one(t, "POST /api/v2.0/job-imports"); len(tr.sqlUnder(request.SpanID)) == 0 {
		t.Errorf("no SQL statement span under the request:%v", tr)
	}
	if want := "00-" + p.traceID + "-" + tr.one(t, "POST").SpanID + "-01"; traceparent != want {
		t.Errorf("the callback's traceparent %q, want %q (the delivery's span)", traceparent, want)
	}
}

// tracedPost is one import posted in a trace of the test's.
type tracedPost struct {
	importID, traceID, parentID string
}

// postTracedImport posts a one-job import through HAProxy, as a child of
// a new span of the test's, sampled.
func postTracedImport(t *testing.T, acct account, callback string) tracedPost {
	t.Helper()
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	p := tracedPost{traceID: hex.EncodeToString(b[:16]), parentID: hex.EncodeToString(b[16:])}
	body := fmt.Sprintf(`{"jobs": [{"referenceNumber": "TRACE-%s", "title": "Traced", "state": "OH", "driverType": "Student",
		"freightType": "Box", "description": "x"}], "callbackUrl": %q}`, p.traceID[:8], callback)
	req, err := http.NewRequest(http.MethodPost, RESTURL()+"/api/v2.0/job-imports", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(acct.APIKey, "")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Traceparent", "00-"+p.traceID+"-"+p.parentID+"-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var created struct {
		Data struct{ ID string } `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&created); err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("post a traced import: %s %v", resp.Status, err)
	}
	p.importID = created.Data.ID
	return p
}

// traceparentReceiver takes import callbacks and keeps the traceparent
// each import's came with.
type traceparentReceiver struct {
	*httptest.Server
	mu   sync.Mutex
	byID map[string]string
}

func newTraceparentReceiver(t *testing.T) *traceparentReceiver {
	r := &traceparentReceiver{byID: map[string]string{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var imp struct {
			Data struct{ ID string } `json:"data"`
		}
		_ = json.Unmarshal(body, &imp)
		r.mu.Lock()
		r.byID[imp.Data.ID] = req.Header.Get("Traceparent")
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.Close)
	return r
}

// await is the traceparent of import id's callback, once it came.
func (r *traceparentReceiver) await(t *testing.T, id string, limit time.Duration) string {
	t.Helper()
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		r.mu.Lock()
		tp, ok := r.byID[id]
		r.mu.Unlock()
		if ok {
			return tp
		}
	}
	t.Fatalf("import %s: no callback after %v", id, limit)
	return ""
}

// awaitTrace asks Jaeger for trace id until it holds the request, the
// processing, the callback job and its delivery: the replicas export
// their spans in batches, every few seconds.
func awaitTrace(t *testing.T, id string, limit time.Duration) jaegerTrace {
	t.Helper()
	var tr jaegerTrace
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		found, err := FindTrace(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		tr = jaegerTrace{found}
		complete := true
		for _, name := range []string{"POST /api/v2.0/job-imports", "process job_import", "process job_import_callback", "POST"} {
			complete = complete && len(tr.named(name)) == 1
		}
		if complete {
			return tr
		}
	}
	t.Fatalf("trace %s is not whole in Jaeger after %v:%v", id, limit, tr)
	return tr
}

// jaegerTrace is a trace from Jaeger, with the questions the test asks.
type jaegerTrace struct{ Trace }

func (tr jaegerTrace) named(name string) []TraceSpan {
	var out []TraceSpan
	for _, s := range tr.Spans {
		if s.OperationName == name {
			out = append(out, s)
		}
	}
	return out
}

// one is the trace's only span named name; the test fails without one.
func (tr jaegerTrace) one(t *testing.T, name string) TraceSpan {
	t.Helper()
	spans := tr.named(name)
	if len(spans) != 1 {
		t.Fatalf("want one span %q:%v", name, tr)
	}
	return spans[0]
}

// under reports whether s descends, parent by parent within the trace,
// from span ancestor (which may be outside it, the caller's).
func (tr jaegerTrace) under(s TraceSpan, ancestor string) bool {
	byID := map[string]TraceSpan{}
	for _, x := range tr.Spans {
		byID[x.SpanID] = x
	}
	for range len(tr.Spans) + 1 {
		parent := s.Parent()
		if parent == ancestor {
			return true
		}
		next, ok := byID[parent]
		if !ok {
			return false
		}
		s = next
	}
	return false
}

// sql lists the trace's SQL statement spans.
func (tr jaegerTrace) sql() []TraceSpan {
	var out []TraceSpan
	for _, s := range tr.Spans {
		if s.Tag("db.query.text") != "" {
			out = append(out, s)
		}
	}
	return out
}

// sqlUnder lists the SQL statement spans descending from span ancestor.
func (tr jaegerTrace) sqlUnder(ancestor string) []TraceSpan {
	var out []TraceSpan
	for _, s := range tr.sql() {
		if tr.under(s, ancestor) {
			out = append(out, s)
		}
	}
	return out
}

// String lists the trace's spans for a failure message.
func (tr jaegerTrace) String() string {
	var b strings.Builder
	for _, s := range tr.Spans {
		fmt.Fprintf(&b, "\n  %s span=%s parent=%s on %s", s.OperationName, s.SpanID, s.Parent(), tr.Replica(s))
	}
	return b.String()
}
