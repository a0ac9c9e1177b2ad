package main

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/truckjobs/jobboard/internal/buildinfo"
	"github.com/truckjobs/jobboard/internal/metrics"
	"github.com/truckjobs/jobboard/server"
	"github.com/truckjobs/jobboard/server/store"
)

// followHealth exposes the build (jobboard_build_info) and starts
// following readiness with the gRPC health and the readiness gauges, from
// SERVING. The following outlives the signal, so a drain shows as not
// ready (jobboard_ready 0) until serve returns and calls stop.
func followHealth(ctx context.Context, svcs *server.Services, st *store.Store, m *metrics.Metrics,
	shuttingDown *atomicBool, build buildinfo.Info) (stop func(), err error) {
	if err := m.BuildInfo(build.Short(), build.GoVersion, store.LatestVersion()); err != nil {
		return nil, err
	}
	observe, err := m.Readiness()
	if err != nil {
		return nil, err
	}
	svcs.Health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		followReadiness(fctx, svcs.Health, func(ctx context.Context) error {
			return checkReady(ctx, st, shuttingDown)
		}, healthFollowEvery, observe)
	}()
	return func() { cancel(); <-done }, nil
}

// healthFollowEvery is how often the gRPC health status is brought in line
// with readiness: about as often as a load balancer checks (HAProxy's inter
// 1s in the topology), so the gRPC pool leaves a replica that cannot reach
// its database within a check or two, as the REST pool does by /readyz.
const healthFollowEvery = time.Second

// followReadiness keeps the gRPC health of the whole server (service "")
// at SERVING while ready answers nil and NOT_SERVING while it does not,
// checking every interval until ctx ends, and gives observe each outcome
// (the jobboard_ready and jobboard_database_up gauges). Before, it
// answered SERVING whatever the database did: during an outage HAProxy's
// gRPC pool stayed up while every call failed. Check and Watch both read
// the status set here; a drain's Shutdown sets NOT_SERVING for good, which
// later sets leave alone.
func followReadiness(ctx context.Context, h *health.Server, ready func(context.Context) error, interval time.Duration,
	observe func(ready, databaseUp bool)) {
	serving := true // the status serve set before calling this
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		err := ready(ctx)
		observe(err == nil, !errors.Is(err, errDatabaseUnreachable))
		if now := err == nil; now != serving {
			serving = now
			status := healthpb.HealthCheckResponse_SERVING
			if !now {
				status = healthpb.HealthCheckResponse_NOT_SERVING
				slog.WarnContext(ctx, "gRPC health NOT_SERVING", "reason", err.Error())
			} else {
				slog.InfoContext(ctx, "gRPC health SERVING again")
			}
			h.SetServingStatus("", status)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}
