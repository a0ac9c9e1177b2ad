package server

import (
	"context"
	"fmt"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
)

// Health checks and reflection answer without credentials, as probes and
// grpcurl expect. grpc-go reads a whole request message before any code of
// ours sees its size, and the server's receive limit is the largest
// method's (a 64 MiB import), so each such call lets a client without
// credentials make the server hold up to that much. anonymousCalls bounds
// how many of them one client address has in flight, so what a client
// without credentials can make the server hold is bounded too
// (maxAnonymousCallsPerAddress × 64 MiB), and one client holding its share
// does not starve the load balancer's health checks from another address.
type anonymousCalls struct {
	mu       sync.Mutex
	inFlight map[string]int
	limit    int
}

// maxAnonymousCallsPerAddress is how many health or reflection calls one
// client address may have in flight. A load balancer checks one at a time
// and grpcurl opens one reflection stream per command.
const maxAnonymousCallsPerAddress = 4

func newAnonymousCalls(limit int) *anonymousCalls {
	return &anonymousCalls{inFlight: map[string]int{}, limit: limit}
}

// anonymousSlot is the context key of the address whose count an admitted
// call holds until it ends.
type anonymousSlot struct{}

// admit counts a call from address, or refuses it when the address already
// has its limit in flight.
func (a *anonymousCalls) admit(ctx context.Context, address string) (context.Context, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.inFlight[address] >= a.limit {
		return nil, status.Error(codes.ResourceExhausted, fmt.Sprintf(
			"this address already has %d health or reflection calls in flight, the most it may have; retry when one has ended", a.limit))
	}
	a.inFlight[address]++
	return context.WithValue(ctx, anonymousSlot{}, address), nil
}

// release gives back the count a call took, when ctx is an admitted call's.
func (a *anonymousCalls) release(ctx context.Context) {
	address, ok := ctx.Value(anonymousSlot{}).(string)
	if !ok {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.inFlight[address]--; a.inFlight[address] <= 0 {
		delete(a.inFlight, address)
	}
}

// anonymousRelease is a stats handler that releases a call's count when
// the call ends: grpc-go reports the end of every call it began to handle,
// whether or not its message could be read.
type anonymousRelease struct{ calls *anonymousCalls }

func (r anonymousRelease) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context {
	return ctx
}

func (r anonymousRelease) HandleRPC(ctx context.Context, s stats.RPCStats) {
	if _, ok := s.(*stats.End); ok {
		r.calls.release(ctx)
	}
}

func (r anonymousRelease) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}

func (r anonymousRelease) HandleConn(context.Context, stats.ConnStats) {}
