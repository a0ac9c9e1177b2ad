package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/truckjobs/jobboard/gateway/render"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/server/admission"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// TestAdmitUnaryCountsWaitingMessages: a gRPC call that has to wait counts
// its decoded message against the bytes the waiting calls may hold; one
// that would pass them is refused Unavailable at once, a small one waits
// and runs once the place frees.
func TestAdmitUnaryCountsWaitingMessages(t *testing.T) {
	svcs, err := NewServices(storetest.Store(t), Config{RenderCallback: render.JSON, Admission: admission.Settings{
		MaxInFlight: 1, Queue: 10, MaxWait: time.Minute, QueueBytes: 3 << 19}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := call.WithCaller(context.Background(), call.Caller{AccountID: 1})
	hold, err := svcs.Admit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	info := &grpc.UnaryServerInfo{FullMethod: "/jobboard.v2.JobService/PostJobs"}
	ran := func(context.Context, any) (any, error) { return "ran", nil }
	big := &jobboardv2.PostJobsRequest{Jobs: []*jobboardv2.JobInput{{Description: strings.Repeat("x", 2<<20)}}}
	_, err = svcs.admitUnary(ctx, big, info, ran)
	if st := status.Convert(err); st.Code() != codes.Unavailable ||
		!strings.Contains(st.Message(), "this one's 2.0 MiB would take them past the 1.5 MiB they may") {
		t.Errorf("a 2 MiB call that would wait with 1.5 MiB allowed: %v, want Unavailable for the waiting bytes", err)
	}
	small := make(chan any, 1)
	go func() {
		out, err := svcs.admitUnary(ctx, &jobboardv2.GetJobRequest{Id: 1}, info, ran)
		if err != nil {
			t.Error(err)
		}
		small <- out
	}()
	waitState(t, svcs.admission, 1)
	hold()
	if out := <-small; out != "ran" {
		t.Errorf("a small call that waited: %v, want it run", out)
	}
}

// waitState waits until l has n requests in line.
func waitState(t *testing.T, l *admission.Limiter, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for _, q := l.State(); q != n; _, q = l.State() {
		if time.Now().After(deadline) {
			t.Fatalf("%d in line, want %d", q, n)
		}
		time.Sleep(time.Millisecond)
	}
}
