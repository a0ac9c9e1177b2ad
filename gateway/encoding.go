package gateway

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxExpansion is how many times its compressed size a gzip body may grow
// when decoded (docs/api.md, Limits against abuse). Job feeds compress
// about ten times; a body that grows a hundredfold is built to exhaust
// memory, not to carry jobs.
const maxExpansion = 100

// bodyCoding is how a request body is encoded on the wire.
type bodyCoding int

const (
	identityCoding bodyCoding = iota
	gzipCoding
)

// contentCoding reads the Content-Encoding header: none or identity is the
// body as it is, gzip (x-gzip, its old name) is decoded, and anything else,
// a list of codings included, is refused with 415 naming the header.
func contentCoding(h http.Header) (bodyCoding, *apiError) {
	values := h.Values("Content-Encoding")
	if len(values) == 0 {
		return identityCoding, nil
	}
	value := strings.Join(values, ", ")
	if len(values) == 1 {
		switch strings.ToLower(strings.TrimSpace(value)) {
		case "", "identity":
			return identityCoding, nil
		case "gzip", "x-gzip":
			return gzipCoding, nil
		}
	}
	if len(value) > 100 {
		value = value[:100] + "..."
	}
	return identityCoding, &apiError{http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", fmt.Sprintf(
		"Content-Encoding: %q is not accepted; send the body as it is (no Content-Encoding, or identity) or compressed once with gzip", value)}
}

// refusedRead is a read error that is the answer to the request: the body
// cannot be decoded, or decodes to too much.
type refusedRead struct{ refusal *apiError }

func (e refusedRead) Error() string { return e.refusal.message }

// gunzipBody decodes a gzip body as it is read, refusing it once it has
// decoded to more than maxExpansion times the bytes read from the wire.
// The count of wire bytes runs ahead of the decoder by its read buffer,
// so the rule holds exactly at the end and loosely before: never too
// strict.
type gunzipBody struct {
	wire    countingReader
	zr      *gzip.Reader
	decoded int64
}

func newGunzipBody(body io.Reader) *gunzipBody { return &gunzipBody{wire: countingReader{r: body}} }

func (g *gunzipBody) Read(p []byte) (int, error) {
	if g.zr == nil {
		zr, err := gzip.NewReader(&g.wire)
		if err != nil {
			return 0, g.failure(err)
		}
		g.zr = zr
	}
	n, err := g.zr.Read(p)
	g.decoded += int64(n)
	if g.decoded > maxExpansion*g.wire.n {
		return n, refusedRead{&apiError{http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE", fmt.Sprintf(
			"Content-Encoding: gzip: the body decodes to more than %d times its compressed size (%d bytes sent); a body may expand at most %d times",
			maxExpansion, g.wire.n, maxExpansion)}}
	}
	if err != nil && err != io.EOF {
		return n, g.failure(err)
	}
	return n, err
}

// failure is why the body could not be decoded: the connection's error,
// or gzip data that is not valid.
func (g *gunzipBody) failure(err error) error {
	if g.wire.err != nil {
		return g.wire.err
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		err = errors.New("the data ends too soon")
	}
	return refusedRead{&apiError{http.StatusBadRequest, "INVALID_ARGUMENT",
		fmt.Sprintf("Content-Encoding: gzip: the body is not valid gzip data: %v", err)}}
}

// countingReader counts the bytes read from r and keeps its error other
// than the end of input.
type countingReader struct {
	r   io.Reader
	n   int64
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && err != io.EOF {
		c.err = err
	}
	return n, err
}
