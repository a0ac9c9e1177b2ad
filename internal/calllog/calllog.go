// Package calllog writes the one access log line of each call, the same
// way for a REST request and a gRPC call: the side a call came in on starts
// it, notes what it learns as the call goes (the account, fields only it
// knows), and ends it with the fields that name the call on that side
// (method and route and status, or method and code). The request id, the
// duration and the account are written here alone, under the same names
// for both. Neither credentials nor bodies ever reach a line.
package calllog

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/truckjobs/jobboard/internal/requestid"
)

// The message of each side's line, which README "Operating" documents.
const (
	REST = "request"
	GRPC = "rpc"
)

// IsLine reports whether r is an access line written by End: the one
// kind of line that may wait to be written with others (logbuf).
func IsLine(r slog.Record) bool {
	return r.Level == slog.LevelInfo && (r.Message == REST || r.Message == GRPC)
}

// Call is one call being served. The REST gateway and the gRPC server run a
// call's middleware and handler on one goroutine, so it needs no lock.
type Call struct {
	// RequestID is the call's id: the client's when valid, else a new one.
	RequestID string
	started   time.Time
	accountID int64
	extra     []slog.Attr
}

// Start begins a call whose client sent clientID as its request id (empty
// when none); the id is kept when requestid accepts it, else replaced.
func Start(clientID string) *Call {
	return &Call{RequestID: requestid.FromClient(clientID), started: time.Now()}
}

// StartedAt is Start for a call that began at started: for a side that
// learns only after some work whether the call needs a line of its own.
func StartedAt(clientID string, started time.Time) *Call {
	return &Call{RequestID: requestid.FromClient(clientID), started: started}
}

// RequestID is the request id of the call in ctx, "" when there is none.
func RequestID(ctx context.Context) string {
	if c := fromContext(ctx); c != nil {
		return c.RequestID
	}
	return ""
}

type callKey struct{}

// NewContext returns ctx carrying c, for NoteAccount and Add further in.
func NewContext(ctx context.Context, c *Call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

func fromContext(ctx context.Context) *Call {
	c, _ := ctx.Value(callKey{}).(*Call)
	return c
}

// NoteAccount records the account the call in ctx acts for, once the
// authenticator found it; without a call in ctx it does nothing.
func NoteAccount(ctx context.Context, accountID int64) {
	if c := fromContext(ctx); c != nil {
		c.accountID = accountID
	}
}

// Add appends fields to the line of the call in ctx, after the common ones:
// for what one side alone knows about a call.
func Add(ctx context.Context, attrs ...slog.Attr) {
	if c := fromContext(ctx); c != nil {
		c.extra = append(c.extra, attrs...)
	}
}

// End writes the call's line and returns how long the call took. The line
// is msg, then what names the call on its side, then duration_ms,
// request_id, account_id (when one was noted) and the added fields.
func (c *Call) End(ctx context.Context, msg string, what ...slog.Attr) time.Duration {
	now := time.Now()
	elapsed := now.Sub(c.started)
	// The record is handed to the handler directly: slog.LogAttrs would
	// also take the caller's program counter, which no line shows.
	h := slog.Default().Handler()
	if !h.Enabled(ctx, slog.LevelInfo) {
		return elapsed
	}
	r := slog.NewRecord(now, slog.LevelInfo, msg, 0)
	r.AddAttrs(what...)
	r.AddAttrs(slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
		slog.String("request_id", c.RequestID))
	if c.accountID != 0 {
		r.AddAttrs(slog.Int64("account_id", c.accountID))
	}
	r.AddAttrs(c.extra...)
	_ = h.Handle(ctx, r)
	return elapsed
}

// EndUnlogged ends a call that leaves no line: a health check that passed.
// A load balancer checks every replica every second or two (HAProxy's
// REST and gRPC pools, each of several balancers), which made about 60%
// of the lines; a check that fails is logged, with End. It returns how
// long the call took.
func (c *Call) EndUnlogged() time.Duration { return time.Since(c.started) }

// EndRefused ends a call that was refused (a bad key, a rate limit): a
// client may send refused calls far faster than served ones, tens of
// thousands a second on one HTTP/2 connection, so their lines are limited
// to one a second per reason (docs/api.md 7). The line written carries
// refused_calls, how many calls of that reason it stands for; calls left
// unwritten when the refusals stop are counted in a line a second later.
func (c *Call) EndRefused(ctx context.Context, msg, reason string, what ...slog.Attr) time.Duration {
	n, write := refusals.note(msg, reason)
	if !write {
		return time.Since(c.started)
	}
	return c.End(ctx, msg, append(what, slog.Int("refused_calls", n))...)
}

// refusalLines limits the lines of refused calls per side and reason.
type refusalLines struct {
	mu      sync.Mutex
	reasons map[[2]string]*refusalReason
}

type refusalReason struct {
	written   time.Time // when the last line was written
	unwritten int       // calls since then that got no line
	flushing  bool      // a line of the unwritten ones is due
}

// refusalInterval is the least time between two lines of one reason.
const refusalInterval = time.Second

var refusals = &refusalLines{reasons: map[[2]string]*refusalReason{}}

// note counts a refused call and says whether to write its line, and for
// how many calls it stands.
func (l *refusalLines) note(msg, reason string) (n int, write bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := [2]string{msg, reason}
	r := l.reasons[key]
	if r == nil {
		r = &refusalReason{}
		l.reasons[key] = r
	}
	now := time.Now()
	if now.Sub(r.written) >= refusalInterval {
		n, r.unwritten, r.written = r.unwritten+1, 0, now
		return n, true
	}
	r.unwritten++
	if !r.flushing {
		r.flushing = true
		time.AfterFunc(refusalInterval-now.Sub(r.written), func() { l.flush(key) })
	}
	return 0, false
}

// flush writes one line for the calls of a reason left unwritten.
func (l *refusalLines) flush(key [2]string) {
	l.mu.Lock()
	r := l.reasons[key]
	n := r.unwritten
	r.flushing = false
	if n > 0 {
		r.unwritten, r.written = 0, time.Now()
	}
	l.mu.Unlock()
	if n > 0 {
		slog.Info(key[0], slog.String("refused", key[1]), slog.Int("refused_calls", n))
	}
}
