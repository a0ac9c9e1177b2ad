// Package logbuf gathers the log lines written in quick succession into one
// write. The service writes a line per request to stderr: under load, a
// system call per line cost a few percent of a cheap read's CPU, and a
// pause of a few milliseconds before the write lets one call carry all the
// lines of that time. Only the lines chosen to wait do (Holding): any other
// goes out at once with all held before it, and the command flushes before
// it exits.
package logbuf

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// maxHeld is the most bytes held before a write goes out without waiting.
const maxHeld = 64 << 10

// Writer holds what is written to it for at most delay, then writes it to
// the underlying writer in one call. It is safe for concurrent use.
type Writer struct {
	w     io.Writer
	delay time.Duration
	timer *time.Timer

	// out is held while writing to w, so lines go out in the order they came.
	out sync.Mutex

	mu    sync.Mutex
	buf   []byte
	spare []byte // the buffer last written out, reused for the next lines
	armed bool   // the timer will flush what buf holds
}

// New returns a Writer to w that holds lines for at most delay.
func New(w io.Writer, delay time.Duration) *Writer {
	b := &Writer{w: w, delay: delay}
	b.timer = time.AfterFunc(time.Hour, b.flushDue)
	b.timer.Stop()
	return b
}

// Write keeps p to be written within the delay; it writes at once when
// more than maxHeld bytes are held. A write error is returned to the
// caller whose write found it, or dropped when the timer's write met it.
func (b *Writer) Write(p []byte) (int, error) {
	b.mu.Lock()
	b.buf = append(b.buf, p...)
	full := len(b.buf) >= maxHeld
	if !full && !b.armed {
		b.armed = true
		b.timer.Reset(b.delay)
	}
	b.mu.Unlock()
	if full {
		return len(p), b.Flush()
	}
	return len(p), nil
}

func (b *Writer) flushDue() {
	b.mu.Lock()
	b.armed = false
	b.mu.Unlock()
	_ = b.Flush()
}

// Flush writes out everything written so far.
func (b *Writer) Flush() error {
	b.out.Lock()
	defer b.out.Unlock()
	b.mu.Lock()
	held := b.buf
	b.buf, b.spare = b.spare[:0], nil
	b.mu.Unlock()
	if len(held) == 0 {
		b.keep(held)
		return nil
	}
	_, err := b.w.Write(held)
	b.keep(held)
	return err
}

// keep makes a written buffer the next spare, unless a burst grew it large.
func (b *Writer) keep(buf []byte) {
	if cap(buf) > 4*maxHeld {
		return
	}
	b.mu.Lock()
	b.spare = buf[:0]
	b.mu.Unlock()
}

// Holding returns next, writing to w, with only the records mayWait
// accepts held back: after any other record everything held is written,
// so a warning, an error or a line about the server's state is read as it
// happens, and a line logged on the way to a crash is not lost.
func Holding(w *Writer, mayWait func(slog.Record) bool, next slog.Handler) slog.Handler {
	return holding{Handler: next, mayWait: mayWait, w: w}
}

type holding struct {
	slog.Handler
	mayWait func(slog.Record) bool
	w       *Writer
}

func (h holding) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if !h.mayWait(r) {
		if ferr := h.w.Flush(); err == nil {
			err = ferr
		}
	}
	return err
}

func (h holding) WithAttrs(attrs []slog.Attr) slog.Handler {
	return holding{Handler: h.Handler.WithAttrs(attrs), mayWait: h.mayWait, w: h.w}
}

func (h holding) WithGroup(name string) slog.Handler {
	return holding{Handler: h.Handler.WithGroup(name), mayWait: h.mayWait, w: h.w}
}
