package grpcapi

import (
	"context"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Health checks and reflection answer without credentials, as probes and
// grpcurl expect. grpc-go reads a whole request message before any code of
// ours sees its size, and the server's receive limit is the largest
// method's (a 64 MiB import), so a call of theirs lets a client without
// credentials make the server hold up to that much while the message is
// read. anonymousCalls bounds how many such calls are reading a message at
// once: per client (an IPv6 /64 counting as one, and the address a trusted
// proxy forwards for rather than the proxy's), so that one client does not
// take every place, and in all, so that many clients together hold a
// bounded amount.
//
// Health checks and reflection have a limiter each (docs/api.md 7): a
// reflection stream holds its place for its whole life, so streams left
// open must never take the places a load balancer's checks need. A health
// call holds its place only until its first message has been read, and
// for at most healthMessageWait: a check whose message does not come is
// ended, so its place comes back within a second whatever it does. A
// reflection stream with no request for reflectionIdle is ended too.
type anonymousCalls struct {
	mu        sync.Mutex
	inFlight  map[string]int
	total     int
	perClient int
	overall   int
	// what names the calls in refusals ("health" or "reflection").
	what string
	// wait is how long a call may go without a message: until its first
	// for a health call (then it is ended, its headers' context cancelled),
	// between two for a reflection stream (then it is answered
	// DeadlineExceeded, see silenceEnds).
	wait time.Duration
	// holdWholeCall keeps a call's place until it ends (a stream whose
	// every message is read through the same receive limit).
	holdWholeCall bool
}

// Limits of anonymousCalls: a load balancer checks one at a time, grpcurl
// opens one reflection stream per command. The bound on what clients
// without credentials can make the server hold is 2 × overall × 64 MiB.
const (
	maxAnonymousCallsPerClient = 4
	maxAnonymousCalls          = 16
)

// healthMessageWait is how long a health call may take to send its
// message: a probe sends it with its headers, and checks must answer
// within 1 s whatever else is in flight (docs/api.md 7).
const healthMessageWait = time.Second

// reflectionIdle is how long a reflection stream may wait for its next
// request before it is ended (docs/api.md 7): grpcurl sends its requests
// one after another and closes the stream when its command is done.
var reflectionIdle = 60 * time.Second

// newHealthCalls is the limiter of health checks.
func newHealthCalls() *anonymousCalls {
	c := newAnonymousCalls(maxAnonymousCallsPerClient, maxAnonymousCalls)
	c.what, c.wait = "health", healthMessageWait
	return c
}

// newReflectionStreams is the limiter of reflection streams.
func newReflectionStreams() *anonymousCalls {
	c := newAnonymousCalls(maxAnonymousCallsPerClient, maxAnonymousCalls)
	c.what, c.wait, c.holdWholeCall = "reflection", reflectionIdle, true
	return c
}

func newAnonymousCalls(perClient, overall int) *anonymousCalls {
	return &anonymousCalls{inFlight: map[string]int{}, perClient: perClient, overall: overall, what: "health or reflection"}
}

// anonymousSlot is the place an admitted call holds.
type anonymousSlot struct {
	calls  *anonymousCalls
	client string
	once   sync.Once
	// timer ends a health call whose message did not come in time.
	timer *time.Timer
}

type anonymousSlotKey struct{}

// admit counts a call from client, or refuses it when the client or all
// clients together have their limit in flight. The place is given back when
// the call's context ends, whatever ends it, or earlier by release; the
// call is ended when no message arrives for the limiter's wait.
func (a *anonymousCalls) admit(ctx context.Context, client string) (context.Context, error) {
	a.mu.Lock()
	switch {
	case a.inFlight[client] >= a.perClient:
		a.mu.Unlock()
		return nil, status.Error(codes.ResourceExhausted, fmt.Sprintf(
			"this client already has %d %s calls in flight, the most it may have; retry when one has ended", a.perClient, a.what))
	case a.total >= a.overall:
		a.mu.Unlock()
		return nil, status.Error(codes.ResourceExhausted, fmt.Sprintf(
			"the server already has %d %s calls in flight, the most it takes; retry in a moment", a.overall, a.what))
	}
	a.inFlight[client]++
	a.total++
	a.mu.Unlock()
	slot := &anonymousSlot{calls: a, client: client}
	if a.wait > 0 && !a.holdWholeCall {
		// The tap handle's context is the call's: ending it ends the
		// reading of its message (the client sees the stream reset).
		var end context.CancelFunc
		ctx, end = context.WithCancel(ctx)
		slot.timer = time.AfterFunc(a.wait, end)
	}
	// The call's context ends on every path, including the ones where
	// grpc-go drops a call before any interceptor runs.
	context.AfterFunc(ctx, slot.release)
	return context.WithValue(ctx, anonymousSlotKey{}, slot), nil
}

// release gives the place back, once.
func (s *anonymousSlot) release() {
	s.once.Do(func() {
		if s.timer != nil {
			s.timer.Stop()
		}
		a := s.calls
		a.mu.Lock()
		defer a.mu.Unlock()
		a.total--
		if a.inFlight[s.client]--; a.inFlight[s.client] <= 0 {
			delete(a.inFlight, s.client)
		}
	})
}

// received notes that a message arrived: a health call's place is given
// back; a reflection stream keeps its place until it ends.
func (s *anonymousSlot) received() {
	if !s.calls.holdWholeCall {
		s.release()
	}
}

// releaseAnonymous gives back the place of the unary call in ctx, if it
// holds one: a unary call's interceptors run once its message has been read.
func releaseAnonymous(ctx context.Context) {
	if slot, ok := ctx.Value(anonymousSlotKey{}).(*anonymousSlot); ok {
		slot.received()
	}
}

// anonymousStream notes each message a health or reflection stream reads:
// a health Watch gives its place back after its first; a reflection stream
// waits for each request at most the limiter's wait. It does so here
// rather than in a stats handler, which would make grpc-go copy every
// call's metadata and report each of its events, for every method.
func anonymousStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	slot, ok := ss.Context().Value(anonymousSlotKey{}).(*anonymousSlot)
	if !ok {
		return handler(srv, ss)
	}
	if slot.calls.holdWholeCall && slot.calls.wait > 0 {
		return handler(srv, &silenceEnds{ServerStream: ss, calls: slot.calls})
	}
	return handler(srv, &notingStream{ServerStream: ss, slot: slot})
}

// notingStream tells its slot of each message read.
type notingStream struct {
	grpc.ServerStream
	slot *anonymousSlot
}

func (s *notingStream) RecvMsg(m any) error {
	err := s.ServerStream.RecvMsg(m)
	if err == nil {
		s.slot.received()
	}
	return err
}

// silenceEnds ends a stream whose client sends nothing for calls.wait: the
// read gives up with DeadlineExceeded, which the handler returns, so the
// client is told why (cancelling the stream's context would only reset
// it). The read left behind ends as the stream does.
type silenceEnds struct {
	grpc.ServerStream
	calls *anonymousCalls
}

func (s *silenceEnds) RecvMsg(m any) error {
	read := make(chan error, 1)
	go func() { read <- s.ServerStream.RecvMsg(m) }()
	timer := time.NewTimer(s.calls.wait)
	defer timer.Stop()
	select {
	case err := <-read:
		return err
	case <-timer.C:
		return status.Error(codes.DeadlineExceeded, fmt.Sprintf(
			"%s stream ended: no request for %s; open a new one", s.calls.what, s.calls.wait))
	}
}
