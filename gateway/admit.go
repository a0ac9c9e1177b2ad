package gateway

import (
	"context"
	"net/http"
)

// Admission control (Config.Admit) bounds the requests that work at once.
// A place counts the server's work, not the client's pace: a request takes
// it before its body is read (a waiting request holds no body) and gives
// it back as its answer starts to be written, so a client reading a large
// answer slowly holds a connection and the answer's bytes, not a place.

// admitted takes a place for the request, whose authenticated context is
// ctx, and returns the writer the request answers through, which gives the
// place back on the answer's first byte, and the release to defer (it does
// nothing the second time). ok is false when the request was refused; the
// refusal is written.
func (g *gateway) admitted(ctx context.Context, w http.ResponseWriter, r *http.Request) (_ http.ResponseWriter, release func(), ok bool) {
	if g.admit == nil {
		return w, func() {}, true
	}
	release, err := g.admit(ctx)
	if err != nil {
		g.writeStatusError(ctx, w, r, err)
		return w, nil, false
	}
	return &placeWriter{ResponseWriter: w, release: release}, release, true
}

// placeWriter gives a request's place back before the first byte of its
// answer is written, unless a handler that works while it writes took the
// place over (keepPlace).
type placeWriter struct {
	http.ResponseWriter
	release func()
	kept    bool
}

func (p *placeWriter) WriteHeader(code int) {
	if !p.kept {
		p.release()
	}
	p.ResponseWriter.WriteHeader(code)
}

func (p *placeWriter) Write(b []byte) (int, error) {
	if !p.kept {
		p.release()
	}
	return p.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (p *placeWriter) Unwrap() http.ResponseWriter { return p.ResponseWriter }

// streamPlace is the place of an answer whose work goes on while it is
// written (the streamed jobs list): it stays taken as the answer starts to
// be written; the handler gives it back while it waits on its client
// (handOn) and takes one again before more work (retake). Without Resume
// the place is kept until the work is done. The request's own release
// still runs when it ends.
type streamPlace struct {
	release func()
	resume  func(ctx context.Context) (release func(), err error)
}

// keepPlace takes over the place of the request answered through w.
func (g *gateway) keepPlace(w http.ResponseWriter) *streamPlace {
	p, ok := w.(*placeWriter)
	if !ok {
		return &streamPlace{release: func() {}}
	}
	p.kept = true
	return &streamPlace{release: p.release, resume: g.resume}
}

// handOn is called before a part of the answer is handed to the writer,
// which may wait on the client; last says no more work follows.
func (s *streamPlace) handOn(last bool) {
	if last || s.resume != nil {
		s.release()
	}
}

// retake takes a place again after handOn, for more work.
func (s *streamPlace) retake(ctx context.Context) error {
	if s.resume == nil {
		return nil
	}
	release, err := s.resume(ctx)
	if err != nil {
		s.release = func() {}
		return err
	}
	s.release = release
	return nil
}
