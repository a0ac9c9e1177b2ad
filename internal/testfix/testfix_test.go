package testfix

import (
	"testing"
	"time"
)

func TestEventually(t *testing.T) {
	calls := 0
	if !Eventually(time.Second, func() bool { calls++; return calls == 3 }) || calls != 3 {
		t.Errorf("a condition true at the third check: %d checks", calls)
	}
	start := time.Now()
	if Eventually(50*time.Millisecond, func() bool { return false }) {
		t.Error("a condition that never holds was reported to hold")
	}
	if d := time.Since(start); d < 50*time.Millisecond || d > 2*time.Second {
		t.Errorf("gave up after %v, want about 50ms", d)
	}
}
