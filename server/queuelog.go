package server

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// riverPollOnlyNotice is what River logs at start when its driver cannot
// LISTEN. The queue runs on database/sql on purpose (an import is queued in
// the transaction that stores it, and polling works through a
// transaction-pooling PgBouncer), so the notice describes the intended
// setup, not a fault.
const riverPollOnlyNotice = "Driver does not support listener; entering poll only mode"

// queueLogHandler passes River's log lines on, marked component=queue so an
// operator can tell them from the service's own, and says the poll-only
// notice in the service's words. Any other line, including one River may
// word differently in a later version, is passed on unchanged.
type queueLogHandler struct {
	slog.Handler
	pollEvery time.Duration
}

func newQueueLogger(base slog.Handler, pollEvery time.Duration) *slog.Logger {
	return slog.New(queueLogHandler{Handler: base.WithAttrs([]slog.Attr{slog.String("component", "queue")}), pollEvery: pollEvery})
}

func (h queueLogHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == riverPollOnlyNotice {
		msg := fmt.Sprintf("job queue checks the database for new imports and callbacks every %s (polling, not LISTEN/NOTIFY, so it also works through PgBouncer in transaction mode)", h.pollEvery)
		r = slog.NewRecord(r.Time, r.Level, msg, r.PC)
	}
	return h.Handler.Handle(ctx, r)
}

func (h queueLogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return queueLogHandler{Handler: h.Handler.WithAttrs(attrs), pollEvery: h.pollEvery}
}

func (h queueLogHandler) WithGroup(name string) slog.Handler {
	return queueLogHandler{Handler: h.Handler.WithGroup(name), pollEvery: h.pollEvery}
}
