// Package ratelimit gives each key (an account, a client address) its own
// token bucket, so that one client's burst is refused without slowing
// anybody else.
package ratelimit

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// idleAfter is how long a key's bucket is kept at least once unused; a
// bucket that takes longer to fill up again is kept until it has.
const idleAfter = 10 * time.Minute

// Limiter holds one bucket per key. The zero value is not usable; call New.
type Limiter struct {
	limit rate.Limit
	burst int
	now   func() time.Time

	mu        sync.Mutex
	buckets   map[string]*bucket
	nextSweep time.Time
}

type bucket struct {
	limiter  *rate.Limiter
	lastUsed time.Time
}

// New allows each key perSecond requests a second on average and burst at
// once. perSecond <= 0 turns limiting off.
func New(perSecond float64, burst int) *Limiter {
	return &Limiter{limit: rate.Limit(perSecond), burst: max(burst, 1), now: time.Now, buckets: map[string]*bucket{}}
}

// enabled reports whether requests are limited at all.
func (l *Limiter) enabled() bool { return l != nil && l.limit > 0 }

// PerSecond and Burst are the configured limits, for messages.
func (l *Limiter) PerSecond() float64 { return float64(l.limit) }
func (l *Limiter) Burst() int         { return l.burst }

// Allow takes one token from key's bucket. When none is left it takes
// nothing and says how long until one is: the client's Retry-After.
func (l *Limiter) Allow(key string) (ok bool, retryAfter time.Duration) {
	if !l.enabled() {
		return true, 0
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	b, found := l.buckets[key]
	if !found {
		b = &bucket{limiter: rate.NewLimiter(l.limit, l.burst)}
		l.buckets[key] = b
	}
	b.lastUsed = now
	r := b.limiter.ReserveN(now, 1)
	if delay := r.DelayFrom(now); delay > 0 {
		r.CancelAt(now) // a refused request costs the client nothing
		return false, delay
	}
	return true, 0
}

// sweep drops the buckets of keys idle long enough to be full again, at
// most once a minute, so memory follows the keys in use.
func (l *Limiter) sweep(now time.Time) {
	if now.Before(l.nextSweep) {
		return
	}
	l.nextSweep = now.Add(time.Minute)
	// A bucket is full again burst/limit after its last use; dropped any
	// sooner, it would come back fuller than it was.
	keep := max(idleAfter, time.Duration(float64(l.burst)/float64(l.limit)*float64(time.Second)))
	for k, b := range l.buckets {
		if now.Sub(b.lastUsed) > keep {
			delete(l.buckets, k)
		}
	}
}

// bucketCount is the number of buckets held, for tests.
func (l *Limiter) bucketCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// RetryAfterSeconds rounds a wait up to whole seconds, at least 1: the
// form of an HTTP Retry-After header.
func RetryAfterSeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}
