package parallel

import "testing"

// TestForPanicsOnCaller: a panic in a worker reaches the caller's
// goroutine, where a request's recovery handles it.
func TestForPanicsOnCaller(t *testing.T) {
	defer func() {
		if p := recover(); p != "boom" {
			t.Errorf("recovered %v, want the worker's panic", p)
		}
	}()
	For(1000, func(k int) {
		if k == 999 {
			panic("boom")
		}
	})
	t.Error("For returned after a worker panicked")
}
