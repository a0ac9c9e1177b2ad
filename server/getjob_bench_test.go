package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"testing"

	"github.com/truckjobs/jobboard/internal/grpctest"
	"github.com/truckjobs/jobboard/server/grpcapi"

	"google.golang.org/grpc"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/internal/metrics"
	"github.com/truckjobs/jobboard/internal/tracing"
	"github.com/truckjobs/jobboard/server/call"
)

// BenchmarkGetJobGRPC reads one job over loopback with grpc-go, from the
// server as it serves (the tap's authentication, the interceptors, the
// access log written as JSON, the metrics) and from a bare grpc-go server
// of the same service that only sets the caller: the difference in
// allocs/op is what the service adds to a call, the client's share being
// the same in both.
func BenchmarkGetJobGRPC(b *testing.B) {
	f := newGRPCFixture(b, Config{Metrics: metrics.New()})
	f.watchKeys(b)
	caller := call.WithCaller(context.Background(), call.Caller{AccountID: f.a.AccountID})
	post, err := f.svcs.Jobs.PostJobs(caller, &restv2.PostJobsRequest{Jobs: []*restv2.JobInput{input("B1")}})
	if err != nil || post.Added != 1 {
		b.Fatal(post, err)
	}
	var id int64
	if err := f.st.DB().Get(&id, `SELECT id FROM jobs WHERE account_id = $1`, f.a.AccountID); err != nil {
		b.Fatal(err)
	}
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(tracing.LogHandler(slog.NewJSONHandler(io.Discard, nil))))

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	bare := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		return h(call.WithCaller(ctx, call.Caller{AccountID: f.a.AccountID}), req)
	}))
	jobboardv2.RegisterJobServiceServer(bare, grpcapi.JobService(f.svcs.Jobs))
	go func() { _ = bare.Serve(ln) }()
	defer bare.Stop()

	for _, c := range []struct{ name, addr string }{{"bare", ln.Addr().String()}, {"served", f.addr}} {
		b.Run(c.name, func(b *testing.B) {
			jobs := jobboardv2.NewJobServiceClient(grpctest.Dial(b, c.addr, "127.0.0.1"))
			ctx := withKey(f.a.APIKey)
			get := func() {
				resp, err := jobs.GetJob(ctx, &jobboardv2.GetJobRequest{Id: id})
				if err != nil || resp.GetJob().GetId() != id {
					b.Fatal(resp, err)
				}
			}
			get()
			for b.Loop() {
				get()
			}
		})
	}
}
