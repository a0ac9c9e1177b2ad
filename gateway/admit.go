package gateway

import (
	"context"
	"net/http"
	"sync"
)

// Admission control (Config.Admit) bounds the requests that work at once.
// A place counts the server's work, not the client's pace (docs/api.md 7):
// a request takes it once there is something to work on (a request without
// a body at once, one with a body when its first piece has arrived), hands
// it back whenever it waits on its client for more of the body, and gives
// it back as its answer starts to be written. A client sending its body
// slowly, or reading a large answer slowly, holds a connection and a few
// buffers, never a place.

// place is a request's place of the admission control: taken once (admit,
// which may refuse), then handed back and taken again (resume, which only
// waits) around each wait on the client. Its methods are called from the
// request's goroutine, release also from the answer's writer, which is the
// same goroutine; the lock only guards against a handler that writes from
// another.
type place struct {
	ctx    context.Context
	admit  func(ctx context.Context) (release func(), err error)
	resume func(ctx context.Context) (release func(), err error)

	mu      sync.Mutex
	release func() // gives back the place held; nil when none is
	taken   bool   // admit has succeeded once
	kept    bool   // a handler that works while it writes took the place over
}

// newPlace is the place of the request whose authenticated context is ctx;
// nil when the server has no admission control.
func (g *gateway) newPlace(ctx context.Context) *place {
	if g.admit == nil {
		return nil
	}
	return &place{ctx: ctx, admit: g.admit, resume: g.resume}
}

// take takes the request's first place, waiting in line; it fails with
// the admission control's refusal (a gRPC status: 503 and Retry-After).
// Once taken, it does nothing.
func (p *place) take() error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.taken {
		return nil
	}
	release, err := p.admit(p.ctx)
	if err != nil {
		return err
	}
	p.release, p.taken = release, true
	return nil
}

// waitOnClient hands the place back while the request waits on its client
// (more of its body, or the reading of a part of its answer) and returns
// the function that takes one again before more work. Without Resume the
// place is kept throughout, as it is before the first take.
func (p *place) waitOnClient() (retake func() error) {
	if p == nil || p.resume == nil {
		return func() error { return nil }
	}
	p.mu.Lock()
	held := p.release != nil
	p.mu.Unlock()
	if !held {
		return func() error { return nil }
	}
	p.giveBack()
	return func() error {
		release, err := p.resume(p.ctx)
		if err != nil {
			return err
		}
		p.mu.Lock()
		p.release = release
		p.mu.Unlock()
		return nil
	}
}

// giveBack gives the place held back, if any.
func (p *place) giveBack() {
	if p == nil {
		return
	}
	p.mu.Lock()
	release := p.release
	p.release = nil
	p.mu.Unlock()
	if release != nil {
		release()
	}
}

// answering gives the place back as the answer starts, unless a handler
// that works while it writes took it over (keepPlace).
func (p *place) answering() {
	if p == nil {
		return
	}
	p.mu.Lock()
	kept := p.kept
	p.mu.Unlock()
	if !kept {
		p.giveBack()
	}
}

// placeWriter gives a request's place back before the first byte of its
// answer is written.
type placeWriter struct {
	http.ResponseWriter
	place *place
}

func (w *placeWriter) WriteHeader(code int) {
	w.place.answering()
	w.ResponseWriter.WriteHeader(code)
}

func (w *placeWriter) Write(b []byte) (int, error) {
	w.place.answering()
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *placeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// streamPlace is the place of an answer whose work goes on while it is
// written (the streamed jobs list): it stays taken as the answer starts to
// be written; the handler gives it back while it waits on its client
// (handOn) and takes one again before more work (retake). Without Resume
// the place is kept until the work is done. The request's own release
// still runs when it ends.
type streamPlace struct {
	place *place
	again func() error // takes a place again after handOn; nil when none is to be taken
}

// keepPlace takes over the place of the request answered through w.
func (g *gateway) keepPlace(w http.ResponseWriter) *streamPlace {
	p, ok := w.(*placeWriter)
	if !ok {
		return &streamPlace{}
	}
	p.place.mu.Lock()
	p.place.kept = true
	p.place.mu.Unlock()
	return &streamPlace{place: p.place}
}

// handOn is called before a part of the answer is handed to the writer,
// which may wait on the client; last says no more work follows.
func (s *streamPlace) handOn(last bool) {
	if last {
		s.place.giveBack()
		s.again = nil
		return
	}
	s.again = s.place.waitOnClient()
}

// retake takes a place again after handOn, for more work.
func (s *streamPlace) retake() error {
	if s.again == nil {
		return nil
	}
	again := s.again
	s.again = nil
	return again()
}

// release gives back the place held, if any, when the work ends early.
func (s *streamPlace) release() { s.place.giveBack() }
