package jsonlog

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"
	"time"
)

// replaceOptions are the option sets every case is written with: none,
// the service's kind (the level as text, strings rewritten), and
// ReplaceAttr functions that drop a field or make it a group.
var replaceOptions = map[string]*slog.HandlerOptions{
	"none": nil,
	"level as text, strings rewritten": {ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		switch a.Value.Kind() {
		case slog.KindString:
			return slog.String(a.Key, strings.ReplaceAll(a.Value.String(), "hunter2", "xxxxx"))
		case slog.KindAny:
			if l, ok := a.Value.Any().(slog.Level); ok && len(groups) == 0 {
				return slog.String(a.Key, l.String())
			}
		}
		return a
	}},
	"drops a field": {ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == "drop" || a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}},
	"makes a group": {ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == "grouped" {
			return slog.Group("g", slog.Int("inner", 1))
		}
		return a
	}},
	"debug and up": {Level: slog.LevelDebug},
}

type valuer struct{}

func (valuer) LogValue() slog.Value { return slog.StringValue("from a LogValuer") }

// TestSameAsJSONHandler writes records of every kind of value through a
// Handler and through slog.JSONHandler with the same options: the lines
// must be the same bytes, whichever path the Handler took.
func TestSameAsJSONHandler(t *testing.T) {
	at := time.Date(2026, 12, 4, 13, 5, 7, 123456789, time.UTC)
	cases := []struct {
		name  string
		time  time.Time
		level slog.Level
		msg   string
		attrs []slog.Attr
	}{
		{"access line", at, slog.LevelInfo, "request", []slog.Attr{slog.String("method", "GET"),
			slog.String("route", "/api/v2.0/jobs.json/{id}"), slog.Int("status", 200),
			slog.Float64("duration_ms", 2.513), slog.String("request_id", "a1b2c3"), slog.Int64("account_id", 42)}},
		{"no attributes", at, slog.LevelWarn, "starting", nil},
		{"zero time", time.Time{}, slog.LevelInfo, "m", []slog.Attr{slog.Int("n", 1)}},
		{"time out of RFC 3339's years", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), slog.LevelInfo, "m", nil},
		{"another zone", at.In(time.FixedZone("x", -5*3600)), slog.LevelInfo, "m", nil},
		{"levels in between", at, slog.LevelInfo + 2, "m", nil},
		{"below info", at, slog.LevelDebug - 1, "m", nil},
		{"secret", at, slog.LevelError, "password hunter2", []slog.Attr{slog.String("dsn", "postgres://u:hunter2@h/db")}},
		{"escapes", at, slog.LevelInfo, "line\nbreak", []slog.Attr{slog.String("q", `say "hi" \ there`),
			slog.String("tab", "a\tb"), slog.String("ctl", "\x01\x7f"), slog.String("html", "<a href='x'>&amp;</a>")}},
		{"unicode", at, slog.LevelInfo, "café", []slog.Attr{slog.String("sep", "a\u2028b\u2029c"),
			slog.String("bad", "\xff\xfe"), slog.String("emoji", "🚚")}},
		{"odd keys", at, slog.LevelInfo, "m", []slog.Attr{slog.String("", "empty key"), slog.Int("k\"q", 1),
			slog.String("ключ", "v")}},
		{"integers", at, slog.LevelInfo, "m", []slog.Attr{slog.Int64("min", math.MinInt64), slog.Uint64("max", math.MaxUint64)}},
		{"plain floats", at, slog.LevelInfo, "m", []slog.Attr{slog.Float64("zero", 0), slog.Float64("negzero", math.Copysign(0, -1)),
			slog.Float64("third", 1.0/3), slog.Float64("neg", -12.5)}},
		// One boundary a record: a record the short path gives up on is
		// written whole by JSONHandler, which would hide a wrong boundary.
		{"smallest plain float", at, slog.LevelInfo, "m", []slog.Attr{slog.Float64("x", 1e-6)}},
		{"just below it", at, slog.LevelInfo, "m", []slog.Attr{slog.Float64("x", 9.99e-7)}},
		{"negative, just below it", at, slog.LevelInfo, "m", []slog.Attr{slog.Float64("x", -9.99e-7)}},
		{"largest plain float", at, slog.LevelInfo, "m", []slog.Attr{slog.Float64("x", 9.99e20)}},
		{"just above it", at, slog.LevelInfo, "m", []slog.Attr{slog.Float64("x", 1e21)}},
		{"a quote", at, slog.LevelInfo, "m", []slog.Attr{slog.String("x", `a"b`)}},
		{"a backslash", at, slog.LevelInfo, "m", []slog.Attr{slog.String("x", `a\b`)}},
		{"a control character", at, slog.LevelInfo, "m", []slog.Attr{slog.String("x", "a\x1fb")}},
		{"DEL", at, slog.LevelInfo, "m", []slog.Attr{slog.String("x", "a\x7fb")}},
		{"space and tilde", at, slog.LevelInfo, "m", []slog.Attr{slog.String("x", " ~")}},
		{"not numbers", at, slog.LevelInfo, "m", []slog.Attr{slog.Float64("nan", math.NaN()), slog.Float64("inf", math.Inf(-1))}},
		{"other kinds", at, slog.LevelInfo, "m", []slog.Attr{slog.Bool("yes", true), slog.Bool("no", false),
			slog.Duration("took", 1500*time.Millisecond), slog.Time("at", at)}},
		{"any", at, slog.LevelInfo, "m", []slog.Attr{slog.Any("err", errors.New("boom")), slog.Any("list", []int{1, 2}),
			slog.Any("nil", nil), slog.Any("valuer", valuer{})}},
		{"groups", at, slog.LevelInfo, "m", []slog.Attr{slog.Group("g", slog.Int("a", 1), slog.String("b", "c")),
			slog.Group("empty"), slog.Group("", slog.Int("inline", 2))}},
		{"replaced", at, slog.LevelInfo, "m", []slog.Attr{slog.String("drop", "x"), slog.Int("grouped", 1), slog.Int("kept", 2)}},
		{"empty attr", at, slog.LevelInfo, "m", []slog.Attr{{}, slog.Int("after", 1)}},
	}
	for optName, opts := range replaceOptions {
		for _, c := range cases {
			t.Run(optName+"/"+c.name, func(t *testing.T) {
				r := slog.NewRecord(c.time, c.level, c.msg, 0)
				r.AddAttrs(c.attrs...)
				var got, want bytes.Buffer
				h, ref := New(&got, opts), slog.NewJSONHandler(&want, opts)
				ctx := context.Background()
				if h.Enabled(ctx, c.level) != ref.Enabled(ctx, c.level) {
					t.Fatalf("Enabled(%v) differs", c.level)
				}
				if err := h.Handle(ctx, r); err != nil {
					t.Fatal(err)
				}
				if err := ref.Handle(ctx, r); err != nil {
					t.Fatal(err)
				}
				if got.String() != want.String() {
					t.Errorf("line differs:\n got %s\nwant %s", got.String(), want.String())
				}
			})
		}
	}
}

// TestAccessLineTakesShortPath checks that a line of the kind the service
// writes for every call is written by the short path, not handed over.
func TestAccessLineTakesShortPath(t *testing.T) {
	for name, opts := range replaceOptions {
		if opts != nil && opts.ReplaceAttr != nil && name != "level as text, strings rewritten" {
			continue
		}
		r := slog.NewRecord(time.Now(), slog.LevelInfo, "rpc", 0)
		r.AddAttrs(slog.String("method", "/jobboard.v2.JobService/GetJob"), slog.String("code", "OK"),
			slog.Float64("duration_ms", 0.731), slog.String("request_id", "0f3c"), slog.Int64("account_id", 7),
			slog.String("trace_id", "4bf92f3577b34da6a3ce929d0e0e4736"))
		if _, ok := New(&bytes.Buffer{}, opts).appendLine(nil, r); !ok {
			t.Errorf("%s: an access line went to the general path", name)
		}
	}
}

// TestDerivedHandlers checks that a handler made with fields or a group
// writes what JSONHandler's does.
func TestDerivedHandlers(t *testing.T) {
	var got, want bytes.Buffer
	h := New(&got, nil).WithAttrs([]slog.Attr{slog.String("component", "outbox")}).WithGroup("batch")
	ref := slog.NewJSONHandler(&want, nil).WithAttrs([]slog.Attr{slog.String("component", "outbox")}).WithGroup("batch")
	r := slog.NewRecord(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), slog.LevelInfo, "sent", 0)
	r.AddAttrs(slog.Int("n", 3))
	_ = h.Handle(context.Background(), r)
	_ = ref.Handle(context.Background(), r)
	if got.String() != want.String() {
		t.Errorf("got %s\nwant %s", got.String(), want.String())
	}
}

// TestLinesStayWhole writes from many goroutines, half of them through the
// general path, to a writer that is not safe for concurrent use: every
// line must come out whole (run with -race).
func TestLinesStayWhole(t *testing.T) {
	var out bytes.Buffer
	h := New(&out, nil)
	var wg sync.WaitGroup
	const writers, lines = 8, 200
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range lines {
				r := slog.NewRecord(time.Now(), slog.LevelInfo, "m", 0)
				if w%2 == 0 {
					r.AddAttrs(slog.Any("list", []int{w}))
				} else {
					r.AddAttrs(slog.Int("w", w))
				}
				if err := h.Handle(context.Background(), r); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(got) != writers*lines {
		t.Fatalf("%d lines, want %d", len(got), writers*lines)
	}
	for _, l := range got {
		if !strings.HasPrefix(l, `{"time":"`) || !strings.HasSuffix(l, "}") || strings.Count(l, "{") != 1 {
			t.Fatalf("line broken: %q", l)
		}
	}
}

// FuzzSameAsJSONHandler compares the two handlers on any text and numbers.
func FuzzSameAsJSONHandler(f *testing.F) {
	f.Add("request", "/api/v2.0/jobs.json/{id}", 2.513, int64(200))
	f.Add("a\"b", "\xff\u2028", 1e-7, int64(-1))
	f.Fuzz(func(t *testing.T, msg, s string, x float64, n int64) {
		r := slog.NewRecord(time.Unix(1700000000, 5).UTC(), slog.LevelInfo, msg, 0)
		r.AddAttrs(slog.String("s", s), slog.String(s, "as a key"), slog.Float64("x", x), slog.Int64("n", n))
		opts := replaceOptions["level as text, strings rewritten"]
		var got, want bytes.Buffer
		_ = New(&got, opts).Handle(context.Background(), r)
		_ = slog.NewJSONHandler(&want, opts).Handle(context.Background(), r)
		if got.String() != want.String() {
			t.Errorf("got %s\nwant %s", got.String(), want.String())
		}
	})
}

// BenchmarkAccessLine writes an access line through JSONHandler and
// through a Handler with the service's kind of ReplaceAttr.
func BenchmarkAccessLine(b *testing.B) {
	opts := replaceOptions["level as text, strings rewritten"]
	r := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
	r.AddAttrs(slog.String("method", "GET"), slog.String("route", "/api/v2.0/jobs.json/{id}"), slog.Int("status", 200),
		slog.Float64("duration_ms", 2.513), slog.String("request_id", "d4c3b2a1e5f6"), slog.Int64("account_id", 42))
	for name, h := range map[string]slog.Handler{
		"JSONHandler": slog.NewJSONHandler(discard{}, opts),
		"jsonlog":     New(discard{}, opts),
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = h.Handle(context.Background(), r)
			}
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
