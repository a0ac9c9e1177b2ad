// Package gcfloor keeps Go's garbage collector from running while the heap
// is small. With GOGC alone the collector runs each time the heap has
// grown by its live size: a server whose live heap is a few megabytes
// collects every few megabytes allocated, about twice for each post of
// 1,000 jobs, and a collection that overlaps the post's insert slows it
// (README, Performance). A floor under the heap goal makes a small heap
// collect seldom, and changes nothing once the live heap is large enough
// for GOGC's goal to be above the floor, so a large import holds no more
// than it did.
package gcfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// maxPercent bounds the percent set for a nearly empty heap. The percent
// is set after a collection, when the sweep reaches the sentinel, which
// under load can be long after the collection ended; meanwhile the goal is
// the live heap times (1 + percent/100). A heap that grew from nearly
// nothing to tens of megabytes within one collection (eight lists of 80 MB
// starting at once) then had a goal of thirty times its size, and the
// server reached 330 MB where GOGC alone held it under 100. With the
// bound, such a goal is at most five times the live heap, for that while.
const maxPercent = 400

// Start makes the collector's heap goal at least floor bytes: after each
// collection it sets the GOGC percent that puts the next goal at the
// larger of floor and the goal of the percent the process started with.
// With GOGC=off, or a floor of 0, it does nothing. stop restores the
// starting percent.
func Start(floor uint64) (stop func()) {
	base := debug.SetGCPercent(100)
	debug.SetGCPercent(base)
	if floor == 0 || base < 0 {
		return func() {}
	}
	f := &follower{floor: floor, base: base}
	f.adjust()
	f.arm()
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.stopped = true
		debug.SetGCPercent(base)
	}
}

// follower sets the percent after each collection.
type follower struct {
	floor uint64
	base  int
	// mu keeps a collection's adjustment from following stop's restore.
	mu      sync.Mutex
	stopped bool
}

// sentinel is an object made to be collected: its cleanup tells the
// follower that a collection ran. It holds a pointer so that it is not
// placed in a block shared with other small objects, whose cleanups may
// never run.
type sentinel struct{ _ *follower }

func (f *follower) arm() {
	runtime.AddCleanup(&sentinel{}, (*follower).collected, f)
}

func (f *follower) collected() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return
	}
	f.adjust()
	f.arm()
}

func (f *follower) adjust() {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	debug.SetGCPercent(percentFor(sample[0].Value.Uint64(), f.floor, f.base))
}

// percentFor is the GOGC percent whose heap goal, live*(1+percent/100),
// is the larger of floor and base's goal.
func percentFor(live, floor uint64, base int) int {
	live = max(live, 1)
	if floor <= live {
		return base
	}
	p := (floor - live) * 100 / live
	return max(base, int(min(p, maxPercent)))
}
