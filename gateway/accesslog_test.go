package gateway

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/internal/logtest"
)

// TestAccessLogRouteLabels: the route an observer gets is a pattern or a
// fixed path, never the raw path of a request.
func TestAccessLogRouteLabels(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		// What the gateway does for a request one of its routes takes.
		if r.URL.Path == "/api/v2.0/jobs.json/42" {
			noteRoute(r.Context(), "/api/v2.0/jobs.json/{id}")
			return
		}
		if r.URL.Path != "/docs" {
			w.WriteHeader(http.StatusNotFound)
		}
	})
	type observed struct {
		route, method string
		status        int
	}
	var got observed
	h := AccessLog(mux, func(route, method string, status int, _ time.Duration) { got = observed{route, method, status} })
	tests := []struct {
		name, method, path string
		want               observed
	}{
		{"gateway route", "GET", "/api/v2.0/jobs.json/42", observed{"/api/v2.0/jobs.json/{id}", "GET", 200}},
		{"mux pattern", "GET", "/healthz", observed{"/healthz", "GET", 200}},
		{"fixed path behind the catch-all", "GET", "/docs", observed{"/docs", "GET", 200}},
		{"unrouted", "GET", "/api/v2.0/jobs.json/42/extra", observed{"unmatched", "GET", 404}},
		{"unrouted, made-up method", "BREW", "/x9", observed{"unmatched", "BREW", 404}},
		{"fixed path, wrong method", "POST", "/healthz", observed{"/healthz", "POST", 404}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got = observed{}
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(tt.method, tt.path, nil))
			if got != tt.want {
				t.Errorf("observed %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestAccessLogLeavesOutPassingProbes: a health check that passes leaves
// no line (a balancer's checks were most of the log), one that fails does,
// and an API request always does; the observers are told of all of them.
func TestAccessLogLeavesOutPassingProbes(t *testing.T) {
	logs := logtest.Capture(t)
	ready := true
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { noteRoute(r.Context(), "/api/v2.0/jobs.json") })
	observed := 0
	h := AccessLog(mux, func(string, string, int, time.Duration) { observed++ })
	for _, tt := range []struct {
		name, path string
		ready      bool
		logged     bool
	}{
		{"liveness", "/healthz", true, false},
		{"ready", "/readyz", true, false},
		{"not ready", "/readyz", false, true},
		{"an API request", "/api/v2.0/jobs.json", true, true},
	} {
		ready = tt.ready
		before := strings.Count(logs.String(), "\n")
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", tt.path, nil))
		if got := strings.Count(logs.String(), "\n") - before; got != map[bool]int{false: 0, true: 1}[tt.logged] {
			t.Errorf("%s: %d access log lines, want logged %v:\n%s", tt.name, got, tt.logged, logs.String())
		}
	}
	if observed != 4 {
		t.Errorf("observers told of %d requests, want 4", observed)
	}
}
