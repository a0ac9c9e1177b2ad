package gateway

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestReadBodyInPieces: a body is read in pieces that never end inside a
// character, whatever the size the client announced, and reading it back
// gives the body (its byte order mark removed); a body over the limit or
// not UTF-8 ends in a refusal instead.
func TestReadBodyInPieces(t *testing.T) {
	// "a" first puts every piece boundary inside a two-byte character.
	large := "a" + strings.Repeat("é", 5*bodyPiece/2)
	for _, tc := range []struct {
		name, body, want string
		status           int
	}{
		{"empty", "", "", 0},
		{"small", `{"jobs": []}`, `{"jobs": []}`, 0},
		{"byte order mark", "\uFEFF[1]", "[1]", 0},
		{"pieces cut between characters", large, large, 0},
		{"invalid after a piece boundary", large + "\xc3x", "", http.StatusBadRequest},
		{"invalid in the first piece", "\xff" + large, "", http.StatusBadRequest},
		{"an incomplete character at the end", large + "\xc3", "", http.StatusBadRequest},
		{"over the limit", large + large, "", http.StatusRequestEntityTooLarge},
		{"over the limit, and not UTF-8 before", "\xff" + large + large, "", http.StatusRequestEntityTooLarge},
	} {
		for _, announced := range []bool{true, false} {
			r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tc.body))
			if !announced {
				r.ContentLength = -1
			}
			b := readBody(r, int64(3*len(large)/2), identityCoding)
			var got []byte
			pieces := 0
			for p := range b.stream.pieces {
				if !utf8.Valid(p) || len(p) > bodyPiece {
					t.Errorf("%s (announced %t): piece %d of %d bytes, UTF-8 %t", tc.name, announced, pieces, len(p), utf8.Valid(p))
				}
				got = append(got, p...)
				pieces++
			}
			refused := b.refusal()
			if tc.status != 0 {
				if refused == nil || refused.httpStatus != tc.status {
					t.Errorf("%s (announced %t): %v, want status %d", tc.name, announced, refused, tc.status)
				}
				continue
			}
			if refused != nil {
				t.Fatalf("%s (announced %t): %v", tc.name, announced, refused)
			}
			if len(tc.body) > bodyPiece && pieces < 2 {
				t.Errorf("%s (announced %t): %d bytes in %d piece", tc.name, announced, len(tc.body), pieces)
			}
			if string(got) != tc.want {
				t.Errorf("%s (announced %t): read back %d bytes, want %d", tc.name, announced, len(got), len(tc.want))
			}
		}
	}
}

// TestReadBodyHandsPiecesBack: reading a large body through requestBody
// gives the same bytes, with pieces the reader reuses rather than a new
// one for each (so the body is never held whole), and ends in io.EOF.
func TestReadBodyHandsPiecesBack(t *testing.T) {
	body := strings.Repeat("0123456789abcdef", 64*bodyPiece/16)
	b := readBody(httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body)), int64(len(body)), identityCoding)
	defer b.close()
	var got bytes.Buffer
	seen := map[*byte]bool{}
	buf := make([]byte, 4096)
	for {
		n, err := b.Read(buf)
		got.Write(buf[:n])
		if b.held != nil {
			seen[&b.held[:1][0]] = true
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if got.String() != body {
		t.Fatalf("read back %d bytes, want %d", got.Len(), len(body))
	}
	if len(seen) > piecesAhead+2 {
		t.Errorf("%d distinct pieces for a body of %d; at most %d are in flight", len(seen), len(body)/bodyPiece, piecesAhead+2)
	}
}

// TestRefusedBodyReadsAsRefused: a decoder reading a refused body gets
// errBodyRefused, never io.EOF, so nothing mistakes it for a body that ended.
func TestRefusedBodyReadsAsRefused(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`[1,2,3]`+strings.Repeat(" ", 100)))
	b := readBody(r, 50, identityCoding)
	if _, err := io.ReadAll(b); err != errBodyRefused {
		t.Errorf("reading: %v, want errBodyRefused", err)
	}
	if data, err := readBody(httptest.NewRequest(http.MethodPost, "/", strings.NewReader(" \xff ")), 50, identityCoding).bytes(); err != errBodyRefused {
		t.Errorf("bytes: %q, %v, want errBodyRefused", data, err)
	}
	if readBody(httptest.NewRequest(http.MethodPost, "/", strings.NewReader(strings.Repeat(" ", 100))), 50, identityCoding).blank() {
		t.Error("white space over the limit is blank")
	}
}

// TestBodyBytesAndBlank: a body in several pieces is joined for decoders
// that take bytes, white space across pieces is blank, and what blank read
// ahead is still read.
func TestBodyBytesAndBlank(t *testing.T) {
	if !bodyOf(" \n", "\t ").blank() {
		t.Error("white space in two pieces is not blank")
	}
	b := bodyOf(" ", " [1,", "2]")
	if b.blank() {
		t.Error("a list is blank")
	}
	if data, err := b.bytes(); err != nil || !bytes.Equal(data, []byte("  [1,2]")) {
		t.Errorf("bytes %q, %v", data, err)
	}
	if !(&requestBody{}).blank() {
		t.Error("no body is not blank")
	}
}

// bodyOf is a body that has been read, in the pieces given.
func bodyOf(pieces ...string) *requestBody {
	s := &bodyStream{pieces: make(chan []byte, len(pieces)), free: make(chan []byte, 1), unread: make(chan struct{}), done: make(chan struct{})}
	for _, p := range pieces {
		s.pieces <- []byte(p)
	}
	close(s.pieces)
	close(s.done)
	return &requestBody{stream: s}
}
