package topology

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// TestGRPCHealthCheckBytes: the bytes HAProxy's tcp-check sends are a
// health check a gRPC server answers, and the answer holds the pattern
// HAProxy expects only while the server is SERVING.
func TestGRPCHealthCheckBytes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	hs := health.NewServer()
	healthpb.RegisterHealthServer(srv, hs)
	go srv.Serve(ln)
	defer srv.Stop()

	for _, tc := range []struct {
		status healthpb.HealthCheckResponse_ServingStatus
		passes bool
	}{
		{healthpb.HealthCheckResponse_SERVING, true},
		{healthpb.HealthCheckResponse_NOT_SERVING, false},
	} {
		hs.SetServingStatus("", tc.status)
		answer := checkExchange(t, ln.Addr().String())
		if got := bytes.Contains(answer, servingAnswer); got != tc.passes {
			t.Errorf("%v: the answer holds %x: %v, want %v (answer %x)", tc.status, servingAnswer, got, tc.passes, answer)
		}
	}
}

// checkExchange sends the check as HAProxy does and reads the answer for
// a second.
func checkExchange(t *testing.T, addr string) []byte {
	t.Helper()
	req, err := grpcHealthCheckRequest()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write(req); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(time.Second))
	answer, _ := io.ReadAll(conn) // ends at the deadline: the server keeps the connection
	return answer
}
