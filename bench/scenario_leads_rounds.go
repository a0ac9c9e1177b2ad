package main

import (
	"context"
	"fmt"
	"time"

	"github.com/truckjobs/jobboard/server/leads"
)

// repeatGrace is how long the scenario waits after the last expected
// delivery for repeats that would still come.
const repeatGrace = 3 * time.Second

// leadRound is what one timed round with endpoints measured.
type leadRound struct {
	bare, hooked time.Duration // the two intakes of n applications
	intakeCPU    cpuShare      // over the intake with endpoints
	backlog      backlog       // the round's deliveries, sent by a delivery replica
}

// cpuShare is the CPU the bench process and a server used over a wall time.
type cpuShare struct{ bench, server, wall time.Duration }

func (c *cpuShare) add(o cpuShare) {
	c.bench, c.server, c.wall = c.bench+o.bench, c.server+o.server, c.wall+o.wall
}

// backlog is a delivery replica's work on the deliveries queued meanwhile.
type backlog struct {
	took  time.Duration // from the replica's start to the last delivery received
	ready time.Duration // from its start to its /readyz answering 200
	rate  float64       // deliveries a second over took
	cpu   cpuShare
}

// leadRoundsResult is the split rounds' rows; complete is false when a
// round's deliveries did not all arrive (the rows then say so).
type leadRoundsResult struct {
	rows     []result
	complete bool
}

// intakeRounds times intakes of n applications without endpoints and with
// three, turn about, against a server that sends no deliveries, so the
// ratio of the rates is the outbox's cost alone; after each round a
// delivery replica sends the round's backlog. The rows judge the ratio,
// that all deliveries arrived and that none came twice.
func (ls *leadSetup) intakeRounds(ctx context.Context, n, rounds int) (leadRoundsResult, error) {
	// Untimed warm-up of both accounts and of the deliveries.
	for _, a := range []account{ls.bare, ls.hook} {
		if _, err := ls.intake(ctx, a, 100); err != nil {
			return leadRoundsResult{}, err
		}
	}
	expected := 100 * leadEndpoints
	if _, c, err := ls.sendBacklog(ctx, "server-leads-deliveries-warmup", expected); err != nil {
		return leadRoundsResult{}, err
	} else if c.distinct < expected {
		return leadRoundsResult{rows: deliveryFailure("warm-up of 100 applications: the deliveries did not all arrive", c)}, nil
	}
	var done []leadRound
	for r := range rounds {
		lr, c, err := ls.timedRound(ctx, n, expected, r+1)
		if err != nil {
			return leadRoundsResult{}, err
		}
		expected += n * leadEndpoints
		if c.distinct < expected {
			return leadRoundsResult{rows: deliveryFailure(fmt.Sprintf("round %d of %d applications: the deliveries did not all arrive", r+1, n), c)}, nil
		}
		done = append(done, lr)
	}
	time.Sleep(repeatGrace)
	return leadRoundsResult{rows: leadRows(n, done, ls.receiver.snapshot()), complete: true}, nil
}

// timedRound is one round: n applications to the account without
// endpoints, then n to the one with three, then a delivery replica sends
// the latter's deliveries (distinct is how many the receiver held before).
func (ls *leadSetup) timedRound(ctx context.Context, n, distinct, round int) (leadRound, leadCounts, error) {
	var lr leadRound
	var err error
	if lr.bare, err = ls.intake(ctx, ls.bare, n); err != nil {
		return lr, leadCounts{}, err
	}
	cpu, serverCPU := selfCPU(), processCPU(ls.server)
	if lr.hooked, err = ls.intake(ctx, ls.hook, n); err != nil {
		return lr, leadCounts{}, err
	}
	lr.intakeCPU = cpuShare{bench: selfCPU() - cpu, server: processCPU(ls.server) - serverCPU, wall: lr.hooked}
	var c leadCounts
	lr.backlog, c, err = ls.sendBacklog(ctx, fmt.Sprintf("server-leads-deliveries-%d", round), distinct+n*leadEndpoints)
	return lr, c, err
}

// sendBacklog starts a delivery replica (a second server on the database,
// default workers), waits until the receiver holds want distinct
// deliveries (bounded) and stops it. A shortfall is in the counts, not
// the error.
func (ls *leadSetup) sendBacklog(ctx context.Context, name string, want int) (backlog, leadCounts, error) {
	before := ls.receiver.snapshot()
	cpu, start := selfCPU(), time.Now()
	p, err := ls.h.startServer(ctx, name, leadServerEnv...)
	if err != nil {
		return backlog{}, leadCounts{}, fmt.Errorf("delivery replica: %w", err)
	}
	ls.deliverer = p
	defer func() { p.stop(); ls.deliverer = nil }()
	b := backlog{ready: time.Since(start)}
	c, err := ls.waitDeliveries(ctx, want, drainLimit(want-before.distinct))
	if err != nil {
		return b, c, nil // the caller reports the shortfall
	}
	b.cpu = cpuShare{bench: selfCPU() - cpu, server: processCPU(p), wall: time.Since(start)}
	b.took = c.last.Sub(start)
	b.rate = float64(c.distinct-before.distinct) / b.took.Seconds()
	return b, c, nil
}

// deliveryFailure is the judged row of a run whose deliveries did not all
// arrive in time: the report says so rather than the bench hanging.
func deliveryFailure(what string, c leadCounts) []result {
	return []result{{name: "lead events: every delivery received", target: "all", pass: false,
		note: fmt.Sprintf("%s; the receiver has %s. See the server-leads-*.log files in the bench folder.", what, c)}}
}

// leadRows reports the rounds: the intake rates, their ratio (judged),
// the deliveries (judged: all, none twice) and the delivery replica's
// time to send each round's backlog.
func leadRows(n int, rounds []leadRound, c leadCounts) []result {
	var bare, hooked, took, ready []time.Duration
	var rates []float64
	var intakeCPU, sendCPU cpuShare
	for _, r := range rounds {
		bare, hooked = append(bare, r.bare), append(hooked, r.hooked)
		took, ready = append(took, r.backlog.took), append(ready, r.backlog.ready)
		rates = append(rates, r.backlog.rate)
		intakeCPU.add(r.intakeCPU)
		sendCPU.add(r.backlog.cpu)
	}
	b, hk, tk, rd := summarize(bare), summarize(hooked), summarize(took), summarize(ready)
	perSecond := func(t time.Duration) float64 { return float64(n) / t.Seconds() }
	ratio := perSecond(hk.median) / perSecond(b.median)
	return []result{{
		name:   fmt.Sprintf("SubmitApplications, %d applications in calls of %d, no endpoints (%d rounds)", n, leadBatch, b.n),
		median: b.median, p99: b.p99, throughput: perSecond(b.median),
		note: "Throughput is applications a second (median time of the whole set), one call at a time over one connection.",
	}, {
		name:   fmt.Sprintf("SubmitApplications, %d applications in calls of %d, %d endpoints (%d rounds)", n, leadBatch, leadEndpoints, hk.n),
		median: hk.median, p99: hk.p99, throughput: perSecond(hk.median),
		floor: fmt.Sprintf("no endpoints: %.0f/s", perSecond(b.median)), ratio: ratio,
		target: ">= 0.8x no endpoints", pass: ratio >= 0.8,
		note: fmt.Sprintf("The ratio is this rate over the rate without endpoints (rounds turn about), against a server "+
			"with JOBBOARD_WEBHOOK_WORKERS=0, which queues deliveries but sends none: what the outbox (an event per "+
			"application, the fan-out and %d delivery jobs, in the intake's transaction) costs the intake. Calls of %d: "+
			"a board's service forwarding what arrived in the last moments. %s", leadEndpoints, leadBatch,
			cpuNote10("intake with endpoints", "gRPC client", intakeCPU)),
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
		name:   fmt.Sprintf("delivery replica started after the round: its start to the last delivery received (%d queued deliveries a round)", n*leadEndpoints),
		median: tk.median, p99: tk.p99, throughput: medianRate(rates),
		note: fmt.Sprintf("A second server on the same database with the default %d workers sends the round's backlog, "+
			"then stops. Throughput is deliveries a second over that time, which includes its start (ready after %s, median). %s",
			leads.DefaultWebhookWorkers, ms(rd.median), cpuNote10("backlog", "receiver, which verifies every signature", sendCPU)),
	}}
}

// cpuNote10 says what share of a core the bench process and the server
// used over a phase, so the bench process is seen not to be the limit.
func cpuNote10(phase, benchRole string, c cpuShare) string {
	if c.wall <= 0 {
		return ""
	}
	return fmt.Sprintf("Over the %s, the bench process (%s) used %.0f%% of one core, the server %.0f%%.", phase, benchRole,
		100*c.bench.Seconds()/c.wall.Seconds(), 100*c.server.Seconds()/c.wall.Seconds())
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
