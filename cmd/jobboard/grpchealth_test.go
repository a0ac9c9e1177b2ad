package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/truckjobs/jobboard/internal/testfix"
)

// TestFollowReadiness: the whole server's gRPC health and the readiness
// gauges follow readiness both ways, and a drain's Shutdown is not undone
// by a ready answer.
func TestFollowReadiness(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := health.NewServer()
	var down, observedReady, observedUp atomic.Bool
	go followReadiness(ctx, h, func(context.Context) error {
		if down.Load() {
			return fmt.Errorf("check: %w", errDatabaseUnreachable)
		}
		return nil
	}, 5*time.Millisecond, func(ready, databaseUp bool) {
		observedReady.Store(ready)
		observedUp.Store(databaseUp)
	})
	status := func() healthpb.HealthCheckResponse_ServingStatus {
		resp, err := h.Check(ctx, &healthpb.HealthCheckRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetStatus()
	}
	for _, step := range []struct {
		name string
		down bool
		want healthpb.HealthCheckResponse_ServingStatus
	}{
		{"ready", false, healthpb.HealthCheckResponse_SERVING},
		{"database lost", true, healthpb.HealthCheckResponse_NOT_SERVING},
		{"database back", false, healthpb.HealthCheckResponse_SERVING},
	} {
		down.Store(step.down)
		serving := step.want == healthpb.HealthCheckResponse_SERVING
		if !testfix.Eventually(2*time.Second, func() bool {
			return status() == step.want && observedReady.Load() == serving && observedUp.Load() == serving
		}) {
			t.Fatalf("%s: gRPC health %v, ready %v, database up %v; want %v", step.name, status(),
				observedReady.Load(), observedUp.Load(), step.want)
		}
	}
	h.Shutdown()
	down.Store(true)
	time.Sleep(20 * time.Millisecond)
	down.Store(false)
	time.Sleep(20 * time.Millisecond)
	if got := status(); got != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Errorf("after Shutdown and a ready answer: %v, want NOT_SERVING", got)
	}
}
