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

// keepPlace is for a handler whose work goes on while it writes (the
// streamed jobs list): the place stays taken as the answer is written, and
// the handler gives it back with the function returned once its work is
// done. The request's own release still runs when it ends.
func keepPlace(w http.ResponseWriter) (release func()) {
	p, ok := w.(*placeWriter)
	if !ok {
		return func() {}
	}
	p.kept = true
	return p.release
}
