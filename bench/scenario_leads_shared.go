package main

import (
	"context"
	"fmt"
	"time"
)

// sharedRound is one round, for context and not judged, as a single
// server deployment runs: the intake's server sends the deliveries too,
// while it takes the intake. The server with no workers is replaced by
// one with the default workers.
func (ls *leadSetup) sharedRound(ctx context.Context, n int) ([]result, error) {
	ls.server.stop()
	ls.server = nil
	p, err := ls.h.startServer(ctx, "server-leads", leadServerEnv...)
	if err != nil {
		return nil, err
	}
	ls.server = p
	before := ls.receiver.snapshot()
	bare, err := ls.intake(ctx, ls.bare, n)
	if err != nil {
		return nil, err
	}
	cpu, serverCPU, start := selfCPU(), processCPU(ls.server), time.Now()
	hooked, err := ls.intake(ctx, ls.hook, n)
	if err != nil {
		return nil, err
	}
	stored := time.Now()
	c, err := ls.waitDeliveries(ctx, before.distinct+n*leadEndpoints, drainLimit(n*leadEndpoints))
	if err != nil {
		return deliveryFailure(fmt.Sprintf("shared round of %d applications: %v", n, err), c), nil
	}
	share := cpuShare{bench: selfCPU() - cpu, server: processCPU(ls.server) - serverCPU, wall: time.Since(start)}
	perSecond := func(t time.Duration) float64 { return float64(n) / t.Seconds() }
	ratio := perSecond(hooked) / perSecond(bare)
	return []result{{
		name:   fmt.Sprintf("context, not judged: one server taking the intake and sending at once, %d applications, %d endpoints", n, leadEndpoints),
		median: hooked, throughput: perSecond(hooked), floor: fmt.Sprintf("no endpoints: %.0f/s", perSecond(bare)), ratio: ratio,
		note: fmt.Sprintf("One round. Last application stored to last delivery received: %s (%.0f deliveries a second from the "+
			"intake's start). The deliveries (%d HTTP posts an application, their queue work) and the receiver, which runs in "+
			"the bench process and verifies every signature, compete with the intake for the machine's 2 cores, so this "+
			"ratio measures the contention, not the outbox; the judged ratio above runs the intake with no deliveries sent. %s",
			ms(max(0, c.last.Sub(stored))), float64(n*leadEndpoints)/c.last.Sub(start).Seconds(), leadEndpoints,
			cpuNote10("intake and deliveries", "gRPC client and receiver", share)),
	}}, nil
}
