package server

import (
	"context"
	"fmt"
	"sync"

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
// starve a load balancer's health checks, and in all, so that many clients
// together hold a bounded amount.
//
// A call holds its place until its first message has been read, or, for
// reflection's stream, whose every message may be large, until it ends. A
// health Watch, which sends one small message and then waits for changes,
// holds nothing while it waits.
type anonymousCalls struct {
	mu        sync.Mutex
	inFlight  map[string]int
	total     int
	perClient int
	overall   int
}

// Limits of anonymousCalls: a load balancer checks one at a time, grpcurl
// opens one reflection stream per command. The bound on what clients
// without credentials can make the server hold is overall × 64 MiB.
const (
	maxAnonymousCallsPerClient = 4
	maxAnonymousCalls          = 16
)

func newAnonymousCalls(perClient, overall int) *anonymousCalls {
	return &anonymousCalls{inFlight: map[string]int{}, perClient: perClient, overall: overall}
}

// anonymousSlot is the place an admitted call holds.
type anonymousSlot struct {
	calls  *anonymousCalls
	client string
	// holdWholeCall keeps the place until the call ends (a stream whose
	// every message is read through the same limit).
	holdWholeCall bool
	once          sync.Once
}

type anonymousSlotKey struct{}

// admit counts a call from client, or refuses it when the client or all
// clients together have their limit in flight. The place is given back when
// the call's context ends, whatever ends it, or earlier by release.
func (a *anonymousCalls) admit(ctx context.Context, client string, holdWholeCall bool) (context.Context, error) {
	a.mu.Lock()
	switch {
	case a.inFlight[client] >= a.perClient:
		a.mu.Unlock()
		return nil, status.Error(codes.ResourceExhausted, fmt.Sprintf(
			"this client already has %d health or reflection calls in flight, the most it may have; retry when one has ended", a.perClient))
	case a.total >= a.overall:
		a.mu.Unlock()
		return nil, status.Error(codes.ResourceExhausted, fmt.Sprintf(
			"the server already has %d health or reflection calls in flight, the most it takes; retry in a moment", a.overall))
	}
	a.inFlight[client]++
	a.total++
	a.mu.Unlock()
	slot := &anonymousSlot{calls: a, client: client, holdWholeCall: holdWholeCall}
	// The call's context ends on every path, including the ones where
	// grpc-go drops a call before any interceptor runs.
	context.AfterFunc(ctx, slot.release)
	return context.WithValue(ctx, anonymousSlotKey{}, slot), nil
}

// release gives the place back, once.
func (s *anonymousSlot) release() {
	s.once.Do(func() {
		a := s.calls
		a.mu.Lock()
		defer a.mu.Unlock()
		a.total--
		if a.inFlight[s.client]--; a.inFlight[s.client] <= 0 {
			delete(a.inFlight, s.client)
		}
	})
}

// releaseAnonymous gives back the place of the call in ctx, if it holds
// one that lasts only until its request message has been read: a unary
// call's interceptors run once it has been.
func releaseAnonymous(ctx context.Context) {
	if slot, ok := ctx.Value(anonymousSlotKey{}).(*anonymousSlot); ok && !slot.holdWholeCall {
		slot.release()
	}
}

// releaseAnonymousStream gives a stream's place back once its first
// request message has been read (a health Watch), unless the stream holds
// it throughout (reflection). It does so here rather than in a stats
// handler, which would make grpc-go copy every call's metadata and report
// each of its events, for every method.
func releaseAnonymousStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	slot, ok := ss.Context().Value(anonymousSlotKey{}).(*anonymousSlot)
	if !ok || slot.holdWholeCall {
		return handler(srv, ss)
	}
	return handler(srv, &releasingStream{ServerStream: ss, slot: slot})
}

// releasingStream gives its slot back once a message has been read.
type releasingStream struct {
	grpc.ServerStream
	slot *anonymousSlot
}

func (s *releasingStream) RecvMsg(m any) error {
	err := s.ServerStream.RecvMsg(m)
	if err == nil {
		s.slot.release()
	}
	return err
}
