package gateway_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/gateway"
	"github.com/truckjobs/jobboard/gateway/render"
	"github.com/truckjobs/jobboard/server"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/store/storetest"
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
	st := storetest.Store(t)
	svcs, err := server.NewServices(st, server.Config{Now: func() time.Time { return fixedNow }, RenderCallback: render.JSON})
	if err != nil {
		t.Fatal(err)
	}
	var current *events
	admit := func(context.Context) (func(), error) {
		current.add("admit")
		return noteOnce(current, "release"), nil
	}
	h, err := gateway.New(context.Background(), gateway.Config{Jobs: svcs.Jobs, Drivers: svcs.Drivers, Imports: svcs.Imports,
		Webhooks: svcs.Webhooks, Events: svcs.Events, Authenticate: svcs.Auth.AuthenticateKey, Boundary: call.Boundary, Admit: admit})
	if err != nil {
		t.Fatal(err)
	}
	key := storetest.NewAccount(t, st, "Acme Freight").APIKey
	job := `[{"referenceNumber":"R%d","title":"Regional Driver","state":"TX","driverType":"Company Driver","freightType":"Dry Van","description":"x"}]`
	for _, tt := range []struct {
		name, method, path, body string
		announced                int64
		code                     int
		want                     string
	}{
		{"post", "POST", "/api/v2.0/jobs.json", fmt.Sprintf(job, 1), 0, 200, "read body, admit, release, write"},
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
	st := storetest.Store(t)
	svcs, err := server.NewServices(st, server.Config{Now: func() time.Time { return fixedNow }, RenderCallback: render.JSON})
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
		Webhooks: svcs.Webhooks, Events: svcs.Events, Authenticate: svcs.Auth.AuthenticateKey, Boundary: call.Boundary,
		Admit: take("admit"), Resume: take("resume")})
	if err != nil {
		t.Fatal(err)
	}
	key := storetest.NewAccount(t, st, "Acme Freight").APIKey
	// A page of the whole list holds about 2 MB of the jobs' texts: 60
	// jobs of 40,000 characters are two pages.
	var jobs []string
	description := strings.Repeat("x", 40_000)
	for i := range 60 {
		jobs = append(jobs, fmt.Sprintf(`{"referenceNumber":"R%d","title":"Regional Driver","state":"TX","driverType":"Company Driver","freightType":"Dry Van","description":%q}`, i, description))
	}
	call := func(method, path, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.SetBasicAuth(key, "")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	if w := call("POST", "/api/v2.0/jobs.json", "["+strings.Join(jobs, ",")+"]"); w.Code != 200 || !strings.Contains(w.Body.String(), `"errors":0`) {
		t.Fatalf("post: %d %.300s", w.Code, w.Body)
	}
	current = &events{}
	w := &eventWriter{ResponseRecorder: httptest.NewRecorder()}
	w.first = noteOnce(current, "write")
	req := httptest.NewRequest("GET", "/api/v2.0/jobs.json", nil)
	req.SetBasicAuth(key, "")
	h.ServeHTTP(w, req)
	got := current.String()
	if w.Code != 200 || strings.Count(w.Body.String(), `"referenceNumber"`) != len(jobs) {
		t.Fatalf("list: %d, %d jobs", w.Code, strings.Count(w.Body.String(), `"referenceNumber"`))
	}
	if !strings.HasPrefix(got, "admit, release, ") || strings.Count(got, "resume") != 1 || strings.Count(got, "release") != 2 || held.Load() != 0 {
		t.Errorf("events %q, %d places held at the end; want admit, release before the first write, one resume, each given back", got, held.Load())
	}
}

// TestPlaceHandedBackWhileBodyArrives: a request takes its place when the
// first piece of its body has arrived, not before, and hands it back while
// it waits for the next (docs/api.md 7: a place is held only while a request
// is processed); it takes one again (Resume) to go on, and every place is
// given back before the answer's first byte.
func TestPlaceHandedBackWhileBodyArrives(t *testing.T) {
	st := storetest.Store(t)
	svcs, err := server.NewServices(st, server.Config{Now: func() time.Time { return fixedNow }, RenderCallback: render.JSON})
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
		Webhooks: svcs.Webhooks, Events: svcs.Events, Authenticate: svcs.Auth.AuthenticateKey, Boundary: call.Boundary,
		Admit: take("admit"), Resume: take("resume")})
	if err != nil {
		t.Fatal(err)
	}
	key := storetest.NewAccount(t, st, "Acme Freight").APIKey
	var jobs []string
	for i := range 200 { // about 100 KB: more than one 64 KiB piece
		jobs = append(jobs, fmt.Sprintf(`{"referenceNumber":"R%d","title":"Regional Driver","state":"TX","driverType":"Company Driver","freightType":"Dry Van","description":%q}`,
			i, strings.Repeat("x", 400)))
	}
	post := "[" + strings.Join(jobs, ",") + "]"
	firstPart, rest := post[:70_000], post[70_000:]
	pr, pw := io.Pipe()
	req := httptest.NewRequest("POST", "/api/v2.0/jobs.json", pr)
	req.ContentLength = int64(len(post))
	req.SetBasicAuth(key, "")
	w := &eventWriter{ResponseRecorder: httptest.NewRecorder(), first: noteOnce(current, "write")}
	served := make(chan struct{})
	go func() {
		defer close(served)
		h.ServeHTTP(w, req)
	}()
	if _, err := io.WriteString(pw, firstPart); err != nil {
		t.Fatal(err)
	}
	// The first piece arrived: the request takes its place, decodes it and,
	// finding the next not there yet, hands the place back.
	for deadline := time.Now().Add(10 * time.Second); current.String() != "admit, release"; {
		if time.Now().After(deadline) {
			t.Fatalf("events %q while the body's second part is awaited, want admit, release", current)
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := io.WriteString(pw, rest); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	<-served
	got := current.String()
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"errors":0`) {
		t.Fatalf("post: %d %.300s", w.Code, w.Body)
	}
	if !strings.HasPrefix(got, "admit, release, resume, ") || !strings.HasSuffix(got, "release, write") ||
		strings.Count(got, "admit") != 1 || held.Load() != 0 {
		t.Errorf("events %q, %d places held at the end; want admit, release, resume, ..., release, write, one admit, each given back", got, held.Load())
	}
}

// TestBodyArrivalTimeout: a body that has not arrived in full by the body
// arrival time (30 s; shortened here) after the headers is answered 408, in
// the path's format, naming the rule; the connection is not held longer.
func TestBodyArrivalTimeout(t *testing.T) {
	defer gateway.SetBodyArrival(300 * time.Millisecond)()
	st := storetest.Store(t)
	svcs, err := server.NewServices(st, server.Config{Now: func() time.Time { return fixedNow }, RenderCallback: render.JSON})
	if err != nil {
		t.Fatal(err)
	}
	h, err := gateway.New(context.Background(), gateway.Config{Jobs: svcs.Jobs, Drivers: svcs.Drivers, Imports: svcs.Imports,
		Webhooks: svcs.Webhooks, Events: svcs.Events, Authenticate: svcs.Auth.AuthenticateKey, Boundary: call.Boundary})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	key := storetest.NewAccount(t, st, "Acme Freight").APIKey
	for _, tt := range []struct{ path, want string }{
		{"/api/v2.0/jobs.json", `{"error":{"code":408,"status":"REQUEST_TIMEOUT","message":"the request body had not arrived in full 300ms after the request's headers; send it faster, or in smaller requests"}}`},
		{"/api/v2.0/jobs.xml", `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<error><code>408</code><status>REQUEST_TIMEOUT</status><message>the request body had not arrived in full 300ms after the request's headers; send it faster, or in smaller requests</message></error>`},
	} {
		t.Run(tt.path, func(t *testing.T) {
			conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			auth := base64.StdEncoding.EncodeToString([]byte(key + ":"))
			started := time.Now()
			if _, err := fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: jobboard\r\nAuthorization: Basic %s\r\nContent-Length: 100\r\n\r\n[", tt.path, auth); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if took := time.Since(started); resp.StatusCode != 408 || strings.TrimSpace(string(body)) != tt.want || took > 5*time.Second {
				t.Errorf("%d after %s: %s\nwant 408 soon after 300ms: %s", resp.StatusCode, took, body, tt.want)
			}
		})
	}
}
