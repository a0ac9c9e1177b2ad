package ratelimit

import (
	"testing"
	"time"
)

func TestAllow(t *testing.T) {
	clock := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	l := New(2, 3) // 2 a second, 3 at once
	l.now = func() time.Time { return clock }

	for i := range 3 {
		if ok, _ := l.Allow("a"); !ok {
			t.Fatalf("request %d of the burst refused", i+1)
		}
	}
	ok, wait := l.Allow("a")
	if ok || wait != 500*time.Millisecond {
		t.Fatalf("past the burst: ok=%v wait=%v, want refused for 500ms", ok, wait)
	}
	// Another key has a bucket of its own.
	for i := range 3 {
		if ok, _ := l.Allow("b"); !ok {
			t.Fatalf("key b, request %d refused while a was limited", i+1)
		}
	}
	// A refused request takes no token: after the wait one is there.
	for range 5 {
		l.Allow("a")
	}
	clock = clock.Add(500 * time.Millisecond)
	if ok, _ := l.Allow("a"); !ok {
		t.Fatal("refused after waiting the Retry-After; refused requests must not use up tokens")
	}
	if ok, _ := l.Allow("a"); ok {
		t.Fatal("a second request within the same half second was allowed")
	}
}

func TestDisabled(t *testing.T) {
	l := New(0, 0)
	for range 1000 {
		if ok, _ := l.Allow("a"); !ok {
			t.Fatal("a disabled limiter refused a request")
		}
	}
	if l.bucketCount() != 0 {
		t.Errorf("a disabled limiter holds %d buckets", l.bucketCount())
	}
}

func TestIdleBucketsAreDropped(t *testing.T) {
	clock := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	l := New(1, 1)
	l.now = func() time.Time { return clock }
	l.Allow("a")
	l.Allow("b")
	clock = clock.Add(idleAfter + 2*time.Minute)
	l.Allow("c")
	if l.bucketCount() != 1 {
		t.Errorf("%d buckets after the others went idle, want 1", l.bucketCount())
	}
}

func TestSlowBucketsAreKeptUntilFull(t *testing.T) {
	clock := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	l := New(0.1, 100) // full again 1,000 s after its last use
	l.now = func() time.Time { return clock }
	for range 100 {
		l.Allow("a")
	}
	clock = clock.Add(idleAfter + 2*time.Minute) // 840 s: 84 tokens back
	l.Allow("b")
	if l.bucketCount() != 2 {
		t.Fatalf("%d buckets: a's bucket was dropped before it was full again", l.bucketCount())
	}
	clock = clock.Add(5 * time.Minute)
	l.Allow("b")
	if l.bucketCount() != 1 {
		t.Errorf("%d buckets once a's was full again, want 1", l.bucketCount())
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	for _, tt := range []struct {
		in   time.Duration
		want int
	}{{0, 1}, {time.Millisecond, 1}, {time.Second, 1}, {1001 * time.Millisecond, 2}, {90 * time.Second, 90}} {
		if got := RetryAfterSeconds(tt.in); got != tt.want {
			t.Errorf("RetryAfterSeconds(%v) = %d, want %d", tt.in, got, tt.want)
		}
	}
}
