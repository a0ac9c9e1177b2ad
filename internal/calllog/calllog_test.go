package calllog

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/internal/logtest"
)

// TestEnd: a line is the side's fields, then duration, request id, the
// account when one was noted, then the added fields, in that order.
func TestEnd(t *testing.T) {
	tests := []struct {
		name     string
		clientID string
		account  int64
		added    []slog.Attr
		want     string
	}{
		{name: "anonymous", clientID: "trace-1",
			want: `^\{"time":"[^"]+","level":"INFO","msg":"rpc","method":"/a.B/C","code":"OK","duration_ms":[0-9.e-]+,"request_id":"trace-1"\}$`},
		{name: "with account and added field", clientID: "trace-2", account: 42,
			added: []slog.Attr{slog.String("ignored_parameters", "radius")},
			want:  `"code":"OK","duration_ms":[0-9.e-]+,"request_id":"trace-2","account_id":42,"ignored_parameters":"radius"\}$`},
		{name: "client id refused", clientID: "bad\nid",
			want: `"request_id":"[0-9a-f]{24}"\}$`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := logtest.Capture(t)
			call := Start(tt.clientID)
			ctx := NewContext(context.Background(), call)
			if tt.account != 0 {
				NoteAccount(ctx, tt.account)
			}
			Add(ctx, tt.added...)
			call.End(context.Background(), GRPC, slog.String("method", "/a.B/C"), slog.String("code", "OK"))
			line := bytes.TrimSpace([]byte(logs.String()))
			if !regexp.MustCompile(tt.want).Match(line) {
				t.Errorf("line %s\ndoes not match %s", line, tt.want)
			}
		})
	}
}

// TestNoCallInContext: noting into a context without a call is harmless,
// as for a service called directly.
func TestNoCallInContext(t *testing.T) {
	NoteAccount(context.Background(), 7)
	Add(context.Background(), slog.Int("n", 1))
}

// TestIsLine: the lines End writes, on either side, and no other.
func TestIsLine(t *testing.T) {
	var got []slog.Record
	log := slog.New(recordHandler{&got})
	prev := slog.Default()
	slog.SetDefault(log)
	t.Cleanup(func() { slog.SetDefault(prev) })
	Start("").End(context.Background(), REST, slog.String("method", "GET"))
	Start("").End(context.Background(), GRPC, slog.String("method", "/a.B/C"))
	log.Info("serving")
	log.Warn(REST)
	want := []bool{true, true, false, false}
	for i, r := range got {
		if IsLine(r) != want[i] {
			t.Errorf("IsLine(%s %q) = %v", r.Level, r.Message, !want[i])
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d records", len(got))
	}
}

type recordHandler struct{ got *[]slog.Record }

func (h recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h recordHandler) Handle(_ context.Context, r slog.Record) error {
	*h.got = append(*h.got, r)
	return nil
}
func (h recordHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h recordHandler) WithGroup(string) slog.Handler      { return h }

// TestEndRefused: refusals of one reason get at most a line a second: the
// first at once, counting 1; those after it in the same second one line a
// second later counting them; another reason its own line. Each
// refusal's line names what it stands for.
func TestEndRefused(t *testing.T) {
	logs := logtest.Capture(t)
	// Reasons of this run alone: the limits are the process's.
	run := time.Now().UnixNano()
	a, b := fmt.Sprintf("test-401-%d", run), fmt.Sprintf("test-429-%d", run)
	refuse := func(reason string) {
		Start("").EndRefused(context.Background(), REST, reason, slog.Int("status", 401))
	}
	for range 500 {
		refuse(a)
	}
	refuse(b)
	if n := strings.Count(logs.String(), "\n"); n != 2 {
		t.Fatalf("%d lines for 500 refusals of one reason and one of another, want 2 at first:\n%s", n, logs)
	}
	for deadline := time.Now().Add(5 * time.Second); strings.Count(logs.String(), "\n") < 3; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no line counting the refusals left unwritten:\n%s", logs)
		}
	}
	for _, want := range []string{
		`"msg":"request","status":401,"refused_calls":1,`,
		`"msg":"request","refused":"` + a + `","refused_calls":499}`,
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("no line with %s:\n%s", want, logs)
		}
	}
}
