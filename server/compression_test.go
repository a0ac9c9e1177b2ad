package server

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcgzip "google.golang.org/grpc/encoding/gzip"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
)

// TestCompressedRequests: a gzip request is taken as before, but one that
// expands more than 32 times is refused while it is read, before the
// server holds what it expands to.
func TestCompressedRequests(t *testing.T) {
	f := newGRPCFixture(t, Config{})
	conn := f.conn(t, "127.0.0.1")
	gz := grpc.UseCompressor(grpcgzip.Name)

	post, err := jobboardv2.NewJobServiceClient(conn).PostJobs(withKey(f.a.APIKey),
		&jobboardv2.PostJobsRequest{Jobs: []*jobboardv2.JobInput{naturalJob("GZ1")}}, gz)
	if err != nil || post.GetAdded() != 1 {
		t.Fatalf("a compressed post: %v %v", post, err)
	}

	// 48 MiB of one letter compresses to some 50 KB.
	bomb := &healthpb.HealthCheckRequest{Service: strings.Repeat("x", 48<<20)}
	_, err = healthpb.NewHealthClient(conn).Check(context.Background(), bomb, gz)
	if status.Code(err) == codes.OK || !strings.Contains(err.Error(), "expands more than 32 times") {
		t.Errorf("a health check expanding to 48 MiB: %v, want it refused for its expansion", err)
	}
	if _, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{}, gz); err != nil {
		t.Errorf("a compressed health check: %v", err)
	}
}
