package server

import (
	"context"
	"errors"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/truckjobs/jobboard/internal/metrics"
	"github.com/truckjobs/jobboard/server/admission"
	"github.com/truckjobs/jobboard/server/call"
)

// waitingMessageBytes bounds the request messages of the gRPC calls
// waiting for a place (admission.Settings.QueueBytes): grpc-go reads and
// decodes a call's whole message before any interceptor runs, so without
// it JOBBOARD_ADMISSION_QUEUE waiting calls could hold that many messages
// of up to 64 MiB. It takes four of the largest (an import), or 16 posts
// at their limit. A REST request waits holding at most the first piece of
// its body (gateway/admit.go).
const waitingMessageBytes = 256 << 20

// newAdmission makes the limiter of the API's requests, with its metrics
// when the process keeps metrics; nil (admit everything) when it is off.
func newAdmission(s admission.Settings, m *metrics.Metrics) (*admission.Limiter, error) {
	if s.MaxInFlight <= 0 {
		return nil, nil
	}
	if s.QueueBytes == 0 {
		s.QueueBytes = waitingMessageBytes
	}
	var limiter *admission.Limiter
	observed, err := m.Admission(func() (int, int) { return limiter.State() }, admission.Reasons)
	if err != nil {
		return nil, err
	}
	limiter = admission.New(s, observed)
	return limiter, nil
}

// Admit takes one of the places of the API's admission control for a call
// of the caller in ctx (authenticated already: one account may hold only
// its share of the queue), waiting in line when all are taken. The REST
// gateway calls it once a request is authenticated and its body has begun
// to arrive, the
// gRPC server once a call's message is decoded; health, readiness and
// metrics never do. It returns the function giving the place back, or
// Unavailable with a RetryInfo detail (REST: 503 with Retry-After) when the
// server is saturated.
func (s *Services) Admit(ctx context.Context) (release func(), err error) {
	return s.admit(ctx, nil)
}

// admit is Admit for a call holding a message of size(), counted while
// it waits (admission.Limiter.AcquireHolding); nil for none.
func (s *Services) admit(ctx context.Context, size func() int64) (release func(), err error) {
	c, _ := call.CallerIn(ctx)
	return admitted(s.admission.AcquireHolding(ctx, c.AccountID, size))
}

// Resume takes a place again for a request that gave its place back while
// it waited on its client, and has more work to do (the REST jobs list,
// streamed a page at a time): it waits in line, but is never refused for
// saturation, as its answer has started. It fails only when ctx ends.
func (s *Services) Resume(ctx context.Context) (release func(), err error) {
	c, _ := call.CallerIn(ctx)
	return admitted(s.admission.Resume(ctx, c.AccountID))
}

// admitted maps the admission control's answer to a gRPC status.
func admitted(release func(), err error) (func(), error) {
	if err == nil {
		// Before errors.As, whose target would be allocated on every call.
		return release, nil
	}
	var full *admission.Saturated
	switch {
	case errors.As(err, &full):
		st := status.New(codes.Unavailable, full.Error())
		if withInfo, derr := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(admission.RetryAfter)}); derr == nil {
			st = withInfo
		}
		return nil, st.Err()
	default:
		return nil, status.FromContextError(err).Err()
	}
}
