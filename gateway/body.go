package gateway

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"unicode/utf8"
)

// bodyPiece is the size of the pieces a request body is read into: a post
// of a thousand typical jobs fits in one, and a body of 64 MiB is read
// without a buffer that doubles as it grows (which held up to twice the
// body, and three times while it was copied to a larger one).
const bodyPiece = 1 << 20

// requestBody is the body the prepare middleware hands on, already read
// and checked, in pieces that each end at a character boundary. Reading
// it hands out its bytes and lets go of each piece once read. It tells
// the decoder which kind of delete list it holds: both arrive as a pointer
// to a []string.
type requestBody struct {
	pieces [][]byte
	list   deleteList
}

func (b *requestBody) Read(p []byte) (int, error) {
	for len(b.pieces) > 0 && len(b.pieces[0]) == 0 {
		b.pieces[0] = nil
		b.pieces = b.pieces[1:]
	}
	if len(b.pieces) == 0 {
		return 0, io.EOF
	}
	n := copy(p, b.pieces[0])
	b.pieces[0] = b.pieces[0][n:]
	return n, nil
}

func (*requestBody) Close() error { return nil }

// bytes returns what is left of the body in one piece, copied only when
// it was read in several.
func (b *requestBody) bytes() []byte {
	var data []byte
	switch len(b.pieces) {
	case 0:
	case 1:
		data = b.pieces[0]
	default:
		data = bytes.Join(b.pieces, nil)
	}
	b.pieces = nil
	return data
}

// blank is true when what is left of the body is only white space.
func (b *requestBody) blank() bool {
	for _, p := range b.pieces {
		if len(bytes.TrimSpace(p)) > 0 {
			return false
		}
	}
	return true
}

// readBody reads the whole body, refusing one over the route's limit (413)
// or one that is not UTF-8 (400).
func readBody(r *http.Request, limit int64) ([][]byte, *apiError) {
	// A request without a body (most reads) costs no buffer.
	if r.Body == http.NoBody {
		return nil, nil
	}
	if r.ContentLength > limit {
		return nil, bodyTooLarge(limit)
	}
	pieces, size, err := readPieces(r.Body, r.ContentLength, limit)
	if err != nil {
		return nil, &apiError{http.StatusBadRequest, "INVALID_ARGUMENT", "the request body could not be read"}
	}
	if size > limit {
		return nil, bodyTooLarge(limit)
	}
	// No piece ends inside a character, so the body is UTF-8 when each is.
	for _, p := range pieces {
		if !utf8.Valid(p) {
			return nil, &apiError{http.StatusBadRequest, "INVALID_ARGUMENT", "the request body is not valid UTF-8"}
		}
	}
	// Editors and Windows tools start UTF-8 files with a byte order mark;
	// it carries no content, and neither JSON nor the XML root allows it.
	pieces[0] = bytes.TrimPrefix(pieces[0], utf8BOM)
	return pieces, nil
}

// bodyTooLarge is the error of a body over the route's limit.
func bodyTooLarge(limit int64) *apiError {
	return &apiError{http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE",
		fmt.Sprintf("the request body is larger than the %d MiB this endpoint accepts", limit>>20)}
}

// utf8BOM is the UTF-8 encoding of U+FEFF, the byte order mark.
var utf8BOM = []byte("\uFEFF")

// readPieces reads at most limit+1 bytes (one more tells a body over the
// limit) in pieces of bodyPiece bytes, the first of which grows from the
// size the client announced, or from a small buffer, as bytes arrive: a
// client that announces 64 MiB and sends nothing holds no more than one
// piece. It returns at least one piece, and the size read.
func readPieces(r io.Reader, announced, limit int64) ([][]byte, int64, error) {
	r = io.LimitReader(r, limit+1)
	size := int64(0)
	piece := make([]byte, 0, pieceSize(announced, 0, 0))
	var pieces [][]byte
	for {
		if len(piece) == cap(piece) {
			if cap(piece) < bodyPiece {
				grown := make([]byte, len(piece), min(2*cap(piece), bodyPiece))
				copy(grown, piece)
				piece = grown
			} else {
				keep, carry := cutAtCharacter(piece)
				pieces = append(pieces, keep)
				piece = append(make([]byte, 0, pieceSize(announced, size, len(carry))), carry...)
			}
		}
		n, err := r.Read(piece[len(piece):cap(piece)])
		piece = piece[:len(piece)+n]
		size += int64(n)
		if err == io.EOF {
			return append(pieces, piece), size, nil
		}
		if err != nil {
			return nil, 0, err
		}
	}
}

// pieceSize is the capacity of a new piece once size bytes were read,
// carry of which begin it: a whole piece, or what is left of the announced
// size, with room for the read that finds the end.
func pieceSize(announced, size int64, carry int) int {
	if announced <= 0 {
		return max(bytes.MinRead, carry+bytes.MinRead)
	}
	left := max(announced-size, 0) + int64(carry) + bytes.MinRead
	return int(min(left, bodyPiece))
}

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
