package main

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// readyProbes follows the load balancer's readiness checks (GET /readyz),
// so that a drain can wait until the balancer has seen the server not
// ready before it closes the connections the balancer keeps open. Without
// the wait, a request the balancer sends on a kept-alive connection as the
// server closes it fails with a 502 that no retry covers (a POST).
type readyProbes struct {
	mu       sync.Mutex
	last     time.Time // when /readyz was last asked
	interval time.Duration
	notReady int // not-ready answers given
}

// asked notes a readiness check, and whether it was answered not ready.
func (p *readyProbes) asked(ready bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if !p.last.IsZero() {
		p.interval = now.Sub(p.last)
	}
	p.last = now
	if !ready {
		p.notReady++
	}
}

// Bounds of the wait: a balancer has seen the server down once it got
// notReadyChecks answers in a row (HAProxy's fall 2, Kubernetes'
// failureThreshold), or after maxDrainWait whatever it did.
const (
	notReadyChecks = 2
	maxDrainWait   = 5 * time.Second
	// afterLastCheck lets the balancer act on the last answer it got.
	afterLastCheck = 200 * time.Millisecond
)

// checking reports whether something checks readiness now: the next check
// is due, judging by the time between the last two (a balancer checks at
// a steady pace; a script that waited for readiness has stopped).
func (p *readyProbes) checking(now time.Time) bool {
	return !p.last.IsZero() && p.interval > 0 && now.Sub(p.last) < 2*p.interval+100*time.Millisecond
}

// waitSeenNotReady returns once a balancer checking the server has had
// notReadyChecks not-ready answers since the drain began, at once when
// nothing checks readiness (no balancer, or checks that stopped), and
// after maxDrainWait at the most.
func (p *readyProbes) waitSeenNotReady(ctx context.Context) {
	p.mu.Lock()
	base, checking := p.notReady, p.checking(time.Now())
	p.mu.Unlock()
	if !checking {
		return
	}
	slog.Info("waiting for the load balancer to see this server not ready before closing connections", "checks", notReadyChecks, "at_most", maxDrainWait)
	deadline := time.NewTimer(maxDrainWait)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
		case <-deadline.C:
			return
		case <-ctx.Done():
			return
		}
		p.mu.Lock()
		seen, checking := p.notReady-base >= notReadyChecks, p.checking(time.Now())
		p.mu.Unlock()
		if !checking {
			return
		}
		if seen {
			break
		}
	}
	select {
	case <-time.After(afterLastCheck):
	case <-ctx.Done():
	}
}
