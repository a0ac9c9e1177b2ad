package main

import (
	"context"
	"fmt"
	"time"
)

// repeatGrace is how long the scenario waits after the last expected
// delivery for repeats that would still come.
const repeatGrace = 3 * time.Second

// leadRound is what one timed round with endpoints measured.
type leadRound struct {
	bare, hooked time.Duration // the two intakes of n applications
	drain        time.Duration // last application stored to last delivery received
	deliveryRate float64       // deliveries a second, from the intake's start to the last delivery
	recvCPU      time.Duration // the bench process (gRPC client and receiver) over the round
	serverCPU    time.Duration
	wall         time.Duration
}

// intakeRounds times intakes of n applications without endpoints and with
// three, turn about, and waits for each round's deliveries. The rows judge
// the ratio of the rates, that all deliveries arrived and that none came
// twice.
func (ls *leadSetup) intakeRounds(ctx context.Context, n, rounds int) ([]result, error) {
	// Untimed warm-up of both accounts and of the deliveries.
	for _, a := range []account{ls.bare, ls.hook} {
		if _, err := ls.intake(ctx, a, 100); err != nil {
			return nil, err
		}
	}
	expected := 100 * leadEndpoints
	if c, err := ls.waitDeliveries(ctx, expected, drainLimit(expected)); err != nil {
		return deliveryFailure(fmt.Sprintf("warm-up of 100 applications: %v", err), c), nil
	}
	var done []leadRound
	for r := range rounds {
		lr, c, err := ls.timedRound(ctx, n, expected)
		if err != nil {
			return nil, err
		}
		expected += n * leadEndpoints
		if c.distinct < expected {
			return deliveryFailure(fmt.Sprintf("round %d of %d applications: the deliveries did not all arrive", r+1, n), c), nil
		}
		done = append(done, lr)
	}
	time.Sleep(repeatGrace)
	return leadRows(n, done, ls.receiver.snapshot()), nil
}

// timedRound is one round: n applications to the account without
// endpoints, then n to the one with three, then the wait for the latter's
// deliveries (distinct is how many the receiver held before).
func (ls *leadSetup) timedRound(ctx context.Context, n, distinct int) (leadRound, leadCounts, error) {
	var lr leadRound
	var err error
	if lr.bare, err = ls.intake(ctx, ls.bare, n); err != nil {
		return lr, leadCounts{}, err
	}
	cpu, serverCPU, start := selfCPU(), processCPU(ls.server), time.Now()
	if lr.hooked, err = ls.intake(ctx, ls.hook, n); err != nil {
		return lr, leadCounts{}, err
	}
	stored := time.Now()
	c, err := ls.waitDeliveries(ctx, distinct+n*leadEndpoints, drainLimit(n*leadEndpoints))
	if err != nil {
		return lr, c, nil // the caller reports the shortfall
	}
	lr.recvCPU, lr.serverCPU, lr.wall = selfCPU()-cpu, processCPU(ls.server)-serverCPU, time.Since(start)
	lr.drain = max(0, c.last.Sub(stored))
	lr.deliveryRate = float64(n*leadEndpoints) / c.last.Sub(start).Seconds()
	return lr, c, nil
}

// deliveryFailure is the judged row of a run whose deliveries did not all
// arrive in time: the report says so rather than the bench hanging.
func deliveryFailure(what string, c leadCounts) []result {
	return []result{{name: "lead events: every delivery received", target: "all", pass: false,
		note: fmt.Sprintf("%s; the receiver has %s. See server-leads.log in the bench folder.", what, c)}}
}

// leadRows reports the rounds: the intake rates, their ratio (judged),
// the deliveries (judged: all, none twice) and the time to the last one.
func leadRows(n int, rounds []leadRound, c leadCounts) []result {
	var bare, hooked, drains []time.Duration
	var rates []float64
	var recvCPU, serverCPU, wall time.Duration
	for _, r := range rounds {
		bare, hooked, drains = append(bare, r.bare), append(hooked, r.hooked), append(drains, r.drain)
		rates = append(rates, r.deliveryRate)
		recvCPU, serverCPU, wall = recvCPU+r.recvCPU, serverCPU+r.serverCPU, wall+r.wall
	}
	b, hk, d := summarize(bare), summarize(hooked), summarize(drains)
	perSecond := func(t time.Duration) float64 { return float64(n) / t.Seconds() }
	ratio := perSecond(hk.median) / perSecond(b.median)
	deliveries := len(rounds) * n * leadEndpoints
	return []result{{
		name:   fmt.Sprintf("SubmitApplications, %d applications in calls of %d, no endpoints (%d rounds)", n, leadBatch, b.n),
		median: b.median, p99: b.p99, throughput: perSecond(b.median),
		note: "Throughput is applications a second (median time of the whole set), one call at a time over one connection.",
	}, {
		name:   fmt.Sprintf("SubmitApplications, %d applications in calls of %d, %d endpoints (%d rounds)", n, leadBatch, leadEndpoints, hk.n),
		median: hk.median, p99: hk.p99, throughput: perSecond(hk.median),
		floor: fmt.Sprintf("no endpoints: %.0f/s", perSecond(b.median)), ratio: ratio,
		target: ">= 0.8x no endpoints", pass: ratio >= 0.8,
		note: fmt.Sprintf("The ratio is this rate over the rate without endpoints (rounds turn about): what the outbox (an event "+
			"per application and %d delivery jobs, in the same transaction) costs the intake, deliveries running meanwhile. "+
			"Calls of %d: a board's service forwarding what arrived in the last moments.", leadEndpoints, leadBatch),
	}, {
		name:   fmt.Sprintf("deliveries received, %d rounds of %d", len(rounds), n*leadEndpoints),
		target: "all", pass: c.distinct >= (len(rounds)*n+100)*leadEndpoints,
		note: fmt.Sprintf("Receiver: %s (the warm-up's %d included).", c, 100*leadEndpoints),
	}, {
		name:   "deliveries received twice under normal operation",
		target: "none", pass: c.repeated() == 0 && c.conflicts == 0 && c.refused == 0,
		note: fmt.Sprintf("%d repeats, %d webhook-id conflicts, %d refused signatures, counted %s after the last delivery.",
			c.repeated(), c.conflicts, c.refused, repeatGrace),
	}, {
		name:   fmt.Sprintf("last application stored to last delivery received (%d deliveries a round)", deliveries/len(rounds)),
		median: d.median, p99: d.p99, throughput: medianRate(rates),
		note: fmt.Sprintf("Throughput is deliveries a second, from the start of the intake to the last delivery. %s",
			receiverNote(recvCPU, serverCPU, wall)),
	}}
}

// receiverNote says what share of a core the bench process (receiver and
// gRPC client) and the server used, so the receiver is seen not to be the
// limit.
func receiverNote(bench, server, wall time.Duration) string {
	if wall <= 0 {
		return ""
	}
	return fmt.Sprintf("Over the intake and deliveries, the bench process (gRPC client and the receiver, which "+
		"verifies every signature) used %.0f%% of one core, the server %.0f%%.",
		100*bench.Seconds()/wall.Seconds(), 100*server.Seconds()/wall.Seconds())
}

func medianRate(rates []float64) float64 {
	if len(rates) == 0 {
		return 0
	}
	d := make([]time.Duration, len(rates))
	for i, r := range rates {
		d[i] = time.Duration(r * 1000)
	}
	return float64(summarize(d).median) / 1000
}
