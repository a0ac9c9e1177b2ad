package jobs

import "testing"

// TestParallelPanicsOnCaller: a panic in a worker reaches the caller's
// goroutine, where the request's recovery handles it.
func TestParallelPanicsOnCaller(t *testing.T) {
	defer func() {
		if p := recover(); p != "boom" {
			t.Errorf("recovered %v, want the worker's panic", p)
		}
	}()
	parallel(1000, func(k int) {
		if k == 999 {
			panic("boom")
		}
	})
	t.Error("parallel returned after a worker panicked")
}
