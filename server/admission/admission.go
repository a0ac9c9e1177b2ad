// Package admission bounds the API work a server does at once. Past a few
// requests per core and per database connection, more concurrency only
// makes every request slower: they queue for the CPU and the connection
// pool anyway, and database/sql hands a freed connection to a random
// waiter, so the unlucky ones wait without bound. A Limiter lets at most a
// fixed number of requests work, keeps a bounded first-in first-out line of
// the next ones, and refuses the rest at once, so that under overload the
// requests it serves keep a bounded latency and the others learn quickly
// that they should come back later.
package admission

import (
	"container/list"
	"context"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"
)

// Settings are a Limiter's bounds.
type Settings struct {
	// MaxInFlight is how many requests may work at once; 0 turns admission
	// control off.
	MaxInFlight int
	// Queue is how many more may wait for a place, in arrival order.
	Queue int
	// MaxWait is the longest a request waits in the queue before it is
	// refused.
	MaxWait time.Duration
	// AccountInFlight is how many of the places one account may hold at
	// once; 0 is half of MaxInFlight (at least one). Without it one
	// account's slow requests could hold every place and starve the others.
	AccountInFlight int
	// QueueBytes bounds the bytes of the requests in the queue that came
	// with their message already read (AcquireHolding); 0 is no bound.
	QueueBytes int64
}

// Reasons a request is refused, as the metrics label them.
const (
	ReasonQueueFull     = "queue_full"    // every place and the whole queue were taken
	ReasonAccountShare  = "account_share" // the account already held its share of the queue
	ReasonExpectedWait  = "expected_wait" // the requests ahead would take longer than MaxWait
	ReasonWaitedTooLong = "wait_timeout"  // it waited MaxWait without getting a place
	// ReasonAccountBusy: it waited MaxWait while its own account held all
	// the places one account may (Settings.AccountInFlight).
	ReasonAccountBusy = "account_in_progress"
	// ReasonQueueBytes: the messages of the requests waiting already held
	// Settings.QueueBytes with this one's.
	ReasonQueueBytes = "queue_bytes"
)

// Reasons lists every refusal reason, for metrics that start at zero.
var Reasons = []string{ReasonQueueFull, ReasonAccountShare, ReasonExpectedWait, ReasonWaitedTooLong, ReasonAccountBusy, ReasonQueueBytes}

// RetryAfter is the wait a refused client is told to leave before trying
// again: a saturated server is not going to have room a few milliseconds
// later, and one second is the least an HTTP Retry-After can say.
const RetryAfter = time.Second

// Observer is told what the Limiter does, for the metrics. Either method
// may be called concurrently.
type Observer interface {
	Refused(reason string)
	Waited(d time.Duration)
}

// Saturated is the error of a refused request.
type Saturated struct {
	Reason string
	// Message says what was full, for the client.
	Message string
}

func (e *Saturated) Error() string {
	return fmt.Sprintf("the server is saturated: %s; retry after %d s", e.Message, int(RetryAfter.Seconds()))
}

// logEvery bounds the refusal log to one line per interval: under overload
// a line per refusal would add to the load it reports.
const logEvery = 10 * time.Second

// Limiter admits requests. The zero value is not usable; a nil *Limiter
// admits everything.
type Limiter struct {
	s          Settings
	perAccount int
	observe    Observer
	now        func() time.Time

	mu       sync.Mutex
	inFlight int
	waiting  *list.List // of *waiter, oldest first
	queuedBy map[int64]int
	// inFlightBy counts each account's places. blocked counts the waiters
	// whose account holds all it may: a freed place skips them, so the
	// waiters a place can go to are waiting.Len()-blocked.
	inFlightBy map[int64]int
	blocked    int
	// queuedBytes is what the waiters' messages hold (AcquireHolding).
	queuedBytes int64
	// The line's pace is timed on a clock of its own, the busy clock,
	// which runs only while somebody waits (busyLocked): places are handed
	// on only then, and the time nobody waits says nothing of how fast
	// they free up. busy is the time somebody waited up to busySince, when
	// the queue last filled; busySince is zero while the queue is empty.
	// Under a load that keeps the places just full, the queue empties and
	// fills again hundreds of times a second (a quick run of bench scenario
	// 2, 32 connections of one account: 60 to 280 times a second, none of
	// the stretches as long as 50 ms), so the pace has to carry from one
	// stretch of waiting to the next: timed stretch by stretch, it was
	// hardly ever timed at all, and the line was judged by a rate from
	// minutes before.
	busy      time.Duration
	busySince time.Time
	// handoffRate is how many places a second of the busy clock have
	// lately been handed to waiters (timeHandoffLocked): the queue moves
	// that fast. lastHandoff is the last handoff on the busy clock.
	handoffRate float64
	lastHandoff time.Duration
	// peakRate is the highest handoffRate lately, as of peakAt on the busy
	// clock, and forgotten slowly, by e every peakSpan of it: the line is
	// judged by it (paceLocked).
	peakRate float64
	peakAt   time.Duration
	// handoffs counts the places handed to waiters lately, and
	// handoffsTo those handed to each account holding places, both faded
	// by e every paceSpan: an account's part of the recent handoffs is how
	// often a place of its own frees up (placeShareLocked).
	handoffs   fadedCount
	handoffsTo map[int64]*fadedCount
	// refusedSince counts the refusals since the last log line, lastLog
	// is when that line was written.
	refusedSince int
	lastLog      time.Time
}

// waiter is a request in the queue. ready is closed when a finishing
// request hands it its place.
type waiter struct {
	account int64
	bytes   int64
	ready   chan struct{}
	granted bool
	elem    *list.Element
}

// New returns a Limiter with the settings, or nil (admit everything) when
// s.MaxInFlight is 0. observe may be nil.
//
// One account may hold at most half the queue (at least one place): an
// integration flooding the service fills its own half and gets refused,
// while the requests of every other account still find room behind it.
// Places go the same way (Settings.AccountInFlight): a waiter whose account
// holds its share keeps its spot in line, and the place freed goes to the
// first waiter behind it whose account may take one.
func New(s Settings, observe Observer) *Limiter {
	if s.MaxInFlight <= 0 {
		return nil
	}
	if s.AccountInFlight <= 0 {
		s.AccountInFlight = max(1, s.MaxInFlight/2)
	}
	s.AccountInFlight = min(s.AccountInFlight, s.MaxInFlight)
	return &Limiter{s: s, perAccount: max(1, s.Queue/2), observe: observe, now: time.Now,
		waiting: list.New(), queuedBy: map[int64]int{}, inFlightBy: map[int64]int{},
		handoffsTo: map[int64]*fadedCount{}}
}

// Settings are the bounds the Limiter was made with.
func (l *Limiter) Settings() Settings {
	if l == nil {
		return Settings{}
	}
	return l.s
}

// State is how many requests work and wait now.
func (l *Limiter) State() (inFlight, queued int) {
	if l == nil {
		return 0, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.inFlight, l.waiting.Len()
}

// Acquire takes a place for a request of account, waiting in line when
// every place is taken. It returns the function that gives the place back
// (call it once the request's work is done), a *Saturated error when the
// request is refused, or ctx's error when ctx ends while it waits.
func (l *Limiter) Acquire(ctx context.Context, account int64) (release func(), err error) {
	return l.AcquireHolding(ctx, account, nil)
}

// AcquireHolding is Acquire for a request that holds its message already
// (gRPC decodes a call's message before anything else runs): size, called
// only when the request would have to wait, is the message's size, which
// counts against Settings.QueueBytes while it waits. nil is nothing held.
func (l *Limiter) AcquireHolding(ctx context.Context, account int64, size func() int64) (release func(), err error) {
	if l == nil {
		return func() {}, nil
	}
	l.mu.Lock()
	if l.takeFreeLocked(account) {
		l.mu.Unlock()
		return l.releaser(account), nil
	}
	w := &waiter{account: account, ready: make(chan struct{})}
	if size != nil && l.s.QueueBytes > 0 {
		// Measuring a large message takes a while: not with the lock.
		l.mu.Unlock()
		w.bytes = size()
		l.mu.Lock()
		if l.takeFreeLocked(account) {
			l.mu.Unlock()
			return l.releaser(account), nil
		}
	}
	now := l.now()
	if refusal := l.queueRefusal(w, now); refusal != nil {
		l.noteRefusalLocked(refusal.Reason)
		l.mu.Unlock()
		return nil, refusal
	}
	l.enqueueLocked(w, now)
	l.mu.Unlock()
	return l.wait(ctx, w, l.s.MaxWait)
}

// Resume takes a place again for a request that already had one and gave
// it back while it waited on its client (a streamed answer): it waits in
// line like any request, but is never refused, as its answer has started;
// only ctx ends its wait.
func (l *Limiter) Resume(ctx context.Context, account int64) (release func(), err error) {
	if l == nil {
		return func() {}, nil
	}
	l.mu.Lock()
	if l.takeFreeLocked(account) {
		l.mu.Unlock()
		return l.releaser(account), nil
	}
	w := &waiter{account: account, ready: make(chan struct{})}
	l.enqueueLocked(w, l.now())
	l.mu.Unlock()
	return l.wait(ctx, w, 0)
}

// enqueueLocked puts w at the end of the line, starting the busy clock
// when the line was empty. l.mu is held.
func (l *Limiter) enqueueLocked(w *waiter, now time.Time) {
	if l.waiting.Len() == 0 {
		l.busySince = now
	}
	l.queuedBytes += w.bytes
	w.elem = l.waiting.PushBack(w)
	l.queuedBy[w.account]++
	if l.atShareLocked(w.account) {
		l.blocked++
	}
}

// takeFreeLocked takes a free place for account, if there is one it may
// take. A free place means no waiter may take it (a freed place goes to
// the first one that may), so the request passes nobody. l.mu is held.
func (l *Limiter) takeFreeLocked(account int64) bool {
	if l.inFlight < l.s.MaxInFlight && !l.atShareLocked(account) {
		l.inFlight++
		l.holdLocked(account)
		return true
	}
	return false
}

// atShareLocked is true when account holds every place one account may.
// l.mu is held.
func (l *Limiter) atShareLocked(account int64) bool {
	return l.inFlightBy[account] >= l.s.AccountInFlight
}

// holdLocked counts a place taken by account; its waiters become blocked
// when it reaches its share. l.mu is held.
func (l *Limiter) holdLocked(account int64) {
	if l.inFlightBy[account]++; l.atShareLocked(account) {
		l.blocked += l.queuedBy[account]
	}
}

// unholdLocked counts a place account gave back. l.mu is held.
func (l *Limiter) unholdLocked(account int64) {
	if l.atShareLocked(account) {
		l.blocked -= l.queuedBy[account]
	}
	if l.inFlightBy[account]--; l.inFlightBy[account] <= 0 {
		delete(l.inFlightBy, account)
		delete(l.handoffsTo, account)
	}
}

// queueRefusal is the error of a request that may not join the queue, or
// nil when it may. l.mu is held.
func (l *Limiter) queueRefusal(w *waiter, now time.Time) *Saturated {
	account := w.account
	switch {
	case l.waiting.Len() >= l.s.Queue:
		return &Saturated{Reason: ReasonQueueFull, Message: fmt.Sprintf(
			"%d requests in progress and %d waiting, the most it takes", l.inFlight, l.waiting.Len())}
	case l.queuedBy[account] >= l.perAccount:
		return &Saturated{Reason: ReasonAccountShare, Message: fmt.Sprintf(
			"this account already has %d requests waiting, the most one account may", l.queuedBy[account])}
	case w.bytes > 0 && l.queuedBytes+w.bytes > l.s.QueueBytes:
		return &Saturated{Reason: ReasonQueueBytes, Message: fmt.Sprintf(
			"the requests waiting hold %s, and this one's %s would take them past the %s they may",
			mebibytes(l.queuedBytes), mebibytes(w.bytes), mebibytes(l.s.QueueBytes))}
	}
	// A request that would wait past MaxWait is refused now rather than
	// then: the client learns at once, and the line holds only requests
	// that will be served, however slowly the places free up. Only the
	// waiters a place can go to are ahead of it; one whose account holds
	// its share waits for its own account's places (placeShareLocked).
	ahead, every := l.waiting.Len()-l.blocked, l.paceLocked(now)
	if l.atShareLocked(account) {
		ahead = l.queuedBy[account]
		every = time.Duration(float64(every) / l.placeShareLocked(account, now))
	}
	if expected := time.Duration(ahead+1) * every; expected > l.s.MaxWait {
		return &Saturated{Reason: ReasonExpectedWait, Message: fmt.Sprintf(
			"the %d requests waiting ahead of this one would take about %s, longer than the %s a request may wait",
			ahead, expected.Round(time.Millisecond), l.s.MaxWait)}
	}
	return nil
}

// mebibytes writes n bytes in MiB with one decimal.
func mebibytes(n int64) string {
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// wait blocks until w gets a place, limit passes (0: no limit) or ctx
// ends.
func (l *Limiter) wait(ctx context.Context, w *waiter, limit time.Duration) (func(), error) {
	started := l.now()
	var expired <-chan time.Time // none: no limit
	if limit > 0 {
		timer := time.NewTimer(limit)
		defer timer.Stop()
		expired = timer.C
	}
	var failure error
	select {
	case <-w.ready:
	case <-expired:
		failure = l.timedOut(w.account)
	case <-ctx.Done():
		failure = ctx.Err()
	}
	if failure != nil {
		l.mu.Lock()
		// A place handed over as the wait ended is the request's all the
		// same: taking it is better than passing it on late.
		if !w.granted {
			l.dequeueLocked(w, l.now())
			if s, ok := failure.(*Saturated); ok {
				l.noteRefusalLocked(s.Reason)
			}
			l.mu.Unlock()
			return nil, failure
		}
		l.mu.Unlock()
	}
	if l.observe != nil {
		l.observe.Waited(l.now().Sub(started))
	}
	return l.releaser(w.account), nil
}

// timedOut is the refusal of a request of account that waited MaxWait.
func (l *Limiter) timedOut(account int64) *Saturated {
	l.mu.Lock()
	busy := l.atShareLocked(account)
	l.mu.Unlock()
	if busy {
		return &Saturated{Reason: ReasonAccountBusy, Message: fmt.Sprintf(
			"this request waited %s while this account held the %d places in progress one account may",
			l.s.MaxWait, l.s.AccountInFlight)}
	}
	return &Saturated{Reason: ReasonWaitedTooLong, Message: fmt.Sprintf(
		"this request waited %s for one of the %d places in progress", l.s.MaxWait, l.s.MaxInFlight)}
}

// releaser is the release function of a place of account: it hands the
// place to the oldest waiter whose account may take one, or frees it.
// Calls after the first do nothing.
func (l *Limiter) releaser(account int64) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.unholdLocked(account)
			w := l.nextWaiterLocked()
			if w == nil {
				// Nobody a place can go to waits (a blocked waiter gets
				// its own account's next place).
				l.inFlight--
				return
			}
			now := l.now()
			l.timeHandoffLocked(l.busyLocked(now))
			l.countHandoffLocked(w.account, now)
			l.dequeueLocked(w, now)
			l.holdLocked(w.account)
			w.granted = true
			close(w.ready)
		})
	}
}

// nextWaiterLocked is the oldest waiter whose account may take a place, or
// nil. Those skipped keep their spot. l.mu is held.
func (l *Limiter) nextWaiterLocked() *waiter {
	if l.waiting.Len() == l.blocked {
		return nil
	}
	for e := l.waiting.Front(); e != nil; e = e.Next() {
		if w := e.Value.(*waiter); !l.atShareLocked(w.account) {
			return w
		}
	}
	return nil
}

// paceSpan is how much of the recent past the pace of the line averages:
// the handoffs of the last paceSpan weigh the most, older ones less and
// less (by e every paceSpan). An average over a fixed number of handoffs
// fails both ways at a thousand a second: over the last eight, a burst of
// quick reads swung the expected wait of the whole line, and the line
// took requests it then kept past the bound; and any average of the gaps
// themselves lets one stall of the machine outweigh a thousand quick
// handoffs, which refused a whole line that was moving fine.
const paceSpan = 500 * time.Millisecond

// timeHandoffLocked counts a handoff happening at the busy clock's
// reading at in the rate of the line. l.mu is held.
//
// The rate is an average of each gap's own rate (1/gap) weighted by the
// time it covers: the old rate keeps the weight e^(-gap/paceSpan). For
// gaps far shorter than paceSpan that adds about 1/paceSpan per handoff,
// a count of the recent handoffs; a gap of paceSpan or more, with nothing
// handed on meanwhile, is most of the rate by itself. The busy clock
// starts at 0 with a rate of 0, so the line's first moments weigh less
// than they should: divided by the weight they do have,
// 1 - e^(-at/paceSpan), steady gaps give exactly their own rate. The best
// rate takes in the rate only once the line has been timed for half of
// paceSpan: one quick gap says nothing of the line's pace, and the best
// rate would keep it for a minute.
//
// A gap that starts when a request finds the line empty is only the rest
// of a gap between two releases, so where the line empties often the rate
// comes out above the line's (a quick run of bench scenario 2: 9,000 to
// 10,500 a second, where 7,900 to 8,800 were served): the line then takes
// a little more than it serves within MaxWait, and those are refused
// after waiting it, as when the line has slowed down (peakSpan).
func (l *Limiter) timeHandoffLocked(at time.Duration) {
	gap := max(at-l.lastHandoff, 0).Seconds()
	span := paceSpan.Seconds()
	if gap == 0 { // two at once: the limit of the average as the gap shrinks
		l.handoffRate += 1 / span
	} else {
		keep := math.Exp(-gap / span)
		l.handoffRate = l.handoffRate*keep + (1-keep)/gap
	}
	l.lastHandoff = at
	if at >= paceSpan/2 {
		rate := l.handoffRate / (1 - math.Exp(-at.Seconds()/span))
		l.peakRate, l.peakAt = max(rate, l.fadedPeakLocked(at)), at
	}
}

// busyLocked is the busy clock's reading at now: how long somebody has
// waited in all. l.mu is held.
func (l *Limiter) busyLocked(now time.Time) time.Duration {
	if l.busySince.IsZero() {
		return l.busy
	}
	return l.busy + max(now.Sub(l.busySince), 0)
}

// fadedPeakLocked is the best recent rate at the busy clock's reading at,
// faded by e every peakSpan of it since the rate was set. l.mu is held.
func (l *Limiter) fadedPeakLocked(at time.Duration) float64 {
	return faded(l.peakRate, at-l.peakAt, peakSpan)
}

// faded is v as of elapsed after it was set: faded by e every span.
func faded(v float64, elapsed, span time.Duration) float64 {
	return v * math.Exp(-max(elapsed, 0).Seconds()/span.Seconds())
}

// peakSpan is how slowly the line forgets its best recent rate. The line
// is judged by that rate, not by the current one, because refusing costs
// the CPU the line needs: a client that ignores Retry-After is back within
// a millisecond, and each refusal costs about what a cheap read does.
// Judged by the current rate, a dip refused more, the refusals slowed the
// line, and the slower line refused still more: at 1,000 connections of
// such clients the replica settled at 100 requests served a second and
// 15,000 refused (it served 1,200 a second at 200 connections). Judged by
// its best recent rate, the line takes those connections in and the CPU
// goes to serving them (1,328 a second, none refused, with a 3 s span).
// The memory is long because the bad state holds itself up: with a 3 s
// span, one run at 1,000 connections was in it for the whole minute (83
// served a second). A server that has really slowed down is judged by its
// new pace only after a minute or so of waiting; meanwhile its line takes
// more than it serves within the bound, and those it cannot serve are
// refused after waiting the bound: a slow answer, but one that costs the
// server nothing while it waits.
//
// It fades on the busy clock, not on the wall's: a line nobody waited in
// has not been seen to slow down. Faded by the wall's, a limiter that had
// handed on 18,500 places a second judged the line after 220 s of quiet
// by 12 a second, and 32 goroutines calling again at once when refused
// were refused 685 times before the line could time itself again; after
// 250 s, by 5 a second, 138,968 times in half a second.
const peakSpan = 30 * time.Second

// paceLocked is the time between two handoffs at the line's best recent
// rate, 0 while it is not known. A rate so slow that the line would take
// fewer than two requests within MaxWait counts as not known: it comes
// from a stall, and judged by it the line would take one request at a
// time, too few for two handoffs to tell the new rate. l.mu is held.
func (l *Limiter) paceLocked(now time.Time) time.Duration {
	peak := l.fadedPeakLocked(l.busyLocked(now))
	if peak*l.s.MaxWait.Seconds() < 2 {
		return 0
	}
	return time.Duration(float64(time.Second) / peak)
}

// fadedCount is a count of recent events, each faded by e every
// paceSpan since it happened.
type fadedCount struct {
	n    float64
	last time.Time // the last event
}

// at is the count as of now.
func (c *fadedCount) at(now time.Time) float64 {
	if c.n == 0 {
		return 0
	}
	return faded(c.n, now.Sub(c.last), paceSpan)
}

// add counts an event happening now.
func (c *fadedCount) add(now time.Time) {
	c.n, c.last = c.at(now)+1, now
}

// countHandoffLocked counts a place handed to a waiter of account now.
// l.mu is held.
func (l *Limiter) countHandoffLocked(account int64, now time.Time) {
	l.handoffs.add(now)
	c := l.handoffsTo[account]
	if c == nil {
		c = &fadedCount{}
		l.handoffsTo[account] = c
	}
	c.add(now)
}

// placeShareLocked is the part of the line's handoffs that go to account,
// which holds its share of places: its waiters get places that much less
// often than the line's. It is the account's part of the recent handoffs,
// and never less than AccountInFlight/MaxInFlight, the part it would get
// were every request as quick as every other. An account whose requests
// are quicker than the others' gets more. At 1,000 connections of bench
// scenario 7, 880 of them read as one account, whose reads took 73% of the
// handoffs: judged by half, their waits looked 1.5 times as long as they
// were, a pace a quarter below the line's best was enough to refuse
// reads, and their clients, back at once, took the CPU the line needed
// (156 served a second and 98.5% refused, in one of five full bench runs).
// l.mu is held.
func (l *Limiter) placeShareLocked(account int64, now time.Time) float64 {
	share := float64(l.s.AccountInFlight) / float64(l.s.MaxInFlight)
	// Fewer recent handoffs than places say little of anyone's part.
	c := l.handoffsTo[account]
	if all := l.handoffs.at(now); c != nil && all >= float64(l.s.MaxInFlight) {
		share = max(share, min(c.at(now)/all, 1))
	}
	return share
}

// dequeueLocked takes w out of the queue, stopping the busy clock when
// nobody is left waiting. l.mu is held.
func (l *Limiter) dequeueLocked(w *waiter, now time.Time) {
	l.waiting.Remove(w.elem)
	if l.waiting.Len() == 0 {
		l.busy, l.busySince = l.busyLocked(now), time.Time{}
	}
	l.queuedBytes -= w.bytes
	if l.atShareLocked(w.account) {
		l.blocked--
	}
	if l.queuedBy[w.account]--; l.queuedBy[w.account] <= 0 {
		delete(l.queuedBy, w.account)
	}
}

// noteRefusalLocked counts a refusal and writes the log line when the last
// one is logEvery old: the first refusal of an overload is logged at once,
// the following ones summed up. l.mu is held.
func (l *Limiter) noteRefusalLocked(reason string) {
	if l.observe != nil {
		l.observe.Refused(reason)
	}
	l.refusedSince++
	now := l.now()
	if !l.lastLog.IsZero() && now.Sub(l.lastLog) < logEvery {
		return
	}
	slog.Warn("refusing requests: the server is saturated (503 UNAVAILABLE, Retry-After 1 s)",
		"refused", l.refusedSince, "since", l.sinceText(now), "reason", reason,
		"in_progress", l.inFlight, "queued", l.waiting.Len(),
		"max_in_flight", l.s.MaxInFlight, "account_in_flight", l.s.AccountInFlight,
		"queue", l.s.Queue, "max_wait", l.s.MaxWait.String())
	l.refusedSince = 0
	l.lastLog = now
}

// sinceText says what the refusal count of a log line covers.
func (l *Limiter) sinceText(now time.Time) string {
	if l.lastLog.IsZero() {
		return "start"
	}
	return now.Sub(l.lastLog).Round(time.Second).String() + " ago"
}
