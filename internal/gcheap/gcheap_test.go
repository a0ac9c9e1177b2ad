package gcheap

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestPercentFor: the percent puts the goal at Floor, counting the roots
// as Go does, within the bounds.
func TestPercentFor(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name        string
		live, roots uint64
		want        int
	}{
		{"a live heap of 8 MiB, no roots", 8 * mib, 0, 300},            // 8 + 8*3 = 32
		{"a live heap of 7 MiB and 1 MiB of roots", 7 * mib, mib, 312}, // 7 + 8*3.125 = 32
		{"a tiny heap waits for no more than MaxPercent", mib, 0, MaxPercent},
		{"nothing live yet", 0, 0, MaxPercent},
		{"past half the floor, Go's default", 20 * mib, 0, MinPercent},
		{"past the floor, Go's default", 200 * mib, 2 * mib, MinPercent},
	} {
		if got := percentFor(c.live, c.roots); got != c.want {
			t.Errorf("%s: percentFor(%d, %d) = %d, want %d", c.name, c.live, c.roots, got, c.want)
		}
	}
}

// gcPercent is the runtime's GOGC now.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// percentAfterCollections collects until the tuner, which runs after
// each collection, has set a percent that ok accepts, and returns it.
func percentAfterCollections(ok func(int) bool) int {
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // the tuner runs on the finalizer goroutine
		if p := gcPercent(); ok(p) || time.Now().After(deadline) {
			return p
		}
	}
}

// TestTune: GOGC set leaves the collector alone. Unset, the tuner runs
// after collections: a small live heap (this test's) collects at more
// than Go's default; a live heap past the floor at Go's default, so a
// large heap grows no more than it would without the tuner.
func TestTune(t *testing.T) {
	before := gcPercent()
	if Tune("150") {
		t.Fatal("Tune tuned with GOGC set")
	}
	if p := gcPercent(); p != before {
		t.Fatalf("with GOGC set the percent moved from %d to %d", before, p)
	}

	if !Tune("") {
		t.Fatal("Tune did not tune with GOGC unset")
	}
	if p := percentAfterCollections(func(p int) bool { return p > MinPercent }); p <= MinPercent || p > MaxPercent {
		t.Errorf("a small heap collects at %d%%, want more than %d%% and at most %d%%", p, MinPercent, MaxPercent)
	}
	func() {
		live := make([][]byte, 0, 40)
		for range cap(live) {
			live = append(live, make([]byte, 1<<20))
		}
		if p := percentAfterCollections(func(p int) bool { return p == MinPercent }); p != MinPercent {
			t.Errorf("with %d MiB live the heap collects at %d%%, want %d%%", len(live), p, MinPercent)
		}
		runtime.KeepAlive(live)
	}()
	if p := percentAfterCollections(func(p int) bool { return p > MinPercent }); p <= MinPercent {
		t.Errorf("with the heap small again it collects at %d%%, want more than %d%%", p, MinPercent)
	}
}
