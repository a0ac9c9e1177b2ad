package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// stats summarises the durations of repeated runs of one step.
type stats struct {
	n           int
	median, p99 time.Duration
	min, max    time.Duration
}

func summarize(samples []time.Duration) stats {
	if len(samples) == 0 {
		return stats{}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	return stats{n: len(s), median: quantile(s, 0.5), p99: quantile(s, 0.99), min: s[0], max: s[len(s)-1]}
}

// quantile of sorted samples, nearest rank.
func quantile(sorted []time.Duration, q float64) time.Duration {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// repeat times step rounds times after one untimed warm-up; prepare, when
// set, runs untimed before each round.
func repeat(rounds int, prepare func(round int) error, step func(round int) error) ([]time.Duration, error) {
	var samples []time.Duration
	for r := -1; r < rounds; r++ {
		took, err := timeOnce(func() error {
			if prepare == nil {
				return nil
			}
			return prepare(r)
		}, func() error { return step(r) })
		if err != nil {
			return nil, err
		}
		if r >= 0 {
			samples = append(samples, took)
		}
	}
	return samples, nil
}

// takeTurns runs a then b in even rounds and b then a in odd ones, so that
// of two sides timed in pairs neither always follows the other.
func takeTurns(round int, a, b func() error) error {
	if round%2 != 0 {
		a, b = b, a
	}
	if err := a(); err != nil {
		return err
	}
	return b()
}

// pairSide is one of two things timed in pairs: prepare, when set, runs
// untimed before each round's step; both take the round.
type pairSide struct {
	name          string
	prepare, step func(round int) error
}

// repeatPairs times a and b in turns (takeTurns), rounds times after one
// untimed warm-up round, so a slow spell of the shared machine falls on
// both alike and neither always follows the other's writes (the rows it
// dirtied) or always meets the database just after a pause.
func repeatPairs(rounds int, a, b pairSide) (as, bs []time.Duration, err error) {
	for r := -1; r < rounds; r++ {
		var ta, tb time.Duration
		timed := func(s pairSide, took *time.Duration) func() error {
			return func() error {
				d, err := timeOnce(func() error {
					if s.prepare == nil {
						return nil
					}
					return s.prepare(r)
				}, func() error { return s.step(r) })
				if err != nil {
					return fmt.Errorf("%s: %w", s.name, err)
				}
				*took = d
				return nil
			}
		}
		if err := takeTurns(r, timed(a, &ta), timed(b, &tb)); err != nil {
			return nil, nil, err
		}
		if r >= 0 {
			as, bs = append(as, ta), append(bs, tb)
		}
	}
	return as, bs, nil
}

// timeOnce runs prepare untimed, then times step.
func timeOnce(prepare, step func() error) (time.Duration, error) {
	if err := prepare(); err != nil {
		return 0, err
	}
	t := time.Now()
	err := step()
	return time.Since(t), err
}

// loadResult is what a closed-loop load run saw.
type loadResult struct {
	requests, errors int64
	elapsed          time.Duration
	latency          stats
	firstError       string
}

func (l loadResult) throughput() float64 { return float64(l.requests) / l.elapsed.Seconds() }

// load runs call from conc goroutines, each calling again as soon as the
// previous call returns, for d. Latencies of every call are kept.
func load(ctx context.Context, conc int, d time.Duration, call func(ctx context.Context, worker int, i int) error) loadResult {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var (
		mu         sync.Mutex
		all        []time.Duration
		requests   atomic.Int64
		errs       atomic.Int64
		firstError atomic.Value
		wg         sync.WaitGroup
	)
	started := time.Now()
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]time.Duration, 0, 4096)
			for i := 0; ctx.Err() == nil; i++ {
				t := time.Now()
				err := call(ctx, w, i)
				if ctx.Err() != nil {
					break // cut off by the end of the run: not counted
				}
				local = append(local, time.Since(t))
				requests.Add(1)
				if err != nil {
					errs.Add(1)
					firstError.CompareAndSwap(nil, err.Error())
				}
			}
			mu.Lock()
			all = append(all, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	r := loadResult{requests: requests.Load(), errors: errs.Load(), elapsed: time.Since(started), latency: summarize(all)}
	if e, ok := firstError.Load().(string); ok {
		r.firstError = e
	}
	return r
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

// pairedDurationRatio is the median over rounds of each round's time over
// the floor's time in the same round, and those ratios as text in round
// order.
func pairedDurationRatio(service, floor []time.Duration) (float64, string) {
	nanos := func(ds []time.Duration) []float64 {
		var s []float64
		for _, d := range ds {
			s = append(s, float64(d))
		}
		return s
	}
	return medianPairRatio(nanos(service), nanos(floor))
}

// medianPairRatio is medianRatio of service[i]/floor[i] over the pairs
// both have, leaving out a floor of zero.
func medianPairRatio(service, floor []float64) (float64, string) {
	var ratios []float64
	for i := range min(len(service), len(floor)) {
		if floor[i] > 0 {
			ratios = append(ratios, service[i]/floor[i])
		}
	}
	return medianRatio(ratios)
}

// medianRatio is the median of ratios, and the ratios as text: each in
// the order given, or for more than nine their count, range and middle
// half ("" when there are none).
func medianRatio(ratios []float64) (float64, string) {
	if len(ratios) == 0 {
		return 0, ""
	}
	sorted := slices.Sorted(slices.Values(ratios))
	median := sorted[len(sorted)/2]
	if len(ratios) > 9 {
		n := len(sorted)
		return median, fmt.Sprintf("%d ratios, %.2fx to %.2fx, the middle half %.2fx to %.2fx",
			n, sorted[0], sorted[n-1], sorted[n/4], sorted[(3*n)/4])
	}
	var all []string
	for _, x := range ratios {
		all = append(all, fmt.Sprintf("%.2fx", x))
	}
	return median, strings.Join(all, ", ")
}
