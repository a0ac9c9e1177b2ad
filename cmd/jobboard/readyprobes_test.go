package main

import (
	"context"
	"testing"
	"time"
)

// TestDrainWaitsForTheBalancer: a drain waits for two not-ready answers
// when a balancer checks readiness at a steady pace, and not at all when
// nothing checks or the checks stopped (a script that waited for the start).
func TestDrainWaitsForTheBalancer(t *testing.T) {
	for _, tt := range []struct {
		name           string
		before         int           // checks answered ready, every 100 ms
		pauseBefore    time.Duration // then a pause before the drain
		during         int           // checks answered not ready during the drain, every 100 ms
		atLeast, under time.Duration
	}{
		{"nothing checks", 0, 0, 0, 0, 50 * time.Millisecond},
		{"a balancer checking", 3, 0, 10, 250 * time.Millisecond, 900 * time.Millisecond},
		{"checks that stopped", 3, time.Second, 0, 0, 50 * time.Millisecond},
		{"a balancer that stops checking", 3, 0, 1, 250 * time.Millisecond, 900 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := &readyProbes{}
			for range tt.before {
				p.asked(true)
				time.Sleep(100 * time.Millisecond)
			}
			time.Sleep(tt.pauseBefore)
			stop := make(chan struct{})
			go func() {
				for range tt.during {
					select {
					case <-time.After(100 * time.Millisecond):
						p.asked(false)
					case <-stop:
						return
					}
				}
			}()
			defer close(stop)
			started := time.Now()
			p.waitSeenNotReady(context.Background())
			if took := time.Since(started); took < tt.atLeast || took >= tt.under {
				t.Errorf("the drain waited %s, want from %s to under %s", took, tt.atLeast, tt.under)
			}
		})
	}
}
