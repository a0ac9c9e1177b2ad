package gateway

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
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
