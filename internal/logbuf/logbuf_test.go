package logbuf_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/internal/logbuf"
)

// sink is the underlying writer: it counts the writes it got.
type sink struct {
	mu     sync.Mutex
	got    bytes.Buffer
	writes int
}

func (s *sink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	return s.got.Write(p)
}

func (s *sink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got.String()
}

func (s *sink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes
}

func TestLinesAreHeldThenWrittenTogether(t *testing.T) {
	for _, tt := range []struct {
		name  string
		delay time.Duration
		write func(w *logbuf.Writer)
		// outAtOnce: what the sink holds right after write.
		outAtOnce string
	}{
		{"held within the delay", time.Hour, func(w *logbuf.Writer) { fmt.Fprint(w, "a\n"); fmt.Fprint(w, "b\n") }, ""},
		{"written at once when over the limit", time.Hour, func(w *logbuf.Writer) {
			fmt.Fprint(w, "a\n")
			fmt.Fprint(w, strings.Repeat("x", 64<<10)+"\n")
		}, "a\n" + strings.Repeat("x", 64<<10) + "\n"},
		{"a line that may not wait writes what is held", time.Hour, func(w *logbuf.Writer) {
			mayWait := func(r slog.Record) bool { return r.Message == "routine" }
			log := slog.New(logbuf.Holding(w, mayWait, slog.NewTextHandler(w, &slog.HandlerOptions{
				ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
					if a.Key == slog.TimeKey {
						return slog.Attr{}
					}
					return a
				}}))).With("k", 1)
			log.Info("routine")
			log.Warn("routine")
			log.Info("news")
			log.Info("routine")
		}, "level=INFO msg=routine k=1\nlevel=WARN msg=routine k=1\nlevel=INFO msg=news k=1\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var s sink
			w := logbuf.New(&s, tt.delay)
			tt.write(w)
			if got := s.String(); got != tt.outAtOnce {
				t.Errorf("out at once: %q, want %q", got, tt.outAtOnce)
			}
			before := s.String()
			fmt.Fprint(w, "last\n")
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if got := s.String(); !strings.HasSuffix(got, "last\n") || !strings.HasPrefix(got, before) {
				t.Errorf("after Flush: %q", got)
			}
		})
	}
}

func TestTheDelayWritesOnce(t *testing.T) {
	var s sink
	w := logbuf.New(&s, 20*time.Millisecond)
	for i := range 50 {
		fmt.Fprintf(w, "line %d\n", i)
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.count() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := strings.Count(s.String(), "\n"); got != 50 || s.count() != 1 {
		t.Errorf("%d lines in %d writes, want 50 in 1", got, s.count())
	}
}

// Lines written from many goroutines all come out whole, each goroutine's
// in its order.
func TestConcurrentWritersKeepOrder(t *testing.T) {
	var s sink
	w := logbuf.New(&s, time.Millisecond)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				fmt.Fprintf(w, "%d %d %s\n", g, i, strings.Repeat("y", 100))
			}
		})
	}
	wg.Wait()
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	next := map[int]int{}
	for _, line := range strings.Split(strings.TrimSuffix(s.String(), "\n"), "\n") {
		var g, i int
		var rest string
		if _, err := fmt.Sscanf(line, "%d %d %s", &g, &i, &rest); err != nil || len(rest) != 100 || i != next[g] {
			t.Fatalf("line %q after %d lines of goroutine %d", line, next[g], g)
		}
		next[g]++
	}
	for g := range 8 {
		if next[g] != 2000 {
			t.Errorf("goroutine %d: %d lines", g, next[g])
		}
	}
}
