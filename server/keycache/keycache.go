// Package keycache remembers which account an API key belongs to, so that
// most requests authenticate without a database round trip, while a revoked
// key still fails on the very next request.
//
// The cache is only trusted while its owner hears every key change (see
// store.WatchKeyChanges): it forgets a key when told it changed, forgets
// everything and stops remembering when the watch is lost, and starts afresh
// when the watch is back. Entries also expire, which bounds the harm of a
// watch that died unnoticed.
//
// It also remembers keys that are not known (misses), so that the same
// wrong key sent again costs no database round trip. That needs no watch:
// keys are random, so a wrong key can become valid only if someone creates
// exactly that key, which a client cannot arrange; a key revoked stays
// revoked. A miss is forgotten when its key changes (a revocation undone by
// hand in psql is heard), when the watch starts afresh, and after missTTL,
// which bounds what a key added by other means than the trigger hears (a
// restore, say) can suffer.
//
// While the watch runs, the cache can also know every key there is
// (KnowAll): the hashes of all keys in use, loaded when the watch starts,
// and every hash a change (a new key too) is heard for since. The set may
// hold keys since revoked, and lacks a key created a moment ago only until
// its change is heard; its owner uses it to spare the database lookups of
// keys surely wrong (Unknown).
package keycache

import (
	"context"
	"sync"
	"time"
)

// Cache maps API key hashes to account ids. The zero value is not usable;
// call New. A new Cache remembers nothing until WatchRestored.
type Cache struct {
	ttl        time.Duration
	maxEntries int
	now        func() time.Time

	mu sync.Mutex
	// watching is true while every key change reaches KeyChanged.
	watching bool
	// generation changes with every change heard and every loss of the
	// watch, so a lookup that raced with one does not store its answer.
	generation uint64
	entries    map[string]entry

	// isMiss tells which lookup errors mean "no such key"; nil remembers
	// no misses.
	isMiss    func(error) bool
	missTTL   time.Duration
	maxMisses int
	misses    map[string]miss
	// changed holds when each key was last heard changed, and allChanged
	// when every key was, for changedFor: a replica may not have replayed
	// those changes yet, so ReplicaAccountID refuses such keys.
	changed    map[string]time.Time
	allChanged time.Time

	// known is every key hash in use, or more, while knownComplete; see
	// KnowAll. loading collects the hashes heard changed while the set is
	// being loaded; nil when no load runs.
	loadKnown     func(context.Context) ([]string, error)
	maxKnown      int
	known         map[string]struct{}
	knownComplete bool
	loading       map[string]struct{}
	// reload says the watch started again (or every key changed) while a
	// load ran: its answer may predate changes not heard, so it is thrown
	// away and the set loaded again.
	reload bool
}

// changedFor is how long a key heard changed is refused on a replica; it
// exceeds the replica's accepted age (store.replicaMaxAge), beyond which
// the replica is not asked at all. maxChanged bounds the set: when full,
// every key counts as changed until changedFor has passed.
const (
	changedFor = 3 * time.Minute
	maxChanged = 100_000
)

type miss struct {
	err     error
	expires time.Time
}

type entry struct {
	accountID int64
	expires   time.Time
}

// New returns a cache whose entries live for ttl, holding at most
// maxEntries keys (when full, it starts over: keys in use return at once).
func New(ttl time.Duration, maxEntries int) *Cache {
	return &Cache{ttl: ttl, maxEntries: maxEntries, now: time.Now, entries: map[string]entry{}, misses: map[string]miss{},
		changed: map[string]time.Time{}}
}

// RememberMisses makes the cache remember, for ttl, the keys whose lookup
// failed with an error isMiss accepts, at most maxEntries of them (when
// full, it starts over). Call it before the first lookup.
func (c *Cache) RememberMisses(isMiss func(error) bool, ttl time.Duration, maxEntries int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.isMiss, c.missTTL, c.maxMisses = isMiss, ttl, maxEntries
}

// AccountID returns the account of the key with the given hash, from
// memory when it can be trusted, otherwise from lookup (whose answer is
// remembered unless a key change or a lost watch came in meanwhile).
// lookup's errors are returned as they are; only misses (see
// RememberMisses) are remembered, and returned again without a lookup.
func (c *Cache) AccountID(ctx context.Context, hash string, lookup func(context.Context, string) (int64, error)) (int64, error) {
	return c.accountID(ctx, hash, lookup)
}

// ReplicaAccountID is AccountID for a lookup on a replica, made while the
// primary cannot be reached. A replica may not yet have replayed a
// revocation the watch already reported, so a key heard changed within
// changedFor is refused with refused, without a lookup; the account the
// replica finds is returned but never remembered, and neither is its miss
// (a key created too recently for the replica would otherwise be refused
// after the primary is back): the key is looked up again, on the primary
// once it answers.
func (c *Cache) ReplicaAccountID(ctx context.Context, hash string, lookup func(context.Context, string) (int64, error), refused error) (int64, error) {
	if c.changedRecently(hash) {
		return 0, refused
	}
	return lookup(ctx, hash)
}

// changedRecently reports whether the key was heard changed (or every key
// was) within changedFor.
func (c *Cache) changedRecently(hash string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	since := c.now().Add(-changedFor)
	if c.allChanged.After(since) {
		return true
	}
	at, ok := c.changed[hash]
	return ok && at.After(since)
}

func (c *Cache) accountID(ctx context.Context, hash string, lookup func(context.Context, string) (int64, error)) (int64, error) {
	now := c.now()
	c.mu.Lock()
	if m, ok := c.misses[hash]; ok && now.Before(m.expires) {
		c.mu.Unlock()
		return 0, m.err
	}
	e, ok := c.entries[hash]
	gen, watching := c.generation, c.watching
	c.mu.Unlock()
	if ok && watching && now.Before(e.expires) {
		return e.accountID, nil
	}
	id, err := lookup(ctx, hash)
	if err != nil {
		c.rememberMiss(hash, gen, err)
		return id, err
	}
	if !watching {
		return id, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.watching && c.generation == gen {
		if len(c.entries) >= c.maxEntries {
			clear(c.entries)
		}
		c.entries[hash] = entry{accountID: id, expires: c.now().Add(c.ttl)}
	}
	return id, nil
}

// rememberMiss remembers a miss unless a change came in during its lookup
// (a revocation undone, say).
func (c *Cache) rememberMiss(hash string, gen uint64, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.isMiss == nil || !c.isMiss(err) || c.generation != gen {
		return
	}
	if len(c.misses) >= c.maxMisses {
		clear(c.misses)
	}
	c.misses[hash] = miss{err: err, expires: c.now().Add(c.missTTL)}
}

// allKeys, as the hash of a change, means every key may have changed.
// It is store.AllKeys; the store is not imported for one constant.
const allKeys = "*"

// KeyChanged forgets one key (it was revoked, changed or deleted), or
// every key for allKeys.
func (c *Cache) KeyChanged(hash string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if hash == allKeys {
		clear(c.entries)
		clear(c.misses)
	} else {
		delete(c.entries, hash)
		delete(c.misses, hash)
	}
	c.rememberChange(hash)
	c.generation++
	c.knowChanged(hash)
}

// KeyAdded notes a new key: it joins the set of keys in use, and a miss
// remembered for it (or a lookup that missed while it was being added) is
// forgotten. A new key is no key that ended: replicas are not refused it.
func (c *Cache) KeyAdded(hash string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.misses, hash)
	c.generation++
	c.knowChanged(hash)
}

// WatchLost forgets every key and remembers none until WatchRestored:
// changes may now go unheard.
func (c *Cache) WatchLost() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.entries)
	c.watching = false
	c.generation++
	c.knownComplete = false
}

// WatchRestored starts remembering again, from nothing: changes made while
// the watch was lost were not heard.
func (c *Cache) WatchRestored() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.entries)
	clear(c.misses)
	c.watching = true
	c.generation++
	c.startLoadingKnown()
}

// Watching reports whether changes are being heard (the metrics' key
// watch gauge, and tests).
func (c *Cache) Watching() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.watching
}

// missCount is the number of unknown keys remembered, for tests.
func (c *Cache) missCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.misses)
}

// entryCount is the number of keys remembered, for tests.
func (c *Cache) entryCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// rememberChange notes when a key (or every key) was heard changed, for
// changedRecently; called with c.mu held.
func (c *Cache) rememberChange(hash string) {
	now := c.now()
	if hash == allKeys || len(c.changed) >= maxChanged {
		clear(c.changed)
		c.allChanged = now
		return
	}
	c.changed[hash] = now
}

// KnowAll makes the cache load the hashes of every key in use with load
// each time the watch starts (and when every key was heard changed), so
// that Unknown can tell a key outside them. Past maxKeys
// keys it does not keep the set, and every key is looked up as before.
// Call it before WatchRestored.
func (c *Cache) KnowAll(load func(context.Context) ([]string, error), maxKeys int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.loadKnown, c.maxKnown = load, maxKeys
}

// Unknown reports whether the key with the given hash is surely not in
// use: the set of every key in use is loaded, the watch runs, and the key
// is not in it. A key created a moment ago may not be heard of yet: the
// caller decides whether to look it up anyway.
func (c *Cache) Unknown(hash string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.known[hash]
	return c.knownComplete && c.watching && !ok
}

// knownLoadTimeout bounds a load of the known keys.
const knownLoadTimeout = 30 * time.Second

// startLoadingKnown loads the set of known keys on a goroutine of its own,
// unless a load runs; called with c.mu held. Until it is done, keys are
// looked up.
func (c *Cache) startLoadingKnown() {
	c.knownComplete = false
	if c.loadKnown == nil {
		return
	}
	if c.loading != nil {
		c.reload = true
		return
	}
	c.loading, c.reload = map[string]struct{}{}, false
	load := c.loadKnown
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), knownLoadTimeout)
		defer cancel()
		hashes, err := load(ctx)
		c.mu.Lock()
		defer c.mu.Unlock()
		heard := c.loading
		c.loading = nil
		if _, all := heard[allKeys]; all || c.reload {
			c.startLoadingKnown()
			return
		}
		if err != nil || len(hashes)+len(heard) > c.maxKnown || !c.watching {
			return
		}
		known := make(map[string]struct{}, len(hashes)+len(heard))
		for _, h := range hashes {
			known[h] = struct{}{}
		}
		// A key created while the load ran is in its answer or was heard.
		for h := range heard {
			known[h] = struct{}{}
		}
		c.known, c.knownComplete = known, true
	}()
}

// knowChanged adds a key heard changed to the known set (it may be new),
// or, for allKeys, loads the set again; called with c.mu held.
func (c *Cache) knowChanged(hash string) {
	switch {
	case c.loading != nil:
		c.loading[hash] = struct{}{}
	case hash == allKeys:
		c.startLoadingKnown()
	case c.knownComplete:
		if len(c.known) >= c.maxKnown {
			c.knownComplete, c.known = false, nil
			return
		}
		c.known[hash] = struct{}{}
	}
}

// KnownSetStale says a key in use was found outside the known set: a
// change went unheard, so the set is not trusted until it is loaded again.
func (c *Cache) KnownSetStale() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.startLoadingKnown()
}

// KnowsAll reports whether the cache answers unknown keys from its set,
// for tests.
func (c *Cache) KnowsAll() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.knownComplete && c.watching
}
