package main

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
)

// getJobServer answers GetJob with the job asked for while fail is false,
// and with NOT_FOUND (HTTP 200, no message) once it is true.
type getJobServer struct {
	jobboardv2.UnimplementedJobServiceServer
	fail atomic.Bool
}

func (s *getJobServer) GetJob(_ context.Context, req *jobboardv2.GetJobRequest) (*jobboardv2.GetJobResponse, error) {
	if s.fail.Load() {
		return nil, status.Error(codes.NotFound, "no such job")
	}
	return &jobboardv2.GetJobResponse{Job: &jobboardv2.Job{Id: req.GetId(), Title: "Driver"}}, nil
}

// TestGRPCIDLoad checks that a GetJob run counts the calls answered with a
// message as served and those answered with a gRPC error as errors, though
// both come back as HTTP 200.
func TestGRPCIDLoad(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	impl := &getJobServer{}
	srv := grpc.NewServer()
	jobboardv2.RegisterJobServiceServer(srv, impl)
	go func() { _ = srv.Serve(l) }()
	defer srv.Stop()
	ctx := context.Background()
	target, err := checkGetJob(ctx, l.Addr().String(), "", 42)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{dir: t.TempDir()}
	for _, fail := range []bool{false, true} {
		impl.fail.Store(fail)
		res, _, err := grpcIDLoad(ctx, h, "test", target, 2, time.Second, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if res.requests == 0 || (res.errors > 0) != fail {
			t.Errorf("server failing %v: %d calls, %d errors (%s)", fail, res.requests, res.errors, res.firstError)
		}
	}
}
