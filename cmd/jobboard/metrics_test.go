package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/truckjobs/jobboard/server/store/storetest"
)

// TestMetricsListener: /metrics is served on the metrics listener only; on
// the API port it is an unknown path, answered like any other (docs/api.md,
// Transport). Empty JOBBOARD_METRICS_ADDR turns the listener off.
func TestMetricsListener(t *testing.T) {
	dbURL := storetest.URL(t)
	svc := startService(t, []string{"DATABASE_URL=" + dbURL})
	tests := []struct {
		name        string
		base, path  string
		wantCode    int
		wantType    string
		wantContent string
	}{
		{"metrics on the metrics listener", svc.metricsBase, "/metrics", 200, "text/plain", "go_goroutines"},
		{"metrics not on the API port", svc.httpBase, "/metrics", 404, "application/json", `"NOT_FOUND"`},
		{"the API not on the metrics listener", svc.metricsBase, "/api/v2.0/jobs.json", 404, "", ""},
		{"health not on the metrics listener", svc.metricsBase, "/healthz", 404, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.Get(tt.base + tt.path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body strings.Builder
			_, _ = io.Copy(&body, resp.Body)
			if resp.StatusCode != tt.wantCode || !strings.HasPrefix(resp.Header.Get("Content-Type"), tt.wantType) ||
				!strings.Contains(body.String(), tt.wantContent) {
				t.Errorf("GET %s: %d %s\n%s", tt.path, resp.StatusCode, resp.Header.Get("Content-Type"), body.String())
			}
		})
	}
	// The 404 on the API port is the API's error, the same as for any path
	// no route takes.
	_, _, unknown := svc.request("", "", "GET", "/no-such-path", "")
	_, _, metrics := svc.request("", "", "GET", "/metrics", "")
	var a, b any
	if json.Unmarshal([]byte(unknown), &a) != nil || json.Unmarshal([]byte(metrics), &b) != nil ||
		strings.ReplaceAll(unknown, "/no-such-path", "/metrics") != metrics {
		t.Errorf("/metrics on the API port answered %s; an unknown path %s", metrics, unknown)
	}
	if !strings.Contains(svc.stderr.String(), `"metrics":"`+strings.TrimPrefix(svc.metricsBase, "http://")+`"`) {
		t.Errorf("the serving line does not say where metrics are:\n%s", svc.stderr.String())
	}

	t.Run("off", func(t *testing.T) {
		off := startService(t, []string{"DATABASE_URL=" + dbURL, "JOBBOARD_METRICS_ADDR="})
		serving := 0
		for _, line := range strings.Split(off.stderr.String(), "\n") {
			if strings.Contains(line, `"msg":"serving"`) {
				serving++
				if strings.Contains(line, `"metrics"`) {
					t.Errorf("metrics served with JOBBOARD_METRICS_ADDR empty: %s", line)
				}
			}
		}
		if serving != 1 {
			t.Errorf("%d serving lines in:\n%s", serving, off.stderr.String())
		}
	})
}
