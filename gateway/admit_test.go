package gateway_test

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/gateway"
	"github.com/truckjobs/jobboard/internal/pgtest"
	"github.com/truckjobs/jobboard/internal/testfix"
	"github.com/truckjobs/jobboard/server"
)

// events is what a request did, in order, across goroutines.
type events struct {
	mu   sync.Mutex
	list []string
}

func (e *events) add(what string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.list = append(e.list, what)
}

func (e *events) String() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return strings.Join(e.list, ", ")
}

// noteOnce adds what to e the first time it is called.
func noteOnce(e *events, what string) func() {
	var once sync.Once
	return func() { once.Do(func() { e.add(what) }) }
}

// eventWriter notes the answer's first byte.
type eventWriter struct {
	*httptest.ResponseRecorder
	first func()
}

func (w *eventWriter) WriteHeader(code int) { w.first(); w.ResponseRecorder.WriteHeader(code) }
func (w *eventWriter) Write(b []byte) (int, error) {
	w.first()
	return w.ResponseRecorder.Write(b)
}

// eventBody notes the body's first read.
type eventBody struct {
	io.Reader
	first func()
}

func (b *eventBody) Read(p []byte) (int, error) { b.first(); return b.Reader.Read(p) }
func (b *eventBody) Close() error               { return nil }

// TestAdmissionPlaceSpan: the REST gateway takes a request's place before
// it reads the body (a waiting request holds none) and gives it back
// before the answer's first byte (a slow reader holds no place), the
// streamed jobs list once its last page is read; a body announced over the
// limit is refused without a place.
func TestAdmissionPlaceSpan(t *testing.T) {
	st := pgtest.Store(t)
	svcs, err := server.NewServices(st, server.Config{Now: func() time.Time { return fixedNow }, RenderCallback: gateway.RenderJSON})
	if err != nil {
		t.Fatal(err)
	}
	var current *events
	admit := func(context.Context) (func(), error) {
		current.add("admit")
		return noteOnce(current, "release"), nil
	}
	h, err := gateway.New(context.Background(), gateway.Config{Jobs: svcs.Jobs, Drivers: svcs.Drivers, Imports: svcs.Imports,
		Webhooks: svcs.Webhooks, Events: svcs.Events, Authenticate: svcs.Auth.AuthenticateKey, Boundary: server.ErrorBoundary(), Admit: admit})
	if err != nil {
		t.Fatal(err)
	}
	key := testfix.NewAccount(t, st, "Acme Freight").APIKey
	job := `[{"referenceNumber":"R%d","title":"Regional Driver","state":"TX","driverType":"Company Driver","freightType":"Dry Van","description":"x"}]`
	for _, tt := range []struct {
		name, method, path, body string
		announced                int64
		code                     int
		want                     string
	}{
		{"post", "POST", "/api/v2.0/jobs.json", fmt.Sprintf(job, 1), 0, 200, "admit, read body, release, write"},
		{"post over the limit", "POST", "/api/v2.0/jobs.json", fmt.Sprintf(job, 2), 17 << 20, 413, "write"},
		{"drivers", "GET", "/api/v2.0/drivers.xml", "", 0, 200, "admit, release, write"},
		{"not found", "GET", "/api/v2.0/jobs.json/999999", "", 0, 404, "admit, release, write"},
		{"whole list", "GET", "/api/v2.0/jobs.json", "", 0, 200, "admit, release, write"},
		{"one page", "GET", "/api/v2.0/jobs.xml?page_size=1", "", 0, 200, "admit, release, write"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			current = &events{}
			req := httptest.NewRequest(tt.method, tt.path, nil)
			if tt.body != "" {
				req.Body = &eventBody{Reader: strings.NewReader(tt.body), first: noteOnce(current, "read body")}
				req.ContentLength = max(tt.announced, int64(len(tt.body)))
			}
			req.SetBasicAuth(key, "")
			w := &eventWriter{ResponseRecorder: httptest.NewRecorder(), first: noteOnce(current, "write")}
			h.ServeHTTP(w, req)
			if w.Code != tt.code || current.String() != tt.want {
				t.Errorf("%d, events %q; want %d, %q (%s)", w.Code, current, tt.code, tt.want, w.Body)
			}
		})
	}
}

// TestStreamedListResumes: a list of two pages gives its place back as
// each page is handed to the writer and takes one again (Resume) to read
// the next; every place taken is given back, the first before the
// answer's first byte.
func TestStreamedListResumes(t *testing.T) {
	st := pgtest.Store(t)
	svcs, err := server.NewServices(st, server.Config{Now: func() time.Time { return fixedNow }, RenderCallback: gateway.RenderJSON})
	if err != nil {
		t.Fatal(err)
	}
	current := &events{}
	var held atomic.Int32
	take := func(what string) func(context.Context) (func(), error) {
		return func(context.Context) (func(), error) {
			current.add(what)
			held.Add(1)
			var once sync.Once
			return func() { once.Do(func() { held.Add(-1); current.add("release") }) }, nil
		}
	}
	h, err := gateway.New(context.Background(), gateway.Config{Jobs: svcs.Jobs, Drivers: svcs.Drivers, Imports: svcs.Imports,
		Webhooks: svcs.Webhooks, Events: svcs.Events, Authenticate: svcs.Auth.AuthenticateKey, Boundary: server.ErrorBoundary(),
		Admit: take("admit"), Resume: take("resume")})
	if err != nil {
		t.Fatal(err)
	}
	key := testfix.NewAccount(t, st, "Acme Freight").APIKey
	var jobs []string
	for i := range 1001 { // a page holds 1,000
		jobs = append(jobs, fmt.Sprintf(`{"referenceNumber":"R%d","title":"Regional Driver","state":"TX","driverType":"Company Driver","freightType":"Dry Van","description":"x"}`, i))
	}
	call := func(method, path, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.SetBasicAuth(key, "")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	for _, batch := range [][]string{jobs[:1000], jobs[1000:]} { // a post takes 1,000
		if w := call("POST", "/api/v2.0/jobs.json", "["+strings.Join(batch, ",")+"]"); w.Code != 200 || !strings.Contains(w.Body.String(), `"errors":0`) {
			t.Fatalf("post: %d %.300s", w.Code, w.Body)
		}
	}
	current = &events{}
	w := &eventWriter{ResponseRecorder: httptest.NewRecorder()}
	w.first = noteOnce(current, "write")
	req := httptest.NewRequest("GET", "/api/v2.0/jobs.json", nil)
	req.SetBasicAuth(key, "")
	h.ServeHTTP(w, req)
	got := current.String()
	if w.Code != 200 || strings.Count(w.Body.String(), `"referenceNumber"`) != 1001 {
		t.Fatalf("list: %d, %d jobs", w.Code, strings.Count(w.Body.String(), `"referenceNumber"`))
	}
	if !strings.HasPrefix(got, "admit, release, ") || strings.Count(got, "resume") != 1 || strings.Count(got, "release") != 2 || held.Load() != 0 {
		t.Errorf("events %q, %d places held at the end; want admit, release before the first write, one resume, each given back", got, held.Load())
	}
}
