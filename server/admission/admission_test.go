package admission

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// recorder is an Observer that keeps what it is told.
type recorder struct {
	mu      sync.Mutex
	refused map[string]int
	waits   int
}

func (r *recorder) Refused(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refused == nil {
		r.refused = map[string]int{}
	}
	r.refused[reason]++
}

func (r *recorder) Waited(time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waits++
}

// waitQueued waits until l has n requests in its queue.
func waitQueued(t *testing.T, l *Limiter, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, q := l.State(); q == n {
			return
		}
		if time.Now().After(deadline) {
			_, q := l.State()
			t.Fatalf("queue holds %d, want %d", q, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestQueueOrder: places freed go to the waiters in the order they came,
// and a request arriving while some wait queues behind them even when it
// could have slipped into the place just freed.
func TestQueueOrder(t *testing.T) {
	l := New(Settings{MaxInFlight: 1, Queue: 10, MaxWait: 10 * time.Second}, nil)
	release, err := l.Acquire(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	order := make(chan int, 5)
	var done sync.WaitGroup
	for i := range 5 {
		done.Add(1)
		go func() {
			defer done.Done()
			rel, err := l.Acquire(context.Background(), int64(i))
			if err != nil {
				t.Error(err)
				return
			}
			order <- i
			rel()
		}()
		waitQueued(t, l, i+1) // each joins the line after the previous one
	}
	release()
	for want := range 5 {
		if got := <-order; got != want {
			t.Fatalf("waiter %d got a place in turn %d", got, want)
		}
	}
	// The last waiter reports its turn before it releases its place: the
	// limiter is empty once every waiter has returned, not before.
	done.Wait()
	if in, q := l.State(); in != 0 || q != 0 {
		t.Errorf("after every release: %d in flight, %d queued, want 0 and 0", in, q)
	}
}

// TestRefusals: past the places and the queue a request is refused at
// once; one account cannot take more than half the queue; a request that
// waits MaxWait is refused; each refusal is observed with its reason.
func TestRefusals(t *testing.T) {
	obs := &recorder{}
	l := New(Settings{MaxInFlight: 2, Queue: 4, MaxWait: 200 * time.Millisecond, AccountInFlight: 2}, obs)
	for range 2 {
		if _, err := l.Acquire(context.Background(), 9); err != nil {
			t.Fatal(err)
		}
	}
	results := make(chan error, 4)
	acquire := func(account int64) {
		_, err := l.Acquire(context.Background(), account)
		results <- err
	}
	// Account 1 may queue 2 (half of 4); its third is refused.
	go acquire(1)
	go acquire(1)
	waitQueued(t, l, 2)
	started := time.Now()
	if _, err := l.Acquire(context.Background(), 1); !isRefusal(err, ReasonAccountShare) {
		t.Errorf("account 1's third waiting request: %v, want a refusal for its share", err)
	}
	go acquire(2)
	go acquire(3)
	waitQueued(t, l, 4)
	if _, err := l.Acquire(context.Background(), 4); !isRefusal(err, ReasonQueueFull) {
		t.Errorf("a request past the full queue: %v, want queue_full", err)
	}
	if took := time.Since(started); took > 100*time.Millisecond {
		t.Errorf("refusals took %s, want them at once", took)
	}
	for range 4 {
		if err := <-results; !isRefusal(err, ReasonWaitedTooLong) {
			t.Errorf("a waiter nobody made room for: %v, want wait_timeout", err)
		}
	}
	if waited := time.Since(started); waited < 200*time.Millisecond {
		t.Errorf("waiters refused after %s, before MaxWait", waited)
	}
	want := map[string]int{ReasonAccountShare: 1, ReasonQueueFull: 1, ReasonWaitedTooLong: 4}
	for reason, n := range want {
		if obs.refused[reason] != n {
			t.Errorf("observed %d refusals for %s, want %d", obs.refused[reason], reason, n)
		}
	}
	if in, q := l.State(); in != 2 || q != 0 {
		t.Errorf("after the timeouts: %d in flight, %d queued, want 2 and 0", in, q)
	}
}

func isRefusal(err error, reason string) bool {
	var s *Saturated
	return errors.As(err, &s) && s.Reason == reason
}

// TestCancelledWaiter: a waiter whose client leaves gives up its spot in
// line and the place goes to the next one.
func TestCancelledWaiter(t *testing.T) {
	obs := &recorder{}
	l := New(Settings{MaxInFlight: 1, Queue: 4, MaxWait: 10 * time.Second}, obs)
	release, _ := l.Acquire(context.Background(), 1)
	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan error, 1)
	go func() { _, err := l.Acquire(ctx, 2); gone <- err }()
	waitQueued(t, l, 1)
	next := make(chan error, 1)
	go func() { _, err := l.Acquire(context.Background(), 3); next <- err }()
	waitQueued(t, l, 2)
	cancel()
	if err := <-gone; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled waiter: %v, want context.Canceled", err)
	}
	release()
	if err := <-next; err != nil {
		t.Errorf("the waiter behind the cancelled one: %v", err)
	}
	if obs.waits != 1 || len(obs.refused) != 0 {
		t.Errorf("observed %d waits and refusals %v, want 1 wait and no refusal", obs.waits, obs.refused)
	}
}

// TestReleaseOnce: releasing twice frees one place, not two.
func TestReleaseOnce(t *testing.T) {
	l := New(Settings{MaxInFlight: 1, Queue: 0, MaxWait: time.Second}, nil)
	release, _ := l.Acquire(context.Background(), 1)
	release()
	release()
	if _, err := l.Acquire(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Acquire(context.Background(), 1); !isRefusal(err, ReasonQueueFull) {
		t.Errorf("second request with one place taken and no queue: %v, want queue_full", err)
	}
}

// TestOff: MaxInFlight 0 admits everything.
func TestOff(t *testing.T) {
	l := New(Settings{}, nil)
	for range 1000 {
		if _, err := l.Acquire(context.Background(), 1); err != nil {
			t.Fatal(err)
		}
	}
}

// TestExpectedWait: once the queue has moved, a request that would wait
// longer than MaxWait behind those already waiting is refused at once.
func TestExpectedWait(t *testing.T) {
	var clock atomic.Int64 // milliseconds
	l := New(Settings{MaxInFlight: 1, Queue: 100, MaxWait: 700 * time.Millisecond}, nil)
	l.now = func() time.Time { return time.UnixMilli(clock.Load()) }
	release, _ := l.Acquire(context.Background(), 1)
	granted := make(chan func(), 10)
	for i := range 3 {
		go func() {
			rel, err := l.Acquire(context.Background(), int64(i))
			if err != nil {
				t.Error(err)
				return
			}
			granted <- rel
		}()
		waitQueued(t, l, i+1)
	}
	// The place passes on every 300 ms from the moment the requests
	// queued (300 ms of waiting is long enough to tell).
	clock.Add(300)
	release()
	clock.Add(300)
	(<-granted)()
	// One waits; a second would wait about 2 × 300 ms, a third 3 × 300.
	go func() {
		rel, err := l.Acquire(context.Background(), 9)
		if err == nil {
			granted <- rel
		}
	}()
	waitQueued(t, l, 2)
	_, err := l.Acquire(context.Background(), 10)
	if !isRefusal(err, ReasonExpectedWait) || !strings.Contains(err.Error(), "the 2 requests waiting ahead of this one would take about 900ms, longer than the 700ms") {
		t.Errorf("a request behind two waiting with a place every 300 ms: %v, want expected_wait", err)
	}
	for range 3 {
		(<-granted)()
	}
}

// TestPace: the line's pace is its best rate of the last half minute or so
// of waiting, each rate an average over about half a second: it follows
// steady gaps exactly, hardly moves for a stall or a short burst, takes a
// quicker pace within about a second and a slower one only within a
// minute or so.
func TestPace(t *testing.T) {
	ms := time.Millisecond
	steady := func(g time.Duration, n int) []time.Duration { return slices.Repeat([]time.Duration{g}, n) }
	for _, tc := range []struct {
		name     string
		gaps     []time.Duration
		min, max time.Duration
	}{
		// Under half of paceSpan of waiting tells nothing yet.
		{"a short wait", []time.Duration{40 * ms, 40 * ms}, 0, 0},
		{"steady quick", steady(ms, 3000), 999 * time.Microsecond, 1001 * time.Microsecond},
		{"steady slow", steady(3*time.Second, 3), 2999 * ms, 3001 * ms},
		// A first gap of a microsecond counts as one handoff, not as a
		// rate of a million a second.
		{"a quick first gap", append([]time.Duration{time.Microsecond}, steady(ms, 300)...), 990 * time.Microsecond, 1005 * time.Microsecond},
		// 250 ms with nothing handed on, after two seconds at 1 ms: the
		// best rate keeps e^(-0.25/30) of its 1,000/s.
		{"one stall", append(steady(ms, 2000), 250*ms), 1005 * time.Microsecond, 1012 * time.Microsecond},
		// Ten handoffs 1 ms apart after a second at 10 ms: 100/s → 120/s.
		{"a short burst", append(steady(10*ms, 100), steady(ms, 10)...), 8200 * time.Microsecond, 8400 * time.Microsecond},
		// From 1 ms to 10 ms: a second later the best rate is still
		// e^(-1/30) of 1,000/s; a minute later e^(-2), 135/s.
		{"a slower pace, a second on", append(steady(ms, 2000), steady(10*ms, 100)...), 1030 * time.Microsecond, 1040 * time.Microsecond},
		{"a slower pace, a minute on", append(steady(ms, 2000), steady(10*ms, 6000)...), 7300 * time.Microsecond, 7500 * time.Microsecond},
		// From 10 ms to 1 ms: two seconds on, the rate is 1,000/s less
		// e^-4 of the 900/s difference.
		{"a quicker pace, two seconds on", append(steady(10*ms, 200), steady(ms, 2000)...), 1010 * time.Microsecond, 1025 * time.Microsecond},
		// A second handoff at the same instant adds 1/paceSpan, 2/s, to
		// the 100/s of half a second at 10 ms.
		{"two at once", append(steady(10*ms, 50), 0), 9650 * time.Microsecond, 9750 * time.Microsecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var clock time.Duration
			l := New(Settings{MaxInFlight: 1, Queue: 1, MaxWait: time.Minute}, nil)
			l.now = func() time.Time { return time.Unix(0, 0).Add(clock) }
			l.busySince = l.now() // somebody waits throughout
			for _, g := range tc.gaps {
				clock += g
				l.timeHandoffLocked(clock)
			}
			if got := l.paceLocked(l.now()); got < tc.min || got > tc.max {
				t.Errorf("pace %s, want %s to %s", got, tc.min, tc.max)
			}
		})
	}
}

// TestPaceOnTheBusyClock: the line's pace is timed only while somebody
// waits. A place handed on a millisecond after each request queued, with
// nobody waiting for 5 ms between, is a pace of 1 ms, not 6, though no
// stretch of waiting lasts long enough to be timed by itself; and minutes
// with nobody waiting leave the pace as it was, so a burst after them is
// not refused on a rate faded by the quiet.
func TestPaceOnTheBusyClock(t *testing.T) {
	var clock atomic.Int64 // microseconds
	// The bound is long on the real clock too, which the waits below run
	// on: with a bound of 50 ms, 40 goroutines queueing one by one under
	// the race detector outlasted it.
	l := New(Settings{MaxInFlight: 1, Queue: 100, MaxWait: 10 * time.Second}, nil)
	l.now = func() time.Time { return time.UnixMicro(clock.Load()) }
	granted := make(chan func(), 40)
	acquire := func() {
		rel, err := l.Acquire(context.Background(), 2)
		if err != nil {
			t.Error(err)
			rel = func() {}
		}
		granted <- rel
	}
	pace := func() time.Duration {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.paceLocked(l.now())
	}
	held, _ := l.Acquire(context.Background(), 1)
	for range 300 {
		clock.Add(5000)
		go acquire()
		waitQueued(t, l, 1)
		clock.Add(1000)
		held()
		held = <-granted
	}
	held()
	if got := pace(); got < 999*time.Microsecond || got > 1001*time.Microsecond {
		t.Errorf("a place a millisecond after each request queued: pace %s, want 1 ms", got)
	}
	// Faded by e every 30 s of the wall's clock, the rate would be 1.27/s
	// 200 s later, and the burst's 13th request would expect to wait
	// 13 × 787 ms, past the 10 s bound.
	clock.Add((200 * time.Second).Microseconds())
	if got := pace(); got < 999*time.Microsecond || got > 1001*time.Microsecond {
		t.Errorf("200 s with nobody waiting: pace %s, want 1 ms still", got)
	}
	held, _ = l.Acquire(context.Background(), 1)
	for i := range 40 {
		go acquire()
		waitQueued(t, l, i+1)
	}
	held()
	for range 40 {
		(<-granted)()
	}
}

// TestBusyClock: the busy clock runs while somebody waits and stands
// still otherwise, whether the last waiter leaves the line with a place
// or without one (cancelled; a waiter refused after MaxWait leaves the
// same way): a clock left running after the line emptied would fade the
// best rate through the quiet that follows.
func TestBusyClock(t *testing.T) {
	for _, leaves := range []string{"given a place", "cancelled"} {
		t.Run(leaves, func(t *testing.T) {
			var clock atomic.Int64 // milliseconds
			l := New(Settings{MaxInFlight: 1, Queue: 4, MaxWait: time.Minute}, nil)
			l.now = func() time.Time { return time.UnixMilli(clock.Load()) }
			release, _ := l.Acquire(context.Background(), 1)
			defer release()
			clock.Add(1000) // a place is held, nobody waits
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			left := make(chan func(), 1)
			go func() {
				rel, err := l.Acquire(ctx, 2)
				if err != nil {
					rel = func() {}
				}
				left <- rel
			}()
			waitQueued(t, l, 1)
			clock.Add(300)
			switch leaves {
			case "given a place":
				release()
			case "cancelled":
				cancel()
			}
			(<-left)()
			clock.Add(time.Minute.Milliseconds())
			l.mu.Lock()
			busy := l.busyLocked(l.now())
			l.mu.Unlock()
			if busy != 300*time.Millisecond {
				t.Errorf("busy clock %s, want the 300 ms somebody waited", busy)
			}
		})
	}
}

// TestStalledPaceNotCounted: a pace so slow that the line would take
// fewer than two requests within MaxWait (a stall: one place in 5 s) does
// not count, so the next requests to wait are not refused one by one on
// an estimate that nothing would correct.
func TestStalledPaceNotCounted(t *testing.T) {
	var clock atomic.Int64 // milliseconds
	l := New(Settings{MaxInFlight: 1, Queue: 10, MaxWait: 100 * time.Millisecond}, nil)
	l.now = func() time.Time { return time.UnixMilli(clock.Load()) }
	release, _ := l.Acquire(context.Background(), 1)
	granted := make(chan func(), 2)
	for i := range 2 {
		go func() {
			rel, err := l.Acquire(context.Background(), int64(i))
			if err != nil {
				t.Error(err)
				return
			}
			granted <- rel
		}()
		waitQueued(t, l, i+1)
	}
	release()
	clock.Add(5000) // a stall: the place moved on after 5 s
	(<-granted)()
	(<-granted)() // the line is empty again
	hold, _ := l.Acquire(context.Background(), 1)
	defer hold()
	waited := make(chan error, 1)
	go func() {
		rel, err := l.Acquire(context.Background(), 2)
		if err == nil {
			rel()
		}
		waited <- err
	}()
	waitQueued(t, l, 1)
	hold()
	if err := <-waited; err != nil {
		t.Errorf("first waiter of a new busy spell: %v, want a place", err)
	}
}

// TestAccountShareOfPlaces: one account holds at most AccountInFlight
// places, even with places free; its next request waits for one of its own
// to end, while other accounts' requests take the free places at once.
func TestAccountShareOfPlaces(t *testing.T) {
	l := New(Settings{MaxInFlight: 4, Queue: 10, MaxWait: 10 * time.Second, AccountInFlight: 2}, nil)
	var mine []func()
	for range 2 {
		rel, err := l.Acquire(context.Background(), 1)
		if err != nil {
			t.Fatal(err)
		}
		mine = append(mine, rel)
	}
	third := make(chan func(), 1)
	go func() {
		rel, err := l.Acquire(context.Background(), 1)
		if err != nil {
			t.Error(err)
		}
		third <- rel
	}()
	waitQueued(t, l, 1)
	for account := range int64(2) {
		if _, err := l.Acquire(context.Background(), 2+account); err != nil {
			t.Fatalf("another account's request with two places free: %v", err)
		}
	}
	if in, q := l.State(); in != 4 || q != 1 {
		t.Fatalf("%d in flight and %d queued, want 4 and 1", in, q)
	}
	mine[0]()
	(<-third)()
	if in, q := l.State(); in != 3 || q != 0 {
		t.Errorf("after account 1 passed its place on and ended: %d in flight and %d queued, want 3 and 0", in, q)
	}
}

// TestFreedPlaceSkipsBlockedWaiter: a place freed goes to the oldest waiter
// whose account may take one; the waiter of an account at its share keeps
// its spot and gets the next place its own account frees.
func TestFreedPlaceSkipsBlockedWaiter(t *testing.T) {
	l := New(Settings{MaxInFlight: 2, Queue: 10, MaxWait: 10 * time.Second, AccountInFlight: 1}, nil)
	releaseOne, _ := l.Acquire(context.Background(), 1)
	releaseTwo, _ := l.Acquire(context.Background(), 2)
	got := make(chan int64, 2)
	for i, account := range []int64{1, 3} {
		go func() {
			rel, err := l.Acquire(context.Background(), account)
			if err != nil {
				t.Error(err)
				return
			}
			got <- account
			<-t.Context().Done()
			rel()
		}()
		waitQueued(t, l, i+1)
	}
	releaseTwo()
	if first := <-got; first != 3 {
		t.Fatalf("account 2's place went to account %d, want 3 (account 1 already holds its one)", first)
	}
	releaseOne()
	if second := <-got; second != 1 {
		t.Fatalf("account 1's place went to account %d, want 1", second)
	}
}

// TestAccountBusyTimeout: a request that waited MaxWait behind its own
// account's places is refused with its own reason.
func TestAccountBusyTimeout(t *testing.T) {
	obs := &recorder{}
	l := New(Settings{MaxInFlight: 4, Queue: 10, MaxWait: 50 * time.Millisecond, AccountInFlight: 1}, obs)
	release, _ := l.Acquire(context.Background(), 1)
	defer release()
	if _, err := l.Acquire(context.Background(), 1); !isRefusal(err, ReasonAccountBusy) {
		t.Errorf("second request of an account at its share: %v, want %s", err, ReasonAccountBusy)
	}
	if obs.refused[ReasonAccountBusy] != 1 {
		t.Errorf("observed refusals %v, want one %s", obs.refused, ReasonAccountBusy)
	}
	if in, q := l.State(); in != 1 || q != 0 {
		t.Errorf("%d in flight and %d queued, want 1 and 0", in, q)
	}
}

// TestDefaultAccountShare: without a setting one account may hold half
// the places, at least one, and never more than all of them.
func TestDefaultAccountShare(t *testing.T) {
	for _, c := range []struct{ max, setting, want int }{{32, 0, 16}, {1, 0, 1}, {3, 0, 1}, {8, 8, 8}, {8, 20, 8}} {
		l := New(Settings{MaxInFlight: c.max, AccountInFlight: c.setting}, nil)
		if got := l.Settings().AccountInFlight; got != c.want {
			t.Errorf("MaxInFlight %d, AccountInFlight %d: share %d, want %d", c.max, c.setting, got, c.want)
		}
	}
}

// TestExpectedWaitSkipsBlocked: the waiters of an account at its share are
// not ahead of another account's request (the place freed skips them), so
// they do not get it refused; that account's own next request is judged
// by its own line and the pace of its own places.
func TestExpectedWaitSkipsBlocked(t *testing.T) {
	var clock atomic.Int64 // milliseconds
	l := New(Settings{MaxInFlight: 2, Queue: 100, MaxWait: time.Second, AccountInFlight: 1}, nil)
	l.now = func() time.Time { return time.UnixMilli(clock.Load()) }
	releaseOne, _ := l.Acquire(context.Background(), 1)
	releaseTwo, _ := l.Acquire(context.Background(), 2)
	granted := make(chan func(), 10)
	acquire := func(account int64) {
		rel, err := l.Acquire(context.Background(), account)
		if err != nil {
			t.Error(err)
			return
		}
		granted <- rel
	}
	// Account 1's three join while the pace is unknown, and stay blocked
	// behind its place; the places of accounts 2 and 3 skip them.
	for i := range 3 {
		go acquire(1)
		waitQueued(t, l, i+1)
	}
	go acquire(3)
	waitQueued(t, l, 4)
	go acquire(4)
	waitQueued(t, l, 5)
	clock.Add(300)
	releaseTwo() // to account 3, 300 ms after the line filled
	clock.Add(300)
	(<-granted)() // to account 4: one place every 300 ms
	releaseFour := <-granted
	// Ahead of account 5 only account 1's three, which a place skips: it
	// expects 300 ms, not 4 × 300.
	go acquire(5)
	waitQueued(t, l, 4)
	_, err := l.Acquire(context.Background(), 1)
	if !isRefusal(err, ReasonExpectedWait) || !strings.Contains(err.Error(), "the 3 requests waiting ahead of this one would take about 2.4s") {
		t.Errorf("account 1's fourth waiting request: %v, want expected_wait for its own 3 at one place every 600 ms", err)
	}
	releaseFour()
	(<-granted)() // account 5's, with no other to take it
	releaseOne()
	for range 3 {
		(<-granted)()
	}
}

// TestQueueBytes: the messages held by waiting requests stay within
// QueueBytes (a request that would pass it is refused at once, and the
// bytes of one that leaves the line count no more); a message is measured
// only when its request has to wait.
func TestQueueBytes(t *testing.T) {
	obs := &recorder{}
	l := New(Settings{MaxInFlight: 1, Queue: 10, MaxWait: 10 * time.Second, QueueBytes: 10 << 20}, obs)
	var measured atomic.Int32
	size := func(n int64) func() int64 {
		return func() int64 { measured.Add(1); return n << 20 }
	}
	release, err := l.AcquireHolding(context.Background(), 1, size(6))
	if err != nil || measured.Load() != 0 {
		t.Fatalf("a request finding a free place: %v, measured %d times, want a place unmeasured", err, measured.Load())
	}
	ctx, cancel := context.WithCancel(context.Background())
	results := make(chan error, 3)
	go func() { results <- acquireAndEnd(ctx, l, 2, size(6)) }()
	waitQueued(t, l, 1)
	if _, err := l.AcquireHolding(context.Background(), 3, size(6)); !isRefusal(err, ReasonQueueBytes) ||
		!strings.Contains(err.Error(), "the requests waiting hold 6.0 MiB, and this one's 6.0 MiB would take them past the 10.0 MiB") {
		t.Errorf("6 MiB more behind 6 MiB waiting, 10 MiB allowed: %v, want queue_bytes", err)
	}
	go func() { results <- acquireAndEnd(context.Background(), l, 4, nil) }()
	waitQueued(t, l, 2) // nothing held: no bytes counted
	cancel()
	if err := <-results; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled waiter: %v", err)
	}
	go func() { results <- acquireAndEnd(context.Background(), l, 5, size(9)) }()
	waitQueued(t, l, 2) // the cancelled one's 6 MiB were given back
	release()
	for range 2 {
		if err := <-results; err != nil {
			t.Errorf("waiter: %v", err)
		}
	}
	if obs.refused[ReasonQueueBytes] != 1 {
		t.Errorf("refusals %v, want one queue_bytes", obs.refused)
	}
}

// acquireAndEnd takes a place and gives it back at once.
func acquireAndEnd(ctx context.Context, l *Limiter, account int64, size func() int64) error {
	release, err := l.AcquireHolding(ctx, account, size)
	if err == nil {
		release()
	}
	return err
}

// TestResume: a request taking a place again waits in line however full
// the line and however long, and only its context ends the wait.
func TestResume(t *testing.T) {
	l := New(Settings{MaxInFlight: 1, Queue: 0, MaxWait: 10 * time.Millisecond}, nil)
	release, _ := l.Acquire(context.Background(), 1)
	resumed := make(chan error, 1)
	go func() {
		rel, err := l.Resume(context.Background(), 2)
		if err == nil {
			rel()
		}
		resumed <- err
	}()
	waitQueued(t, l, 1)
	if _, err := l.Acquire(context.Background(), 3); !isRefusal(err, ReasonQueueFull) {
		t.Errorf("a new request with a queue of 0: %v, want queue_full", err)
	}
	time.Sleep(50 * time.Millisecond) // past MaxWait
	release()
	if err := <-resumed; err != nil {
		t.Errorf("resumed request: %v, want the place", err)
	}
	hold, _ := l.Acquire(context.Background(), 1)
	defer hold()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _, err := l.Resume(ctx, 2); resumed <- err }()
	waitQueued(t, l, 1)
	cancel()
	if err := <-resumed; !errors.Is(err, context.Canceled) {
		t.Errorf("resumed request whose client left: %v, want context.Canceled", err)
	}
}

// TestExpectedWaitByAccountPart: an account holding its share of places
// whose requests get most of the recent handoffs is judged by that part,
// not by its share of the places: here every handoff, one every 10 ms,
// goes to account 1's waiters while account 2 holds its two places
// throughout, so 60 waiting ahead take 610 ms, within the second a
// request may wait (by its half of the places, 1.22 s: refused).
func TestExpectedWaitByAccountPart(t *testing.T) {
	var clock atomic.Int64 // milliseconds
	l := New(Settings{MaxInFlight: 4, Queue: 1000, MaxWait: time.Second, AccountInFlight: 2}, nil)
	l.now = func() time.Time { return time.UnixMilli(clock.Load()) }
	held, _ := l.Acquire(context.Background(), 1)
	other, _ := l.Acquire(context.Background(), 1)
	twoA, _ := l.Acquire(context.Background(), 2)
	twoB, _ := l.Acquire(context.Background(), 2)
	granted := make(chan func(), 200)
	refused := make(chan error, 1)
	acquire := func() {
		rel, err := l.Acquire(context.Background(), 1)
		if err != nil {
			refused <- err
			return
		}
		granted <- rel
	}
	for i := range 100 {
		go acquire()
		waitQueued(t, l, i+1)
	}
	for range 40 {
		clock.Add(10)
		held()
		held = <-granted
	}
	go acquire()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		select {
		case err := <-refused:
			t.Fatalf("account 1's request behind 60 of its own, each handed a place 10 ms after the last: %v, want it to wait", err)
		default:
		}
		if _, q := l.State(); q == 61 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("account 1's request neither waits nor is refused")
		}
	}
	twoA()
	twoB()
	for range 61 {
		held()
		held = <-granted
	}
	held()
	other()
}
