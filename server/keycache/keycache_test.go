package keycache

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// lookups counts the database lookups a test's calls made.
type lookups struct {
	n       int
	account int64
	err     error
	during  func() // runs inside the lookup, as a concurrent change would
}

func (l *lookups) lookup(context.Context, string) (int64, error) {
	l.n++
	if l.during != nil {
		l.during()
	}
	return l.account, l.err
}

func TestAccountID(t *testing.T) {
	errMissing := errors.New("not found")
	tests := []struct {
		name string
		// setup runs on a new cache; then the key "k" is asked for twice.
		setup       func(c *Cache, l *lookups, clock *time.Time)
		between     func(c *Cache, clock *time.Time)
		wantLookups int
		wantErr     error
	}{
		{name: "watching: the second call is remembered", setup: func(c *Cache, _ *lookups, _ *time.Time) { c.WatchRestored() }, wantLookups: 1},
		{name: "not yet watching: nothing remembered", wantLookups: 2},
		{name: "watch lost: nothing remembered", setup: func(c *Cache, _ *lookups, _ *time.Time) { c.WatchRestored(); c.WatchLost() }, wantLookups: 2},
		{name: "watch lost between calls forgets", setup: func(c *Cache, _ *lookups, _ *time.Time) { c.WatchRestored() },
			between: func(c *Cache, _ *time.Time) { c.WatchLost() }, wantLookups: 2},
		{name: "watch restored between calls starts afresh", setup: func(c *Cache, _ *lookups, _ *time.Time) { c.WatchRestored() },
			between: func(c *Cache, _ *time.Time) { c.WatchRestored() }, wantLookups: 2},
		{name: "key changed between calls is looked up again", setup: func(c *Cache, _ *lookups, _ *time.Time) { c.WatchRestored() },
			between: func(c *Cache, _ *time.Time) { c.KeyChanged("k") }, wantLookups: 2},
		{name: "every key changed (a truncate) forgets it", setup: func(c *Cache, _ *lookups, _ *time.Time) { c.WatchRestored() },
			between: func(c *Cache, _ *time.Time) { c.KeyChanged(allKeys) }, wantLookups: 2},
		{name: "another key changed: still remembered", setup: func(c *Cache, _ *lookups, _ *time.Time) { c.WatchRestored() },
			between: func(c *Cache, _ *time.Time) { c.KeyChanged("other") }, wantLookups: 1},
		{name: "expired entry is looked up again", setup: func(c *Cache, _ *lookups, _ *time.Time) { c.WatchRestored() },
			between: func(_ *Cache, clock *time.Time) { *clock = clock.Add(time.Minute) }, wantLookups: 2},
		{name: "a change during the lookup keeps its answer from being remembered",
			setup: func(c *Cache, l *lookups, _ *time.Time) {
				c.WatchRestored()
				l.during = func() { c.KeyChanged("k"); l.during = nil }
			}, wantLookups: 2},
		{name: "a lost watch during the lookup keeps its answer from being remembered",
			setup: func(c *Cache, l *lookups, _ *time.Time) {
				c.WatchRestored()
				l.during = func() { c.WatchLost(); c.WatchRestored(); l.during = nil }
			}, wantLookups: 2},
		{name: "errors are not remembered", setup: func(c *Cache, l *lookups, _ *time.Time) { c.WatchRestored(); l.err = errMissing },
			wantLookups: 2, wantErr: errMissing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
			c := New(30*time.Second, 10)
			c.now = func() time.Time { return clock }
			l := &lookups{account: 7}
			if tt.setup != nil {
				tt.setup(c, l, &clock)
			}
			for i := range 2 {
				if i == 1 && tt.between != nil {
					tt.between(c, &clock)
				}
				id, err := c.AccountID(context.Background(), "k", l.lookup)
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("call %d: error %v, want %v", i, err, tt.wantErr)
				}
				if err == nil && id != 7 {
					t.Fatalf("call %d: account %d, want 7", i, id)
				}
			}
			if l.n != tt.wantLookups {
				t.Errorf("%d lookups, want %d", l.n, tt.wantLookups)
			}
		})
	}
}

func TestFullCacheStartsOver(t *testing.T) {
	c := New(time.Minute, 3)
	c.WatchRestored()
	l := &lookups{account: 1}
	for _, k := range []string{"a", "b", "c", "d"} {
		if _, err := c.AccountID(context.Background(), k, l.lookup); err != nil {
			t.Fatal(err)
		}
		if c.entryCount() > 3 {
			t.Fatalf("%d entries after %q, at most 3 allowed", c.entryCount(), k)
		}
	}
	if c.entryCount() != 1 {
		t.Errorf("%d entries after starting over, want 1 (the newest)", c.entryCount())
	}
}

// TestMissesRemembered: the same wrong key, asked for again, costs no
// lookup, until that key changes, the watch starts afresh or the miss
// expires; errors other than misses are never remembered.
func TestMissesRemembered(t *testing.T) {
	errMissing, errDown := errors.New("not found"), errors.New("database down")
	tests := []struct {
		name        string
		err         error
		setup       func(c *Cache, l *lookups)
		between     func(c *Cache, clock *time.Time)
		wantLookups int
	}{
		{name: "a miss is remembered, watch or not", err: errMissing, wantLookups: 1},
		{name: "a miss is remembered while watching", err: errMissing, setup: func(c *Cache, _ *lookups) { c.WatchRestored() }, wantLookups: 1},
		{name: "another error is not remembered", err: errDown, wantLookups: 2},
		{name: "a miss expires", err: errMissing,
			between: func(_ *Cache, clock *time.Time) { *clock = clock.Add(2 * time.Minute) }, wantLookups: 2},
		{name: "a change of that key forgets it (a revocation undone by hand)", err: errMissing,
			between: func(c *Cache, _ *time.Time) { c.KeyChanged("k") }, wantLookups: 2},
		{name: "every key changed forgets it", err: errMissing,
			between: func(c *Cache, _ *time.Time) { c.KeyChanged(allKeys) }, wantLookups: 2},
		{name: "another key changed: still remembered", err: errMissing,
			between: func(c *Cache, _ *time.Time) { c.KeyChanged("other") }, wantLookups: 1},
		{name: "the watch restored starts afresh", err: errMissing,
			between: func(c *Cache, _ *time.Time) { c.WatchRestored() }, wantLookups: 2},
		{name: "a change during the lookup keeps the miss from being remembered", err: errMissing,
			setup: func(c *Cache, l *lookups) { l.during = func() { c.KeyChanged("k"); l.during = nil } }, wantLookups: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
			c := New(30*time.Second, 10)
			c.now = func() time.Time { return clock }
			c.RememberMisses(func(err error) bool { return errors.Is(err, errMissing) }, time.Minute, 10)
			l := &lookups{err: tt.err}
			if tt.setup != nil {
				tt.setup(c, l)
			}
			for i := range 2 {
				if i == 1 && tt.between != nil {
					tt.between(c, &clock)
				}
				if _, err := c.AccountID(context.Background(), "k", l.lookup); !errors.Is(err, tt.err) {
					t.Fatalf("call %d: error %v, want %v", i, err, tt.err)
				}
			}
			if l.n != tt.wantLookups {
				t.Errorf("%d lookups, want %d", l.n, tt.wantLookups)
			}
		})
	}
}

// TestMissesBounded: a flood of distinct wrong keys holds at most the
// configured number of misses.
func TestMissesBounded(t *testing.T) {
	errMissing := errors.New("not found")
	c := New(time.Minute, 10)
	c.RememberMisses(func(err error) bool { return err == errMissing }, time.Minute, 3)
	l := &lookups{err: errMissing}
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		_, _ = c.AccountID(context.Background(), k, l.lookup)
		if c.missCount() > 3 {
			t.Fatalf("%d misses after %q, at most 3 allowed", c.missCount(), k)
		}
	}
}

// TestReplicaAccountID: what a replica answers is never remembered, an
// account found nor a miss (the replica may be behind a revocation the
// watch reported, or a key just created), and a key heard changed within
// changedFor is refused without asking the replica, which may not have
// replayed the change yet.
func TestReplicaAccountID(t *testing.T) {
	errMissing, errRefused := errors.New("not found"), errors.New("refused")
	tests := []struct {
		name string
		err  error
		// changed is heard before the replica calls, heardAgo before now.
		changed  string
		heardAgo time.Duration
		wantErr  error
		// wantReplica counts the replica's lookups over two calls, then
		// wantPrimary the primary's over two more.
		wantReplica, wantPrimary int
	}{
		{name: "an account found is not remembered", wantReplica: 2, wantPrimary: 1},
		{name: "a miss is not remembered", err: errMissing, wantErr: errMissing, wantReplica: 2, wantPrimary: 1},
		{name: "a key heard changed is refused", changed: "k", wantErr: errRefused, wantReplica: 0, wantPrimary: 1},
		{name: "every key heard changed", changed: allKeys, wantErr: errRefused, wantReplica: 0, wantPrimary: 1},
		{name: "another key heard changed", changed: "other", wantReplica: 2, wantPrimary: 1},
		{name: "a change heard long ago", changed: "k", heardAgo: changedFor + time.Second, wantReplica: 2, wantPrimary: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(30*time.Second, 10)
			c.RememberMisses(func(err error) bool { return errors.Is(err, errMissing) }, time.Minute, 10)
			c.WatchRestored()
			start := time.Now()
			c.now = func() time.Time { return start }
			if tt.changed != "" {
				c.KeyChanged(tt.changed)
			}
			c.now = func() time.Time { return start.Add(tt.heardAgo) }
			primary, replica := &lookups{account: 7}, &lookups{account: 7, err: tt.err}
			for range 2 {
				id, err := c.ReplicaAccountID(context.Background(), "k", replica.lookup, errRefused)
				if !errors.Is(err, tt.wantErr) || (err == nil && id != 7) {
					t.Fatalf("replica: account %d, error %v, want 7, %v", id, err, tt.wantErr)
				}
			}
			for range 2 {
				_, _ = c.AccountID(context.Background(), "k", primary.lookup)
			}
			if replica.n != tt.wantReplica || primary.n != tt.wantPrimary {
				t.Errorf("lookups: replica %d, primary %d; want %d, %d", replica.n, primary.n, tt.wantReplica, tt.wantPrimary)
			}
		})
	}
}

// TestKnowAll: the set of keys in use is loaded when the watch starts; a
// key heard of meanwhile or since (a new one) is in it; a load that raced
// with a restart of the watch, or with every key changing, is done again;
// without the watch nothing is surely unknown.
func TestKnowAll(t *testing.T) {
	type step struct {
		do      func(c *Cache, release chan<- struct{})
		unknown map[string]bool // hash: Unknown's answer after the step
	}
	loaded := func(c *Cache) bool {
		for range 1000 {
			if c.KnowsAll() {
				return true
			}
			time.Sleep(time.Millisecond)
		}
		return false
	}
	for _, tt := range []struct {
		name  string
		keys  []string // what each load answers
		steps []step
	}{
		{"loaded at the start", []string{"a"}, []step{
			{func(c *Cache, r chan<- struct{}) { c.WatchRestored(); r <- struct{}{}; loaded(c) }, map[string]bool{"a": false, "b": true}},
		}},
		{"heard while loading", []string{"a"}, []step{
			{func(c *Cache, r chan<- struct{}) { c.WatchRestored(); c.KeyChanged("b"); r <- struct{}{}; loaded(c) }, map[string]bool{"a": false, "b": false, "c": true}},
		}},
		{"a new key heard after", []string{"a"}, []step{
			{func(c *Cache, r chan<- struct{}) { c.WatchRestored(); r <- struct{}{}; loaded(c); c.KeyChanged("n") }, map[string]bool{"n": false, "z": true}},
		}},
		{"watch lost", []string{"a"}, []step{
			{func(c *Cache, r chan<- struct{}) { c.WatchRestored(); r <- struct{}{}; loaded(c); c.WatchLost() }, map[string]bool{"a": false, "z": false}},
		}},
		{"restarted while loading: loaded again", []string{"a"}, []step{
			{func(c *Cache, r chan<- struct{}) {
				c.WatchRestored()
				c.WatchLost()
				c.WatchRestored()
				r <- struct{}{}
				r <- struct{}{}
				loaded(c)
			}, map[string]bool{"a": false, "z": true}},
		}},
		{"found stale: not trusted until loaded again", []string{"a"}, []step{
			{func(c *Cache, r chan<- struct{}) { c.WatchRestored(); r <- struct{}{}; loaded(c); c.KnownSetStale() }, map[string]bool{"a": false, "z": false}},
			{func(c *Cache, r chan<- struct{}) { r <- struct{}{}; loaded(c) }, map[string]bool{"a": false, "z": true}},
		}},
		{"every key changed while loading: loaded again", []string{"a"}, []step{
			{func(c *Cache, r chan<- struct{}) {
				c.WatchRestored()
				c.KeyChanged(allKeys)
				r <- struct{}{}
				r <- struct{}{}
				loaded(c)
			}, map[string]bool{"a": false, "z": true}},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := New(time.Minute, 100)
			release := make(chan struct{})
			var loads atomic.Int32
			c.KnowAll(func(context.Context) ([]string, error) {
				<-release
				loads.Add(1)
				return tt.keys, nil
			}, 100)
			for _, s := range tt.steps {
				s.do(c, release)
				for hash, want := range s.unknown {
					if got := c.Unknown(hash); got != want {
						t.Errorf("Unknown(%q) = %v, want %v (%d loads)", hash, got, want, loads.Load())
					}
				}
			}
		})
	}
}

// TestKeyAddedIsNoChange: a new key joins the known set and is looked up
// on a replica during an outage, where a key heard changed is refused.
func TestKeyAddedIsNoChange(t *testing.T) {
	c := New(time.Minute, 100)
	c.WatchRestored()
	refused := errors.New("refused")
	lookup := func(context.Context, string) (int64, error) { return 7, nil }
	c.KeyAdded("new")
	c.KeyChanged("ended")
	if id, err := c.ReplicaAccountID(context.Background(), "new", lookup, refused); err != nil || id != 7 {
		t.Errorf("a new key on a replica: %d, %v; want it looked up", id, err)
	}
	if _, err := c.ReplicaAccountID(context.Background(), "ended", lookup, refused); err != refused {
		t.Errorf("a key heard changed on a replica: %v, want refused", err)
	}
}
