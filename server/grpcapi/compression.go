package grpcapi

import (
	"compress/gzip"
	"errors"
	"io"

	"google.golang.org/grpc/encoding"
	// grpc-go's gzip registers first, so the registration below replaces it.
	grpcgzip "google.golang.org/grpc/encoding/gzip"
)

// gzip is registered in this binary (the OTLP exporter uses it). grpc-go
// decompresses a request up to the server's receive limit (64 MiB, an
// import's) before any check of ours sees its size, and gzip expands up to
// a thousand times: some 60 KB sent to a 1 MiB method, or to health checks
// that need no credentials, would make the server hold 64 MiB. The
// compressor registered here compresses as grpc-go's does, and refuses a
// request that expands more than maxExpansion times past its first
// expansionFreeBytes.
const (
	maxExpansion       = 32
	expansionFreeBytes = 1 << 20
)

func init() {
	encoding.RegisterCompressor(boundedGzip{})
}

type boundedGzip struct{}

func (boundedGzip) Name() string { return grpcgzip.Name }

func (boundedGzip) Compress(w io.Writer) (io.WriteCloser, error) {
	return gzip.NewWriterLevel(w, gzip.DefaultCompression)
}

func (boundedGzip) Decompress(r io.Reader) (io.Reader, error) {
	in := &countingReader{r: r}
	z, err := gzip.NewReader(in)
	if err != nil {
		return nil, err
	}
	return &expansionLimit{z: z, in: in}, nil
}

// errExpands is what a client gets (as the cause of grpc-go's Internal
// "failed to decompress") for a request that expands too much.
var errExpands = errors.New("the compressed request expands more than 32 times; send it uncompressed")

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// expansionLimit reads decompressed bytes while they stay within
// maxExpansion times the compressed bytes read.
type expansionLimit struct {
	z   io.Reader
	in  *countingReader
	out int64
}

func (e *expansionLimit) Read(p []byte) (int, error) {
	n, err := e.z.Read(p)
	e.out += int64(n)
	if e.out > expansionFreeBytes && e.out > maxExpansion*e.in.n {
		return n, errExpands
	}
	return n, err
}
