package store_test

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/internal/testfix"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// heard records what a key watch told its handler.
type heard struct {
	mu     sync.Mutex
	events []string // "changed <hash>", "lost", "restored"
}

func (h *heard) add(e string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, e)
}
func (h *heard) KeyChanged(hash string) { h.add("changed " + hash) }
func (h *heard) KeyAdded(hash string)   { h.add("added " + hash) }
func (h *heard) WatchLost()             { h.add("lost") }
func (h *heard) WatchRestored()         { h.add("restored") }

func (h *heard) has(e string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Contains(h.events, e)
}

func (h *heard) count(e string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, got := range h.events {
		if got == e {
			n++
		}
	}
	return n
}

// waitFor fails t unless cond holds within 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !testfix.Eventually(10*time.Second, cond) {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// watch starts a key watch on its own store (a server of its own) over
// the database at dbURL.
func watch(t *testing.T, dbURL string) (*heard, context.CancelFunc, func()) {
	t.Helper()
	st, err := store.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	h := &heard{}
	wait, err := st.WatchKeyChanges(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); wait() })
	waitFor(t, "the watch to start", func() bool { return h.has("restored") })
	return h, cancel, wait
}

// accountWithKey opens a store on a new database holding one account
// whose key has the given hash and prefix.
func accountWithKey(t *testing.T, hash, prefix string) (st *store.Store, dbURL string, accountID int64) {
	t.Helper()
	dbURL = storetest.URL(t)
	st, err := store.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	accountID, err = st.CreateAccount(context.Background(), store.NewAccount{Name: "A", WebhookSecret: "whsec_x", KeyHash: hash, KeyPrefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	return st, dbURL, accountID
}

func TestRevokeAPIKeysWaitsForEveryServer(t *testing.T) {
	ctx := context.Background()
	st, dbURL, _ := accountWithKey(t, "hash-one", "jb_live_one")
	servers := []*heard{}
	for range 2 {
		h, _, _ := watch(t, dbURL)
		servers = append(servers, h)
	}

	key, err := st.RevokeAPIKey(ctx, store.KeyRef{Hash: "hash-one"}, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if want := (store.Revocation{Revoked: 1, Servers: 2, Confirmed: 2}); key.Revocation != want {
		t.Errorf("revocation %+v, want %+v", key.Revocation, want)
	}
	// Confirmed means heard: no waiting here.
	for i, h := range servers {
		if !h.has("changed hash-one") {
			t.Errorf("server %d had not heard of the revoked key when the revocation returned: %v", i, h.events)
		}
	}

	again, err := st.RevokeAPIKey(ctx, store.KeyRef{Hash: "hash-one"}, time.Second)
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("revoking again: %+v, %v; want ErrNotFound", again, err)
	}
	if n := servers[0].count("changed hash-one"); n != 1 {
		t.Errorf("a revocation that revoked nothing was heard: %d changes", n)
	}
}

func TestRevokeAPIKeysReportsServersThatDoNotConfirm(t *testing.T) {
	ctx := context.Background()
	st, dbURL, _ := accountWithKey(t, "hash-two", "jb_live_two")
	watch(t, dbURL)
	// A server that listens and never confirms (hung, say).
	u, _ := url.Parse(dbURL)
	q := u.Query()
	q.Set("application_name", "jobboard key watch hung")
	u.RawQuery = q.Encode()
	hung, err := sql.Open("postgres", u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer hung.Close()
	conn, err := hung.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `LISTEN jobboard_api_keys`); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	key, err := st.RevokeAPIKey(ctx, store.KeyRef{Hash: "hash-two"}, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if want := (store.Revocation{Revoked: 1, Servers: 2, Confirmed: 1}); key.Revocation != want {
		t.Errorf("revocation %+v, want %+v", key.Revocation, want)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Errorf("waited %v for a server that never confirms; the limit was 300 ms", waited)
	}
}

// TestRevokeAPIKeyScopedToAccount: a key id names a key only within its
// account, and keys sharing a prefix are told apart by the whole key.
func TestRevokeAPIKeyScopedToAccount(t *testing.T) {
	ctx := context.Background()
	// Both keys have the same prefix: a prefix names neither.
	st, _, a := accountWithKey(t, "hash-a", "jb_live_same")
	b, err := st.CreateAccount(ctx, store.NewAccount{Name: "B", WebhookSecret: "whsec_y", KeyHash: "hash-b", KeyPrefix: "jb_live_same"})
	if err != nil {
		t.Fatal(err)
	}
	keysOf := func(account int64) []store.APIKey {
		keys, err := st.APIKeys(ctx, account)
		if err != nil || len(keys) != 1 {
			t.Fatalf("keys of account %d: %+v, %v", account, keys, err)
		}
		return keys
	}
	keyA, keyB := keysOf(a)[0], keysOf(b)[0]
	for _, tt := range []struct {
		name string
		ref  store.KeyRef
	}{
		{"B's key id with account A", store.KeyRef{AccountID: a, KeyID: keyB.ID}},
		{"A's key id with account B", store.KeyRef{AccountID: b, KeyID: keyA.ID}},
		{"an unknown hash", store.KeyRef{Hash: "hash-c"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := st.RevokeAPIKey(ctx, tt.ref, time.Second); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("revoked %+v (%v), want ErrNotFound", got, err)
			}
		})
	}
	if _, err := st.RevokeAPIKey(ctx, store.KeyRef{KeyID: keyB.ID}, time.Second); err == nil {
		t.Error("a key id without its account was accepted")
	}
	for _, acct := range []int64{a, b} {
		if k := keysOf(acct)[0]; k.RevokedAt != nil {
			t.Fatalf("account %d's key was revoked by a refused revocation", acct)
		}
	}

	got, err := st.RevokeAPIKey(ctx, store.KeyRef{AccountID: b, KeyID: keyB.ID}, time.Second)
	if err != nil || got.ID != keyB.ID || got.AccountID != b || got.Revoked != 1 {
		t.Fatalf("revoking B's key by id: %+v, %v", got, err)
	}
	if keysOf(b)[0].RevokedAt == nil || keysOf(a)[0].RevokedAt != nil {
		t.Error("revoking B's key by id: not exactly B's key revoked")
	}
	if got, err := st.RevokeAPIKey(ctx, store.KeyRef{Hash: "hash-a"}, time.Second); err != nil || got.ID != keyA.ID {
		t.Fatalf("revoking A's key by hash: %+v, %v", got, err)
	}
	if _, err := st.APIKeys(ctx, b+100); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("keys of a missing account: %v, want ErrNotFound", err)
	}
}

func TestKeyWatch(t *testing.T) {
	ctx := context.Background()
	st, dbURL, id := accountWithKey(t, "hash-a", "jb_live_a")
	if err := st.AddAPIKey(ctx, id, "hash-b", "jb_live_b"); err != nil {
		t.Fatal(err)
	}
	h, cancel, wait := watch(t, dbURL)

	t.Run("a new key is heard as added, not as ended", func(t *testing.T) {
		if err := st.AddAPIKey(ctx, id, "hash-c", "jb_live_c"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the new key", func() bool { return h.has("added hash-c") })
		if h.has("changed hash-c") {
			t.Error("a new key was heard as a key that ended: replicas would refuse it for minutes")
		}
	})
	t.Run("a key deleted by hand is heard", func(t *testing.T) {
		if _, err := st.DB().ExecContext(ctx, `DELETE FROM api_keys WHERE key_hash = 'hash-a'`); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the deleted key", func() bool { return h.has("changed hash-a") })
	})
	t.Run("a lost connection is heard, and its return", func(t *testing.T) {
		var n int
		if err := st.DB().GetContext(ctx, &n, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE datname = current_database() AND application_name LIKE 'jobboard key watch %'`); err != nil || n != 1 {
			t.Fatalf("terminated %d watch connections (%v), want 1", n, err)
		}
		waitFor(t, "the loss", func() bool { return h.has("lost") })
		waitFor(t, "the return", func() bool { return h.count("restored") == 2 })
		// Listening again: a change is heard.
		if _, err := st.DB().ExecContext(ctx, `UPDATE api_keys SET revoked_at = now() WHERE key_hash = 'hash-b'`); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the revoked key after the reconnect", func() bool { return h.has("changed hash-b") })
	})
	t.Run("a truncate is heard as every key", func(t *testing.T) {
		if _, err := st.DB().ExecContext(ctx, `TRUNCATE api_keys`); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the truncate", func() bool { return h.has("changed " + store.AllKeys) })
	})
	t.Run("the end of the watch is heard", func(t *testing.T) {
		lost := h.count("lost")
		cancel()
		wait()
		if h.count("lost") != lost+1 {
			t.Errorf("events %v: the end was not reported as a lost watch", h.events)
		}
	})
}
