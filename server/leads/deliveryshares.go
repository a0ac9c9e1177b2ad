package leads

import (
	"sync"
	"time"
)

// Shares of the delivery workers (docs/api.md 7): a slow, timing-out or
// failing endpoint must not hold up deliveries of other accounts.
//
// River, as pinned (v0.41, the open-source edition), has no concurrency
// limit by key: River Pro's concurrency limits partitioned by args are the
// feature, and unique jobs only deduplicate. So a delivery takes its place
// in the worker, before it sends: when its endpoint or its account already
// has its share in flight, the job is snoozed (river.JobSnooze), which
// frees the worker slot at once for the jobs behind it, does not count as
// an attempt, and brings the job back later.
//
// The shares are per process. Every replica with delivery workers keeps its
// own: an account never has more than half of any process's workers, so
// whichever process fetches another account's delivery has a free worker
// for it, and the rule holds however many replicas there are. An endpoint
// can have 4 deliveries in flight on each replica that sends. Global shares
// would need leases in the database (a session lock does not survive
// PgBouncer's transaction pooling, and a delivery holds no connection while
// it waits on the receiver); the rule's purpose, that other accounts are
// not held up, does not need them.
const (
	// maxInFlightPerEndpoint is the most deliveries to one endpoint one
	// process sends at once.
	maxInFlightPerEndpoint = 4
	// shareTypicalAtFirst is how long a delivery is expected to take before
	// any of its key has finished.
	shareTypicalAtFirst = time.Second
	// shareDeferralMin and shareDeferralMax bound a snooze: not so short
	// that refused jobs spin through the queue, not so long that an
	// endpoint which recovered leaves its backlog asleep.
	shareDeferralMin = 100 * time.Millisecond
	shareDeferralMax = 30 * time.Second
)

// deliveryShares counts the deliveries in flight by endpoint and by account
// and refuses those past a share, telling them when to come back.
type deliveryShares struct {
	perEndpoint, perAccount int
	now                     func() time.Time

	mu        sync.Mutex
	endpoints map[string]*share
	accounts  map[int64]*share
}

// share is one endpoint's or one account's deliveries in flight. It exists
// only while one is.
type share struct {
	inFlight int
	// typical is a moving average of how long this key's deliveries take.
	typical time.Duration
	// nextTurn is the latest time given to a delivery refused for this key.
	nextTurn time.Time
}

// newDeliveryShares gives each account at most half of workers (at least
// one) and each endpoint at most maxInFlightPerEndpoint of those.
func newDeliveryShares(workers int, now func() time.Time) *deliveryShares {
	perAccount := max(1, workers/2)
	return &deliveryShares{perEndpoint: min(maxInFlightPerEndpoint, perAccount), perAccount: perAccount, now: now,
		endpoints: map[string]*share{}, accounts: map[int64]*share{}}
}

// take takes a place for a delivery to endpoint of account. Refused, it
// says how long the delivery should wait; granted, done must be called
// once the delivery has finished.
func (s *deliveryShares) take(account int64, endpoint string) (done func(), wait time.Duration, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	e, a := s.endpoints[endpoint], s.accounts[account]
	switch {
	case e != nil && e.inFlight >= s.perEndpoint:
		return nil, e.turn(now, s.perEndpoint), false
	case a != nil && a.inFlight >= s.perAccount:
		return nil, a.turn(now, s.perAccount), false
	}
	e, a = enter(s.endpoints, endpoint, e), enter(s.accounts, account, a)
	var once sync.Once
	return func() { once.Do(func() { s.leave(account, endpoint, e, a, now) }) }, 0, true
}

// leave gives back the places taken at started.
func (s *deliveryShares) leave(account int64, endpoint string, e, a *share, started time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	took := s.now().Sub(started)
	if e.exit(took) {
		delete(s.endpoints, endpoint)
	}
	if a.exit(took) {
		delete(s.accounts, account)
	}
}

// enter counts one more delivery in flight for key, making its share if
// it has none.
func enter[K comparable](m map[K]*share, key K, sh *share) *share {
	if sh == nil {
		sh = &share{typical: shareTypicalAtFirst}
		m[key] = sh
	}
	sh.inFlight++
	return sh
}

// exit counts a delivery that took took as finished and reports whether
// none is left in flight.
func (sh *share) exit(took time.Duration) bool {
	sh.inFlight--
	sh.typical += (took - sh.typical) / 4
	return sh.inFlight <= 0
}

// turn is how long a delivery refused at now waits. Refused deliveries are
// spaced by the time a place typically takes to free (a typical delivery
// over the share's places), each after the last one given, so that a
// backlog comes back about as fast as the share drains it rather than all
// at once: a refused job is fetched about once more, not over and over.
func (sh *share) turn(now time.Time, places int) time.Duration {
	step := sh.typical / time.Duration(places)
	next := now
	if sh.nextTurn.After(now) {
		next = sh.nextTurn
	}
	next = next.Add(step)
	if latest := now.Add(shareDeferralMax); next.After(latest) {
		next = latest
	}
	sh.nextTurn = next
	return max(next.Sub(now), shareDeferralMin)
}
