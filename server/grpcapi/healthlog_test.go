package grpcapi

import (
	"context"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/truckjobs/jobboard/internal/grpctest"
	"github.com/truckjobs/jobboard/internal/logtest"
)

// TestHealthChecksLoggedWhenNotServing: a health check answered SERVING
// leaves no access log line (a balancer checks every second); one answered
// NOT_SERVING, or refused, does.
func TestHealthChecksLoggedWhenNotServing(t *testing.T) {
	logs := logtest.Capture(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := health.NewServer()
	srv := New(Config{Health: h})
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	client := healthpb.NewHealthClient(grpctest.Dial(t, ln.Addr().String(), "127.0.0.2"))
	for _, tt := range []struct {
		name    string
		status  healthpb.HealthCheckResponse_ServingStatus
		service string
		logged  bool
	}{
		{"serving", healthpb.HealthCheckResponse_SERVING, "", false},
		{"not serving", healthpb.HealthCheckResponse_NOT_SERVING, "", true},
		{"an unknown service (NotFound)", healthpb.HealthCheckResponse_SERVING, "no.such.Service", true},
	} {
		h.SetServingStatus("", tt.status)
		before := strings.Count(logs.String(), `"method":"/grpc.health.v1.Health/Check"`)
		_, _ = client.Check(context.Background(), &healthpb.HealthCheckRequest{Service: tt.service})
		got := strings.Count(logs.String(), `"method":"/grpc.health.v1.Health/Check"`) - before
		if want := map[bool]int{false: 0, true: 1}[tt.logged]; got != want {
			t.Errorf("%s: %d access log lines, want %d:\n%s", tt.name, got, want, logs.String())
		}
	}
}
