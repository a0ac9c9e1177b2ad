package gateway_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/truckjobs/jobboard/gateway"
)

// TestIgnoredParametersNamed: every REST route answers as before when the
// query holds parameters it does not read, and names them in
// X-Ignored-Parameters and in the access log line.
func TestIgnoredParametersNamed(t *testing.T) {
	a := newAPI(t)
	seedDrivers(a)
	var logged bytes.Buffer
	previous := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(&logged, nil)))
	t.Cleanup(func() { slog.SetDefault(previous) })
	h := gateway.AccessLog(a.handler)
	tests := []struct {
		name, method, path, body string
		status                   int
		ignored                  string
	}{
		{"the issue's example", "GET", "/api/v2.0/drivers.xml?state=TX&radius=50&zip=75001", "", 200, "radius, zip"},
		{"known only", "GET", "/api/v2.0/drivers.json?state=TX&lives_within_radius=50&lives_within_zip=78040", "", 200, ""},
		{"with a bad value", "GET", "/api/v2.0/drivers.json?has_job_apps=maybe&foo=1", "", 400, "foo"},
		{"driver detail", "GET", "/api/v2.0/drivers.json/1?id=2&verbose=1", "", 200, "id, verbose"},
		{"jobs list paged", "GET", "/api/v2.0/jobs.json?page_size=1&utm_source=mail", "", 200, "utm_source"},
		{"jobs list, JSON names", "GET", "/api/v2.0/jobs.xml?pageSize=1&pageToken=", "", 200, ""},
		{"jobs list whole", "GET", "/api/v2.0/jobs.json?limit=5", "", 200, "limit"},
		{"job detail", "GET", "/api/v2.0/jobs.json/999?fields=title", "", 404, "fields"},
		{"post", "POST", "/api/v2.0/jobs.json?dry_run=1", "[]", 200, "dry_run"},
		{"delete, body field in the query", "DELETE", "/api/v2.0/jobs.json?ids=5", "[]", 200, "ids"},
		{"import", "POST", "/api/v2.0/job-imports?jobs=1", `{"jobs": []}`, 202, "jobs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logged.Reset()
			req := httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body))
			req.SetBasicAuth(a.key, "")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.status {
				t.Errorf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			if got := rec.Header().Get("X-Ignored-Parameters"); got != tt.ignored {
				t.Errorf("X-Ignored-Parameters %q, want %q", got, tt.ignored)
			}
			line := logged.String()
			want, _ := json.Marshal(map[string]string{"ignored_parameters": tt.ignored})
			if field := strings.Trim(string(want), "{}"); tt.ignored != "" && !strings.Contains(line, field) {
				t.Errorf("access log %q lacks %s", line, field)
			}
			if tt.ignored == "" && strings.Contains(line, "ignored_parameters") {
				t.Errorf("access log %q names ignored parameters", line)
			}
		})
	}
	// The filter the client meant is not applied: every TX driver is listed.
	resp := a.do(http.MethodGet, "/api/v2.0/drivers.xml?state=TX&radius=50&zip=75001", "")
	resp.Body.Close()
	if got := resp.Header.Get("X-Total-Count"); got != "1" {
		t.Errorf("X-Total-Count %q, want 1", got)
	}
}
