package gateway

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"
	"unicode/utf8"
)

// bodyPiece is the size of the pieces a request body is read and handed
// on in. The body is read on a goroutine of its own while the handler
// decodes the pieces already read, so that on two cores the reading (a
// fifth of the accepting of a 38 MB import, most of it the kernel's copy)
// runs beside the decoding instead of before it. A piece is small, so that
// decoding starts soon after the body does.
const bodyPiece = 64 << 10

// piecesAhead is how many read pieces may wait for the handler; with the
// piece being read and the one being decoded, a body holds at most that
// many and two more, which are reused: a body of 38 MB is never held
// whole, nor its pages touched for the first time piece after piece.
const piecesAhead = 8

// bodyStream reads a request body on a goroutine of its own, in pieces that
// each end at a character boundary, checked as UTF-8 (the first without
// its byte order mark). It reads the body to its end whatever the handler
// does with it: a body over the route's limit, or one that is not UTF-8,
// is refused as such even when its start already failed to decode, as when
// the body was read whole before decoding.
type bodyStream struct {
	pieces   chan []byte   // checked pieces, in order; closed at the end of the body
	free     chan []byte   // pieces the handler has read, for the reader to reuse
	unread   chan struct{} // closed when the handler reads no more
	stopOnce sync.Once
	done     chan struct{} // closed when the reader has ended
	refused  *apiError     // why the body was refused; set before pieces closes
}

// readBody starts reading r's body, decoding it as coding says, refusing it
// once read if it is over limit (413), not UTF-8 (400), not decodable
// (gunzipBody), or not in full by the connection's read deadline (408, see
// bodyArrival). The limit holds for the decoded body. Close the body when
// the handler is done.
func readBody(r *http.Request, limit int64, coding bodyCoding) *requestBody {
	// A request without a body (most reads) costs no goroutine.
	if r.Body == http.NoBody {
		return &requestBody{}
	}
	s := &bodyStream{
		pieces: make(chan []byte, piecesAhead),
		free:   make(chan []byte, piecesAhead+2),
		unread: make(chan struct{}),
		done:   make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		var src io.Reader = r.Body
		if coding == gzipCoding {
			src = newGunzipBody(r.Body)
		}
		s.refused = s.read(io.LimitReader(src, limit+1), limit)
		close(s.pieces)
	}()
	b := &requestBody{stream: s}
	if r.ContentLength > 0 && coding == identityCoding {
		b.sizeHint = int(min(r.ContentLength, limit))
	}
	return b
}

// read reads at most limit+1 bytes (one more tells a body over the limit)
// piece by piece, handing each on unless the body is already known not to
// be UTF-8, and returns why the body is refused, or nil.
func (s *bodyStream) read(r io.Reader, limit int64) *apiError {
	var size int64
	var carry [utf8.UTFMax]byte // an incomplete character that ended the last piece
	carried := 0
	valid := true
	for first := true; ; first = false {
		piece := s.buffer()
		n, err := io.ReadFull(r, piece[carried:cap(piece)])
		copy(piece, carry[:carried])
		size += int64(n)
		piece = piece[:carried+n]
		last := err == io.EOF || err == io.ErrUnexpectedEOF
		var refused refusedRead
		switch {
		case errors.As(err, &refused):
			return refused.refusal
		case err != nil && !last && errors.Is(err, os.ErrDeadlineExceeded):
			return bodyLate()
		case err != nil && !last:
			return &apiError{http.StatusBadRequest, "INVALID_ARGUMENT", "the request body could not be read"}
		case size > limit:
			return bodyTooLarge(limit)
		}
		if !last {
			// No piece ends inside a character, so the body is UTF-8 when each is.
			var rest []byte
			piece, rest = cutAtCharacter(piece)
			carried = copy(carry[:], rest)
		}
		valid = valid && utf8.Valid(piece)
		if first {
			// Editors and Windows tools start UTF-8 files with a byte order
			// mark; it carries no content, and neither JSON nor the XML root
			// allows it.
			piece = bytes.TrimPrefix(piece, utf8BOM)
		}
		if !valid {
			s.giveBack(piece) // kept for the rest of the body, only to be checked
		} else {
			select {
			case s.pieces <- piece:
			case <-s.unread:
				s.giveBack(piece)
			}
		}
		if last {
			break
		}
	}
	if !valid {
		return &apiError{http.StatusBadRequest, "INVALID_ARGUMENT", "the request body is not valid UTF-8"}
	}
	return nil
}

// buffer is an empty piece, one the handler has read if there is one.
func (s *bodyStream) buffer() []byte {
	select {
	case p := <-s.free:
		return p[:cap(p)]
	default:
		return make([]byte, bodyPiece)
	}
}

// giveBack keeps a piece that has been read for the reader to reuse; a
// piece cut shorter (the first, without its byte order mark) is left to
// the collector.
func (s *bodyStream) giveBack(p []byte) {
	if cap(p) != bodyPiece {
		return
	}
	select {
	case s.free <- p:
	default:
	}
}

// stop tells the reader the handler reads no more, and waits for it to
// have read the rest of the body.
func (s *bodyStream) stop() {
	s.stopOnce.Do(func() { close(s.unread) })
	<-s.done
}

// errBodyRefused is what reading a refused body returns; the error handler
// answers with the refusal itself (requestBody.refusal).
var errBodyRefused = errors.New("the request body was refused")

// requestBody is the body the prepare middleware hands on: the pieces of a
// bodyStream as they arrive. Reading it hands out their bytes and gives
// each piece back once read. It tells the decoder which kind of delete
// list it holds: both arrive as a pointer to a []string.
type requestBody struct {
	stream   *bodyStream // nil for a request without a body
	piece    []byte      // what is left to read of the current piece
	held     []byte      // the current piece, given back once read
	peeked   [][]byte    // pieces blank took from the stream, not read yet
	sizeHint int         // the size the client announced, for bytes
	list     deleteList
	// place is the request's place of the admission control, taken when
	// the first piece arrives and handed back while the next is awaited.
	place *place
	// placeErr is why no place was taken: the admission control's refusal,
	// or the end of the request; the body then reads as refused.
	placeErr error
}

func (b *requestBody) Read(p []byte) (int, error) {
	for len(b.piece) == 0 {
		if !b.next() {
			return 0, b.end()
		}
	}
	n := copy(p, b.piece)
	b.piece = b.piece[n:]
	return n, nil
}

func (*requestBody) Close() error { return nil }

// next gives the current piece back and makes the next one current; it is
// false at the end of the body.
func (b *requestBody) next() bool {
	if b.held != nil {
		b.stream.giveBack(b.held)
	}
	b.held, b.piece = nil, nil
	switch {
	case len(b.peeked) > 0:
		b.held, b.peeked = b.peeked[0], b.peeked[1:]
	case b.stream == nil || b.placeErr != nil:
		return false
	default:
		p, ok := b.receive()
		if !ok {
			return false
		}
		b.held = p
	}
	b.piece = b.held
	return true
}

// receive waits for the next piece of the stream, false at its end or when
// no place could be taken to work on it. The request works on what has
// arrived with a place; while it waits on its client for more it holds
// none (docs/api.md 7: a slow body never makes other accounts wait).
func (b *requestBody) receive() ([]byte, bool) {
	var p []byte
	var ok bool
	again := func() error { return nil }
	select {
	case p, ok = <-b.stream.pieces:
	default:
		again = b.place.waitOnClient()
		p, ok = <-b.stream.pieces
	}
	err := again()
	if err == nil {
		err = b.place.take()
	}
	if err != nil {
		b.placeErr = err
		if ok {
			b.stream.giveBack(p)
		}
		return nil, false
	}
	return p, ok
}

// end is the error that ends reading: io.EOF, or errBodyRefused.
func (b *requestBody) end() error {
	if b.placeErr != nil {
		return errBodyRefused
	}
	if b.stream != nil && b.stream.refused != nil {
		return errBodyRefused
	}
	return io.EOF
}

// bytes reads what is left of the body in one piece, for the decoders that
// take bytes.
func (b *requestBody) bytes() ([]byte, error) {
	out := make([]byte, 0, b.sizeHint)
	for len(b.piece) > 0 || b.next() {
		out = append(out, b.piece...)
		b.piece = nil
	}
	if err := b.end(); err != io.EOF {
		return nil, err
	}
	return out, nil
}

// blank is true when what is left of the body is only white space. It
// reads ahead until it finds more; a refused body is not blank.
func (b *requestBody) blank() bool {
	if len(bytes.TrimSpace(b.piece)) > 0 {
		return false
	}
	for _, p := range b.peeked {
		if len(bytes.TrimSpace(p)) > 0 {
			return false
		}
	}
	if b.stream == nil {
		return true
	}
	if b.placeErr != nil {
		return false
	}
	for {
		p, ok := b.receive()
		if !ok {
			break
		}
		b.peeked = append(b.peeked, p)
		if len(bytes.TrimSpace(p)) > 0 {
			return false
		}
	}
	return b.stream.refused == nil && b.placeErr == nil
}

// refusal reads the rest of the body and returns why it was refused, or
// nil. An answer to a request whose body was refused is that refusal,
// whatever else went wrong first.
func (b *requestBody) refusal() *apiError {
	if b.stream == nil {
		return nil
	}
	b.stream.stop()
	return b.stream.refused
}

// close ends the reading of the body before the handler returns: the
// server's connection may not be read once it has.
func (b *requestBody) close() {
	if b.stream != nil {
		b.stream.stop()
	}
}

// bodyTooLarge is the error of a body over the route's limit.
func bodyTooLarge(limit int64) *apiError {
	return &apiError{http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE",
		fmt.Sprintf("the request body is larger than the %d MiB this endpoint accepts", limit>>20)}
}

// bodyArrival is how long after its headers a request's body may take to
// arrive in full (docs/api.md 7). Past it the body is answered 408: a
// client that sends too slowly holds a connection for a bounded time, and
// is told why.
var bodyArrival = 30 * time.Second

// bodyLate is the error of a body that had not arrived by bodyArrival.
func bodyLate() *apiError {
	return &apiError{http.StatusRequestTimeout, "REQUEST_TIMEOUT",
		fmt.Sprintf("the request body had not arrived in full %s after the request's headers; send it faster, or in smaller requests", bodyArrival)}
}

// utf8BOM is the UTF-8 encoding of U+FEFF, the byte order mark.
var utf8BOM = []byte("\uFEFF")

// cutAtCharacter cuts p before a character its end leaves incomplete.
func cutAtCharacter(p []byte) (keep, carry []byte) {
	for i := len(p) - 1; i >= 0 && i >= len(p)-utf8.UTFMax; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				return p[:i], p[i:]
			}
			break
		}
	}
	return p, nil
}
