package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/truckjobs/jobboard/internal/metrics"
)

// TestUncleanPathsAreNotRedirected: the API server answers a path with an
// empty or dot segment with the JSON 404 of an unknown path (docs/api.md,
// Errors). Go's ServeMux, which holds the API beside /healthz and /docs,
// used to answer them 307 to the cleaned path with an HTML body.
func TestUncleanPathsAreNotRedirected(t *testing.T) {
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	srv, _ := httpServers(nil, api, metrics.New(), &atomicBool{}, &readyProbes{})
	ts := httptest.NewServer(srv.Handler)
	defer ts.Close()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	tests := []struct {
		path   string
		status int
		body   string
	}{
		{"/api/v2.0/webhooks", http.StatusTeapot, ""}, // a clean path reaches the API
		{"/api/v2.0//webhooks", 404, `{"error":{"code":404,"status":"NOT_FOUND","message":"no such resource"}}`},
		{"/api/v2.0/./jobs.json", 404, `"NOT_FOUND"`},
		{"/api/v2.0/x/../jobs.json", 404, `"NOT_FOUND"`},
		{"/api/v2.0/jobs.json/..", 404, `"NOT_FOUND"`},
		{"/healthz/../healthz", 404, `"NOT_FOUND"`},
		{"/api/v2.0/jobs.xml//7", 404, `<status>NOT_FOUND</status>`},
		{"/healthz", 200, "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			resp, err := client.Get(ts.URL + tt.path)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status || !strings.Contains(string(body), tt.body) || resp.Header.Get("Location") != "" {
				t.Errorf("%d Location %q %s; want %d with %s", resp.StatusCode, resp.Header.Get("Location"), body, tt.status, tt.body)
			}
		})
	}
}
