package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/truckjobs/jobboard/gateway/render"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/server/admission"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// TestAdmitCountsWaitingMessages: a gRPC call that has to wait counts its
// decoded message (the size the gRPC server's interceptor gives) against
// the bytes the waiting calls may hold; one that would pass them is
// refused Unavailable at once, a small one waits and runs once the place
// frees.
func TestAdmitCountsWaitingMessages(t *testing.T) {
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
	sizeOf := func(m proto.Message) func() int64 { return func() int64 { return int64(proto.Size(m)) } }
	big := &jobboardv2.PostJobsRequest{Jobs: []*jobboardv2.JobInput{{Description: strings.Repeat("x", 2<<20)}}}
	_, err = svcs.admit(ctx, sizeOf(big))
	if st := status.Convert(err); st.Code() != codes.Unavailable ||
		!strings.Contains(st.Message(), "this one's 2.0 MiB would take them past the 1.5 MiB they may") {
		t.Errorf("a 2 MiB call that would wait with 1.5 MiB allowed: %v, want Unavailable for the waiting bytes", err)
	}
	small := make(chan error, 1)
	go func() {
		release, err := svcs.admit(ctx, sizeOf(&jobboardv2.GetJobRequest{Id: 1}))
		if err == nil {
			release()
		}
		small <- err
	}()
	waitState(t, svcs.admission, 1)
	hold()
	if err := <-small; err != nil {
		t.Errorf("a small call that waited: %v, want it admitted", err)
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
