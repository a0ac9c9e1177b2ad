package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/truckjobs/jobboard/gateway"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/internal/boundary"
	"github.com/truckjobs/jobboard/internal/logtest"
)

// failingJobs is a job service whose GetJob (and whole list) fails as the test says: by
// panicking, or with an error that carries no gRPC code.
type failingJobs struct {
	restv2.UnimplementedJobServiceServer
	fail func() error
}

func (j failingJobs) GetJob(context.Context, *restv2.GetJobRequest) (*restv2.GetJobResponse, error) {
	return nil, j.fail()
}

func (j failingJobs) EachOfWholeListPage(context.Context, string, func(*restv2.Job) error) (string, error) {
	return "", j.fail()
}

var errDatabaseDown = errors.New("dial tcp: connection refused")

// TestServiceFailures: what escapes a service over REST goes through the
// same boundary as over gRPC: a panic and an uncoded error are a 500 that
// says nothing of the cause, logged once with it; an unreachable database
// is a 503, a client gone away a 499.
func TestServiceFailures(t *testing.T) {
	tests := []struct {
		name       string
		fail       func() error
		wantStatus int
		wantBody   string
		// wantLog matches the log; notLogged must not appear in it.
		wantLog, notLogged string
	}{
		{name: "panic", fail: func() error { panic("boom") }, wantStatus: 500,
			wantBody: `{"error":{"code":500,"status":"INTERNAL","message":"internal error"}}`,
			wantLog:  `"msg":"panic","panic":"boom","path":"/api/v2.0/jobs.json/7","stack":"goroutine `, notLogged: `"request failed"`},
		{name: "uncoded error", fail: func() error { return fmt.Errorf("get job: %w", errors.New("pq: broken")) }, wantStatus: 500,
			wantBody: `{"error":{"code":500,"status":"INTERNAL","message":"internal error"}}`,
			wantLog:  `"level":"ERROR","msg":"internal error","error":"get job: pq: broken"`, notLogged: `"request failed"`},
		{name: "database unreachable", fail: func() error { return fmt.Errorf("get job: %w", errDatabaseDown) }, wantStatus: 503,
			wantBody: `"status":"UNAVAILABLE"`, wantLog: `"msg":"database unavailable"`},
		{name: "client gone", fail: func() error { return context.Canceled }, wantStatus: 499,
			wantBody: `"status":"CANCELLED"`, notLogged: `"level":"ERROR"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := logtest.Capture(t)
			h, err := gateway.New(context.Background(), gateway.Config{
				Jobs:         failingJobs{fail: tt.fail},
				Authenticate: func(ctx context.Context, _, _ string) (context.Context, error) { return ctx, nil },
				Boundary:     boundary.Boundary{Unavailable: func(err error) bool { return errors.Is(err, errDatabaseDown) }},
			})
			if err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v2.0/jobs.json/7", nil))
			if rec.Code != tt.wantStatus || !strings.Contains(rec.Body.String(), tt.wantBody) {
				t.Errorf("got %d %s, want %d with %s", rec.Code, rec.Body, tt.wantStatus, tt.wantBody)
			}
			if !regexp.MustCompile(regexp.QuoteMeta(tt.wantLog)).MatchString(logs.String()) ||
				tt.notLogged != "" && strings.Contains(logs.String(), tt.notLogged) {
				t.Errorf("logged %s\nwant %s and not %q", logs, tt.wantLog, tt.notLogged)
			}
		})
	}
}
