package grpcapi

import (
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"

	"github.com/truckjobs/jobboard/internal/grpctest"
)

// openServer is a gRPC server on loopback with no database behind it: what
// needs no credentials (health checks, reflection) works, as it does on
// the real server, and every other call is refused for its credentials.
type openServer struct{ addr string }

func newOpenServer(t testing.TB) *openServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := New(Config{Health: health.NewServer()})
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return &openServer{addr: ln.Addr().String()}
}

// conn dials the server from the loopback address from (127.0.0.x).
func (f *openServer) conn(t testing.TB, from string) *grpc.ClientConn {
	return grpctest.Dial(t, f.addr, from)
}
