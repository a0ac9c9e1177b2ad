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
// gives the body (its byte order mark removed) and lets go of the pieces.
func TestReadBodyInPieces(t *testing.T) {
	// "a" first puts every piece boundary inside a two-byte character.
	large := "a" + strings.Repeat("é", bodyPiece+bodyPiece/3)
	for _, tc := range []struct {
		name, body, want string
		status           int
	}{
		{"empty", "", "", 0},
		{"small", `{"jobs": []}`, `{"jobs": []}`, 0},
		{"byte order mark", "\uFEFF[1]", "[1]", 0},
		{"pieces cut between characters", large, large, 0},
		{"invalid after a piece boundary", large + "\xc3x", "", http.StatusBadRequest},
		{"over the limit", large + large, "", http.StatusRequestEntityTooLarge},
	} {
		for _, announced := range []bool{true, false} {
			r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tc.body))
			if !announced {
				r.ContentLength = -1
			}
			pieces, apiErr := readBody(r, int64(3*len(large)/2))
			if tc.status != 0 {
				if apiErr == nil || apiErr.httpStatus != tc.status {
					t.Errorf("%s (announced %t): %v, want status %d", tc.name, announced, apiErr, tc.status)
				}
				continue
			}
			if apiErr != nil {
				t.Fatalf("%s (announced %t): %v", tc.name, announced, apiErr)
			}
			for i, p := range pieces {
				if !utf8.Valid(p) || len(p) > bodyPiece {
					t.Errorf("%s (announced %t): piece %d of %d bytes, UTF-8 %t", tc.name, announced, i, len(p), utf8.Valid(p))
				}
			}
			if len(tc.body) > bodyPiece && len(pieces) < 2 {
				t.Errorf("%s (announced %t): %d bytes in %d piece", tc.name, announced, len(tc.body), len(pieces))
			}
			b := &requestBody{pieces: pieces}
			got, err := io.ReadAll(b)
			if err != nil || string(got) != tc.want {
				t.Errorf("%s (announced %t): read back %d bytes (%v), want %d", tc.name, announced, len(got), err, len(tc.want))
			}
			if len(b.pieces) != 0 {
				t.Errorf("%s (announced %t): %d pieces still held once read", tc.name, announced, len(b.pieces))
			}
		}
	}
}

// TestBodyBytesAndBlank: a body in several pieces is joined for decoders
// that take bytes, and white space across pieces is blank.
func TestBodyBytesAndBlank(t *testing.T) {
	b := &requestBody{pieces: [][]byte{[]byte(" \n"), []byte("\t ")}}
	if !b.blank() {
		t.Error("white space in two pieces is not blank")
	}
	b = &requestBody{pieces: [][]byte{[]byte(" [1,"), []byte("2]")}}
	if b.blank() || !bytes.Equal(b.bytes(), []byte(" [1,2]")) || len(b.pieces) != 0 {
		t.Error("two pieces not joined")
	}
}
