package gcfloor

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestPercentFor(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name        string
		live, floor uint64
		base, want  int
	}{
		{"small heap: goal at the floor", 8 * mib, 32 * mib, 100, 300},
		{"smaller heap: bounded", 4 * mib, 64 * mib, 100, maxPercent},
		{"heap at half the floor: base reaches it", 32 * mib, 64 * mib, 100, 100},
		{"heap past the floor: base", 80 * mib, 64 * mib, 100, 100},
		{"a higher base is kept", 8 * mib, 32 * mib, 800, 800},
		{"a lower base is raised", 16 * mib, 64 * mib, 50, 300},
		{"an empty heap: bounded", 0, 64 * mib, 100, maxPercent},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := percentFor(c.live, c.floor, c.base); got != c.want {
				t.Errorf("percentFor(%d MiB, %d MiB, %d) = %d, want %d", c.live/mib, c.floor/mib, c.base, got, c.want)
			}
		})
	}
}

// TestStartFollowsCollections: the percent is set at Start, set again
// after a collection, and restored by stop.
func TestStartFollowsCollections(t *testing.T) {
	base := debug.SetGCPercent(100)
	defer debug.SetGCPercent(base)

	stop := Start(1 << 30)
	if p := debug.SetGCPercent(100); p <= 100 {
		t.Errorf("percent %d after Start with a 1 GiB floor, want above 100", p)
	}
	// The percent is now 100 again: a collection must raise it.
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		p := debug.SetGCPercent(100)
		if p > 100 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the percent was not set again after collections")
		}
	}
	stop()
	if p := debug.SetGCPercent(100); p != 100 {
		t.Errorf("percent %d after stop, want 100 (the starting one)", p)
	}
}

func TestStartOff(t *testing.T) {
	base := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(base)
	stop := Start(64 << 20)
	defer stop()
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Errorf("GOGC=off changed to %d", p)
	}
}
