// Package gcheap sets how far the server's heap grows between garbage
// collections. Go collects when the heap has grown by its live size
// (GOGC=100). The server's live heap is small, 5 to 10 MiB, most of it
// tables and descriptors, and each collection scans all of it and every
// goroutine's stack whatever the garbage: under a load of cheap reads it
// collected several hundred times a second, and marking and sweeping took
// about a tenth of its CPU (a GET by id, profiled beside bench/floor: 7.1
// µs a request, against 2.7 µs for the floor). Letting the heap reach a
// floor before collecting makes collections several times rarer while the
// live heap is small, and changes nothing once it is large (a big
// import), where the memory holds data and its bound matters.
//
// The percent is set after each collection from the live heap that
// collection found (runtime/metrics). Tuners that read HeapInuse instead
// see the garbage not yet swept as live and settle near Go's default.
package gcheap

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// Floor is the heap the collector lets the server reach before it
// collects, while the live heap is small. After each collection the
// percent is what sets the next goal at Floor, within MinPercent and
// MaxPercent.
const (
	Floor      = 32 << 20
	MinPercent = 100 // never more often than Go's default
	MaxPercent = 500 // a live heap of 2 MiB need not wait for 32
)

// Tune makes the collector let the heap reach Floor, unless gogc (the
// GOGC environment variable) is set: then the operator chose, and the
// runtime already follows it. It reports whether it tuned. Call it once.
func Tune(gogc string) bool {
	if gogc != "" {
		return false
	}
	t := &tuner{percent: MinPercent, samples: []metrics.Sample{
		{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"}}}
	t.arm()
	return true
}

// tuner is run by the finalizer goroutine alone, once per collection.
type tuner struct {
	percent int
	samples []metrics.Sample
}

// sentinel is an object only a finalizer refers to: it is found
// unreachable by every collection, which then runs the finalizer. 16
// bytes keeps it out of the tiny allocator, whose blocks several objects
// share and whose finalizers may never run.
type sentinel [16]byte

// arm sets the tuner to run after the next collection.
func (t *tuner) arm() {
	runtime.SetFinalizer(new(sentinel), func(*sentinel) {
		t.retune()
		t.arm()
	})
}

// retune sets the percent for the live heap the last collection found.
func (t *tuner) retune() {
	metrics.Read(t.samples)
	var v [3]uint64
	for i, s := range t.samples {
		if s.Value.Kind() == metrics.KindUint64 {
			v[i] = s.Value.Uint64()
		}
	}
	if p := percentFor(v[0], v[1]+v[2]); p != t.percent {
		debug.SetGCPercent(p)
		t.percent = p
	}
}

// percentFor is the percent that puts the heap goal at Floor for a live
// heap of live bytes and roots (stacks and globals) of roots bytes: Go's
// goal is live + (live+roots)*percent/100.
func percentFor(live, roots uint64) int {
	if live >= Floor {
		return MinPercent
	}
	scanned := max(live+roots, 1)
	return int(min(max((Floor-live)*100/scanned, MinPercent), MaxPercent))
}
