package main

import (
	"context"
	"fmt"
	"time"
)

// recoveryLimit bounds the wait, after the restart, for every delivery:
// the rescue of the jobs the killed server held (leadServerEnv) plus the
// retry schedule, several times over.
const recoveryLimit = 5 * time.Minute

// crashRound sends n more applications to the account with endpoints,
// kills the server with SIGKILL once a third of their deliveries have
// arrived, restarts it on the same database and waits until every event
// reached every endpoint. The rows judge that, and report the repeats and
// the recovery time.
func (ls *leadSetup) crashRound(ctx context.Context, n int) ([]result, error) {
	before := ls.receiver.snapshot()
	want := before.distinct + n*leadEndpoints
	if _, err := ls.intake(ctx, ls.hook, n); err != nil {
		return nil, err
	}
	if c, err := ls.waitDeliveries(ctx, before.distinct+n*leadEndpoints/3, drainLimit(n*leadEndpoints)); err != nil {
		return deliveryFailure(fmt.Sprintf("crash round, before the kill: %v", err), c), nil
	}
	if err := ls.server.kill(); err != nil {
		return nil, err
	}
	killed := time.Now()
	atKill := ls.receiver.snapshot()
	p, err := ls.h.startServer(ctx, "server-leads-restarted", leadServerEnv...)
	if err != nil {
		return nil, fmt.Errorf("restart after kill -9: %w", err)
	}
	ls.server = p
	restarted := time.Now()
	c, err := ls.waitDeliveries(ctx, want, recoveryLimit)
	if err != nil {
		return deliveryFailure(fmt.Sprintf("crash round, after the restart: %v", err), c), nil
	}
	time.Sleep(repeatGrace)
	after := ls.receiver.snapshot()
	return crashRows(n, before, atKill, after, killed, restarted), nil
}

// crashRows: every event reached every endpoint (judged; only meaningful
// when the kill came before the last delivery), the repeats, and the time
// from the kill and from the restart to the last delivery.
func crashRows(n int, before, atKill, after leadCounts, killed, restarted time.Time) []result {
	total := n * leadEndpoints
	delivered := atKill.distinct - before.distinct
	exercised := delivered < total
	repeats := after.repeated() - before.repeated()
	conflicts, refused := after.conflicts-before.conflicts, after.refused-before.refused
	note := fmt.Sprintf("SIGKILL when %d of the %d deliveries had arrived; restart ready %s after the kill. "+
		"Receiver after the restart: %s.", delivered, total, ms(restarted.Sub(killed)), after)
	if !exercised {
		note = "Not exercised: every delivery had arrived before the kill landed. " + note
	}
	return []result{{
		name:   fmt.Sprintf("kill -9 in the middle of %d deliveries: every event reaches every endpoint", total),
		target: "all, at least once", pass: exercised && after.distinct-before.distinct == total && conflicts == 0 && refused == 0,
		note: note + fmt.Sprintf(" %d webhook-id conflicts (an event under a second webhook-id, or a webhook-id not the event's id), "+
			"%d refused signatures.", conflicts, refused),
	}, {
		name: fmt.Sprintf("kill -9: repeated deliveries (same webhook-id): %d", repeats),
		note: "Deliveries in flight or done but not yet recorded when the server died are sent again after the restart, " +
			"under the same webhook-id; receivers deduplicate by it.",
	}, {
		name:   "kill -9: recovery, restart to last delivery",
		median: max(0, after.last.Sub(restarted)),
		note: fmt.Sprintf("From the kill to the last delivery: %s. Includes the rescue of the jobs the killed server held "+
			"(JOBBOARD_IMPORT_RESCUE_AFTER=10s here) and the retry schedule %s.", ms(after.last.Sub(killed)), leadServerEnv[0]),
	}}
}

// kill ends the server with SIGKILL, as a crash would: no drain, no
// shutdown of the queue.
func (p *process) kill() error {
	if err := p.cmd.Process.Kill(); err != nil {
		return fmt.Errorf("kill -9 %s: %w", p.name, err)
	}
	_ = p.cmd.Wait()
	p.logs.Close()
	return nil
}
