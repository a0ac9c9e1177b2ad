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

// crashRound sends n more applications to the account with endpoints
// through the intake's server, which queues their deliveries; a server with
// workers then sends them and is killed with SIGKILL once a third have
// arrived, so the kill lands with deliveries in flight however fast the
// intake was. It is restarted on the same database; the round waits until
// every event reached every endpoint. The rows judge that, and report the
// deliveries in flight at the kill, the repeats and the recovery time.
func (ls *leadSetup) crashRound(ctx context.Context, n int) ([]result, error) {
	before := ls.receiver.snapshot()
	want := before.distinct + n*leadEndpoints
	if _, err := ls.intake(ctx, ls.hook, n); err != nil {
		return nil, err
	}
	sender, err := ls.h.startServer(ctx, "server-leads-killed", leadServerEnv...)
	if err != nil {
		return nil, err
	}
	ls.deliverer = sender
	if c, err := ls.waitDeliveries(ctx, before.distinct+n*leadEndpoints/3, drainLimit(n*leadEndpoints)); err != nil {
		return deliveryFailure(fmt.Sprintf("crash round, before the kill: %v", err), c), nil
	}
	if err := sender.kill(); err != nil {
		return nil, err
	}
	ls.deliverer = nil
	killed := time.Now()
	atKill := ls.receiver.snapshot()
	// What the dead server held: its deliveries stay "running" in the
	// queue until the restarted one rescues them.
	q, err := ls.deliveryQueue(ctx)
	if err != nil {
		return nil, err
	}
	p, err := ls.h.startServer(ctx, "server-leads-restarted", leadServerEnv...)
	if err != nil {
		return nil, fmt.Errorf("restart after kill -9: %w", err)
	}
	ls.deliverer = p
	defer func() { p.stop(); ls.deliverer = nil }()
	restarted := time.Now()
	c, err := ls.waitDeliveries(ctx, want, recoveryLimit)
	if err != nil {
		return deliveryFailure(fmt.Sprintf("crash round, after the restart: %v", err), c), nil
	}
	// The rescued jobs whose posts had arrived before the kill are the
	// repeats; they may come after every event has arrived once, so the
	// count waits for the queue to finish them.
	settled, err := ls.waitQueueSettled(ctx, restarted.Add(recoveryLimit))
	if err != nil {
		return nil, err
	}
	time.Sleep(repeatGrace)
	after := ls.receiver.snapshot()
	rows := crashRows(n, before, atKill, after, killed, restarted)
	rows[1].note += fmt.Sprintf(" At the kill the queue held %d deliveries running (in flight on the killed server) "+
		"and %d waiting; repeats were counted %s after the queue had none left unfinished (%s).",
		q.running, q.waiting, repeatGrace, settled)
	return rows, nil
}

// deliveryQueue is how many delivery jobs the queue holds unfinished.
type deliveryQueue struct{ running, waiting int }

func (ls *leadSetup) deliveryQueue(ctx context.Context) (deliveryQueue, error) {
	var q deliveryQueue
	err := ls.h.store.DB().QueryRowContext(ctx, `SELECT count(*) FILTER (WHERE state = 'running'),
		count(*) FILTER (WHERE state IN ('available', 'retryable', 'scheduled', 'pending'))
		FROM river_job WHERE kind = 'webhook_delivery'`).Scan(&q.running, &q.waiting)
	if err != nil {
		return q, fmt.Errorf("read the delivery queue: %w", err)
	}
	return q, nil
}

// waitQueueSettled waits, until deadline, for the queue to hold no
// unfinished delivery; the text says whether it did.
func (ls *leadSetup) waitQueueSettled(ctx context.Context, deadline time.Time) (string, error) {
	for {
		q, err := ls.deliveryQueue(ctx)
		if err != nil {
			return "", err
		}
		if q.running+q.waiting == 0 {
			return "settled", nil
		}
		if time.Now().After(deadline) {
			return fmt.Sprintf("not settled: %d running, %d waiting at the limit", q.running, q.waiting), nil
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
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
	note := fmt.Sprintf("SIGKILL of the server sending the round's deliveries (queued by the intake's server) when %d of the %d "+
		"had arrived; restart ready %s after the kill. "+
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
	<-p.exited
	p.logs.Close()
	return nil
}
