package store_test

import (
	"context"
	"database/sql"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"jobboard/internal/pgtest"
	"jobboard/server/store"
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

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
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
	dbURL = pgtest.URL(t)
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

	rev, err := st.RevokeAPIKeys(ctx, "jb_live_one", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if want := (store.Revocation{Revoked: 1, Servers: 2, Confirmed: 2}); rev != want {
		t.Errorf("revocation %+v, want %+v", rev, want)
	}
	// Confirmed means heard: no waiting here.
	for i, h := range servers {
		if !h.has("changed hash-one") {
			t.Errorf("server %d had not heard of the revoked key when the revocation returned: %v", i, h.events)
		}
	}

	again, err := st.RevokeAPIKeys(ctx, "jb_live_one", time.Second)
	if err != nil || again.Revoked != 0 {
		t.Errorf("revoking again: %+v, %v; want nothing revoked", again, err)
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
	rev, err := st.RevokeAPIKeys(ctx, "jb_live_two", 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if want := (store.Revocation{Revoked: 1, Servers: 2, Confirmed: 1}); rev != want {
		t.Errorf("revocation %+v, want %+v", rev, want)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Errorf("waited %v for a server that never confirms; the limit was 300 ms", waited)
	}
}

func TestKeyWatch(t *testing.T) {
	ctx := context.Background()
	st, dbURL, id := accountWithKey(t, "hash-a", "jb_live_a")
	if err := st.AddAPIKey(ctx, id, "hash-b", "jb_live_b"); err != nil {
		t.Fatal(err)
	}
	h, cancel, wait := watch(t, dbURL)

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
