// Package keycache remembers which account an API key belongs to, so that
// most requests authenticate without a database round trip, while a revoked
// key still fails on the very next request.
//
// The cache is only trusted while its owner hears every key change (see
// store.WatchKeyChanges): it forgets a key when told it changed, forgets
// everything and stops remembering when the watch is lost, and starts afresh
// when the watch is back. Entries also expire, which bounds the harm of a
// watch that died unnoticed.
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
}

type entry struct {
	accountID int64
	expires   time.Time
}

// New returns a cache whose entries live for ttl, holding at most
// maxEntries keys (when full, it starts over: keys in use return at once).
func New(ttl time.Duration, maxEntries int) *Cache {
	return &Cache{ttl: ttl, maxEntries: maxEntries, now: time.Now, entries: map[string]entry{}}
}

// AccountID returns the account of the key with the given hash, from
// memory when it can be trusted, otherwise from lookup (whose answer is
// remembered unless a key change or a lost watch came in meanwhile).
// lookup's errors, not-found included, are returned as they are and never
// remembered.
func (c *Cache) AccountID(ctx context.Context, hash string, lookup func(context.Context, string) (int64, error)) (int64, error) {
	c.mu.Lock()
	e, ok := c.entries[hash]
	gen, watching := c.generation, c.watching
	c.mu.Unlock()
	if ok && watching && c.now().Before(e.expires) {
		return e.accountID, nil
	}
	id, err := lookup(ctx, hash)
	if err != nil || !watching {
		return id, err
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

// AllKeys, as the hash of a change, means every key may have changed.
// It is store.AllKeys; the store is not imported for one constant.
const AllKeys = "*"

// KeyChanged forgets one key (it was revoked, changed or deleted), or
// every key for AllKeys.
func (c *Cache) KeyChanged(hash string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if hash == AllKeys {
		clear(c.entries)
	} else {
		delete(c.entries, hash)
	}
	c.generation++
}

// WatchLost forgets every key and remembers none until WatchRestored:
// changes may now go unheard.
func (c *Cache) WatchLost() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.entries)
	c.watching = false
	c.generation++
}

// WatchRestored starts remembering again, from nothing: changes made while
// the watch was lost were not heard.
func (c *Cache) WatchRestored() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.entries)
	c.watching = true
	c.generation++
}

// Len is the number of keys remembered, for tests and metrics.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
