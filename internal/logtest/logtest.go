// Package logtest captures the default logger's lines in tests, for the
// packages whose log lines are part of what they promise.
package logtest

import (
	"bytes"
	"log/slog"
	"sync"
	"testing"

	"github.com/truckjobs/jobboard/internal/jsonlog"
)

// Buffer holds what a logger, a child process or other goroutines write
// while the test reads it, such as the JSON lines logged during a test.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String is everything logged so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Capture sends the default logger's JSON lines, written by the service's
// handler, to the returned buffer
// until the test ends. Tests that capture must not run in parallel.
func Capture(t testing.TB) *Buffer {
	t.Helper()
	out := &Buffer{}
	prev := slog.Default()
	slog.SetDefault(slog.New(jsonlog.New(out, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return out
}
