package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/truckjobs/jobboard/internal/tracing"
)

// tracingFlushTimeout bounds the last export at exit, so an unreachable
// collector cannot hold up a drained server.
const tracingFlushTimeout = 5 * time.Second

// startTracing turns tracing on when the OTEL_* variables ask for it; the
// returned stop, deferred by the caller, sends the spans still buffered
// once the server has drained (its last requests and imports included).
func startTracing(ctx context.Context) (stop func(), err error) {
	shutdown, err := tracing.Setup(ctx)
	if err != nil {
		return nil, usageError{err.Error()}
	}
	if tracing.Enabled() {
		slog.Info("tracing on: spans are exported over OTLP")
	}
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tracingFlushTimeout)
		defer cancel()
		if err := shutdown(sctx); err != nil {
			slog.Warn("tracing: the last spans were not exported", "error", err)
		}
	}, nil
}
