package boundary

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/internal/logtest"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

var errDown = errors.New("connection refused")

func TestStatus(t *testing.T) {
	b := Boundary{Unavailable: func(err error) bool { return errors.Is(err, errDown) }}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancelExpired := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancelExpired()
	cutByContext := errors.New("pq: canceling statement due to user request")
	tests := []struct {
		name     string
		ctx      context.Context // the request's; Background when nil
		err      error
		wantCode codes.Code
		wantMsg  string
		// wantLog matches the log line, empty when nothing is logged.
		wantLog string
	}{
		{name: "nil", err: nil, wantCode: codes.OK},
		{name: "a coded error passes as it is", err: status.Error(codes.NotFound, "job 7 not found"),
			wantCode: codes.NotFound, wantMsg: "job 7 not found"},
		{name: "a plain error is Internal, logged", err: errors.New("pq: oops"),
			wantCode: codes.Internal, wantMsg: InternalMessage, wantLog: `"level":"ERROR","msg":"internal error","error":"pq: oops"`},
		{name: "a cancelled client", err: fmt.Errorf("list jobs: %w", context.Canceled), wantCode: codes.Canceled},
		{name: "a deadline", err: context.DeadlineExceeded, wantCode: codes.DeadlineExceeded},
		{name: "the database is down", err: fmt.Errorf("list jobs: %w", errDown), wantCode: codes.Unavailable,
			wantLog: `"level":"WARN","msg":"database unavailable","error":"list jobs: connection refused"`},
		{name: "a statement cut as the client went away", ctx: cancelled, err: cutByContext, wantCode: codes.Canceled},
		{name: "a statement cut at the request's deadline", ctx: expired, err: cutByContext, wantCode: codes.DeadlineExceeded},
		{name: "the database down as the client went away", ctx: cancelled, err: errDown, wantCode: codes.Canceled},
		{name: "a coded error of an ended request passes as it is", ctx: cancelled, err: status.Error(codes.NotFound, "job 7 not found"),
			wantCode: codes.NotFound, wantMsg: "job 7 not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := logtest.Capture(t)
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			got := status.Convert(b.Status(ctx, tt.err))
			if got.Code() != tt.wantCode || (tt.wantMsg != "" && got.Message() != tt.wantMsg) {
				t.Errorf("status %v %q, want %v %q", got.Code(), got.Message(), tt.wantCode, tt.wantMsg)
			}
			if tt.wantLog == "" && logs.String() != "" || !strings.Contains(logs.String(), tt.wantLog) {
				t.Errorf("logged %q, want %q", logs, tt.wantLog)
			}
		})
	}
}

// TestZeroBoundary: without a classifier nothing is Unavailable.
func TestZeroBoundary(t *testing.T) {
	logtest.Capture(t)
	if got := status.Code(Boundary{}.Status(context.Background(), errDown)); got != codes.Internal {
		t.Errorf("code %v, want Internal", got)
	}
}

// TestPanic: the panic value, where it happened and the stack are logged,
// in that order; the client gets a detail-free Internal.
func TestPanic(t *testing.T) {
	logs := logtest.Capture(t)
	err := Panic(context.Background(), "boom", "path", "/api/v2.0/jobs.json")
	if st := status.Convert(err); st.Code() != codes.Internal || st.Message() != InternalMessage {
		t.Errorf("status %v %q", st.Code(), st.Message())
	}
	want := regexp.MustCompile(`"level":"ERROR","msg":"panic","panic":"boom","path":"/api/v2.0/jobs.json","stack":"goroutine [^"]*boundary\.TestPanic`)
	if !want.MatchString(logs.String()) {
		t.Errorf("logged %s", logs)
	}
}
