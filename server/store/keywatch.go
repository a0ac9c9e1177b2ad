package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/lib/pq"
)

// AllKeys is the hash KeyChanged hears when every key may have changed.
const AllKeys = "*"

const (
	// keyChangesChannel carries the hash of every API key row that was
	// updated or deleted (migration 0006's trigger), at commit.
	keyChangesChannel = "jobboard_api_keys"
	// addedKeyMark starts the notification of a new key (migration 0021):
	// the rest is its hash.
	addedKeyMark = "+"
	// keyAppliedChannel carries "<watcher id> <hash>" from each server once
	// it has forgotten a changed key, so a revocation can wait for them.
	keyAppliedChannel = "jobboard_api_keys_applied"
	// keyWatchAppPrefix starts the application_name of every watcher's
	// connection: pg_stat_activity then lists the servers that must confirm.
	keyWatchAppPrefix = "jobboard key watch "
	// keyWatchPingEvery bounds how long a silently dead listening connection
	// goes unnoticed: a ping that fails, or is not back by the next tick,
	// drops what the cache remembers.
	keyWatchPingEvery = 5 * time.Second
)

// KeyChangeHandler is told about changes to API keys as they commit. It is
// how a server keeps a cache of keys honest: a key forgotten on KeyChanged
// is looked up again, and while the watch is lost nothing can be trusted.
type KeyChangeHandler interface {
	// KeyChanged reports that the key with this hash was revoked, changed
	// or deleted; AllKeys stands for every key (the table was truncated).
	KeyChanged(hash string)
	// KeyAdded reports a new key with this hash.
	KeyAdded(hash string)
	// WatchLost reports that changes may go unseen from now on.
	WatchLost()
	// WatchRestored reports that every change from now on will be seen.
	WatchRestored()
}

// WatchKeyChanges listens for API key changes on a connection of its own
// and passes them to h until ctx ends. h hears WatchRestored once listening
// starts, and WatchLost whenever the connection drops or stops answering
// (then WatchRestored again when it is back). Each change is confirmed on
// keyAppliedChannel after h has heard it. The returned function waits for
// the watch to end.
func (s *Store) WatchKeyChanges(ctx context.Context, h KeyChangeHandler) (wait func(), err error) {
	id := randomHex(8)
	dsn, err := withSetting(s.sessionURL, "application_name", keyWatchAppPrefix+id)
	if err != nil {
		return nil, err
	}
	l := newKeyListener(dsn, h)
	done := make(chan struct{})
	// Closing the listener ends a Listen still waiting for a connection.
	// It is closed from a goroutine of its own: a Ping blocked on a dead
	// connection holds the listener's lock, and nothing here waits for it.
	go func() {
		<-ctx.Done()
		_ = l.Close()
	}()
	go func() {
		defer close(done)
		// Listen waits for a connection: in here, a database that is down at
		// start delays the cache, not the server.
		if err := l.Listen(keyChangesChannel); err != nil {
			if ctx.Err() == nil {
				slog.Error("api key watch not started; keys are looked up on every request", "error", err)
			}
			return
		}
		h.WatchRestored()
		s.relayKeyChanges(ctx, l, h, id)
	}()
	return func() { <-done }, nil
}

// newKeyListener makes the listener of a key watch, telling h when its
// connection drops and when it is back.
func newKeyListener(dsn string, h KeyChangeHandler) *pq.Listener {
	return pq.NewListener(dsn, 100*time.Millisecond, 5*time.Second, func(ev pq.ListenerEventType, err error) {
		switch ev {
		case pq.ListenerEventDisconnected:
			slog.Warn("api key watch lost; keys are looked up on every request until it is back", "error", err)
			h.WatchLost()
		case pq.ListenerEventReconnected:
			// The reconnect listened on the channel again before this event.
			slog.Info("api key watch restored")
			h.WatchRestored()
		}
	})
}

// relayKeyChanges passes the changes l hears to h, and confirms each, until
// ctx ends or l closes; it pings l every keyWatchPingEvery and tells h the
// watch is lost while the pings fail.
func (s *Store) relayKeyChanges(ctx context.Context, l *pq.Listener, h KeyChangeHandler, watcherID string) {
	ping := time.NewTicker(keyWatchPingEvery)
	defer ping.Stop()
	// pong carries the result of the ping in flight; lib/pq's Ping has
	// no deadline of its own, so a ping not back by the next tick
	// counts as failed.
	pong := make(chan error, 1)
	pinging, pingFailed := false, false
	failed := func(yes bool) {
		if yes && !pingFailed {
			h.WatchLost()
		} else if !yes && pingFailed {
			h.WatchRestored()
		}
		pingFailed = yes
	}
	for {
		select {
		case <-ctx.Done():
			h.WatchLost()
			return
		case err := <-pong:
			pinging = false
			// A failed ping means the connection may have died without
			// a word: nothing remembered may be used until a ping on a
			// live connection (or a reconnect) shows the watch is back.
			failed(err != nil)
		case <-ping.C:
			if pinging {
				failed(true)
				continue
			}
			pinging = true
			go func() { pong <- l.Ping() }()
		case n, ok := <-l.Notify:
			if !ok {
				h.WatchLost()
				return
			}
			if n == nil { // a reconnect: WatchRestored has been heard
				continue
			}
			if added, ok := strings.CutPrefix(n.Extra, addedKeyMark); ok {
				h.KeyAdded(added)
				continue
			}
			h.KeyChanged(n.Extra)
			s.confirmKeyChange(ctx, watcherID, n.Extra)
		}
	}
}

// confirmKeyChange tells a waiting revocation that this server has
// forgotten the key. A confirmation that cannot be sent only makes the
// revocation wait for its timeout; the key is forgotten either way.
func (s *Store) confirmKeyChange(ctx context.Context, watcherID, hash string) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := s.db.ExecContext(ctx, `SELECT pg_notify($1, $2)`, keyAppliedChannel, watcherID+" "+hash); err != nil {
		slog.Warn("confirm api key change", "error", err)
	}
}

// Revocation is what a revocation did and how many servers confirmed it.
type Revocation struct {
	// Revoked is the number of keys revoked.
	Revoked int `json:"revoked"`
	// Servers is the number of servers watching for key changes when the
	// revocation committed; Confirmed, how many of them confirmed having
	// forgotten every revoked key in time.
	Servers   int `json:"servers"`
	Confirmed int `json:"confirmed"`
}

// RevokedKey is the key RevokeAPIKey revoked, and what came of it.
type RevokedKey struct {
	ID        int64  `db:"id" json:"id"`
	AccountID int64  `db:"account_id" json:"accountId"`
	Prefix    string `db:"key_prefix" json:"prefix"`
	Hash      string `db:"key_hash" json:"-"`
	Revocation
}

// KeyRef names one key: by the hash of the whole key, or by its id within
// one account. Nothing else (a prefix, an id alone) names a key: prefixes
// may collide, and an id alone could be another account's.
type KeyRef struct {
	Hash      string
	AccountID int64
	KeyID     int64
}

// RevokeAPIKey revokes the one active key ref names, or returns ErrNotFound,
// then waits up to confirmWithin for every running server to confirm it has
// forgotten it, so that once it returns the next request with the key fails
// on any server. A server that does not confirm in time (it lost its
// database connection, say) is not trusting its cache anyway, or drops the
// entry when it expires; Confirmed < Servers tells the operator.
func (s *Store) RevokeAPIKey(ctx context.Context, ref KeyRef, confirmWithin time.Duration) (RevokedKey, error) {
	var query string
	var args []any
	switch {
	case ref.Hash != "" && ref.AccountID == 0 && ref.KeyID == 0:
		query, args = `UPDATE api_keys SET revoked_at = now() WHERE key_hash = $1 AND revoked_at IS NULL
			RETURNING id, account_id, key_prefix, key_hash`, []any{ref.Hash}
	case ref.Hash == "" && ref.AccountID > 0 && ref.KeyID > 0:
		query, args = `UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND account_id = $2 AND revoked_at IS NULL
			RETURNING id, account_id, key_prefix, key_hash`, []any{ref.KeyID, ref.AccountID}
	default:
		return RevokedKey{}, errors.New("revoke api key: name it by its hash, or by an account and a key id")
	}
	// Listening starts before the revocation commits, so no confirmation
	// can arrive unheard.
	acks := pq.NewListener(s.sessionURL, 100*time.Millisecond, time.Second, nil)
	defer acks.Close()
	if err := acks.Listen(keyAppliedChannel); err != nil {
		return RevokedKey{}, fmt.Errorf("listen for confirmations: %w", err)
	}
	// Servers that connect from here on start with nothing remembered;
	// those connected before were listening when the revocation committed.
	var before time.Time
	if err := s.db.GetContext(ctx, &before, `SELECT clock_timestamp()`); err != nil {
		return RevokedKey{}, fmt.Errorf("revoke api key: %w", err)
	}
	var key RevokedKey
	err := s.db.GetContext(ctx, &key, query, args...)
	if errors.Is(err, sql.ErrNoRows) {
		return RevokedKey{}, ErrNotFound
	}
	if err != nil {
		return RevokedKey{}, fmt.Errorf("revoke api key: %w", err)
	}
	key.Revoked = 1
	key.Revocation, err = s.awaitConfirmations(ctx, acks, before, key.Revocation, []string{key.Hash}, confirmWithin)
	return key, err
}

// awaitConfirmations waits until every server watching keys since before
// confirms having forgotten hashes, or confirmWithin passes.
func (s *Store) awaitConfirmations(ctx context.Context, acks *pq.Listener, before time.Time, rev Revocation,
	hashes []string, confirmWithin time.Duration) (Revocation, error) {
	var watchers []string
	if err := s.db.SelectContext(ctx, &watchers, `SELECT substr(application_name, $1) FROM pg_stat_activity
		WHERE datname = current_database() AND starts_with(application_name, $2) AND backend_start < $3`,
		len(keyWatchAppPrefix)+1, keyWatchAppPrefix, before); err != nil {
		return rev, fmt.Errorf("list servers watching keys: %w", err)
	}
	rev.Servers = len(watchers)
	pending := map[string]map[string]bool{} // watcher id -> revoked hashes not yet confirmed
	for _, w := range watchers {
		pending[w] = map[string]bool{}
		for _, h := range hashes {
			pending[w][h] = true
		}
	}
	timeout := time.NewTimer(confirmWithin)
	defer timeout.Stop()
	for len(pending) > 0 {
		select {
		case <-ctx.Done():
			return rev, ctx.Err()
		case <-timeout.C:
			return rev, nil
		case n := <-acks.Notify:
			if n == nil {
				continue
			}
			w, h, _ := strings.Cut(n.Extra, " ")
			if left, ok := pending[w]; ok {
				delete(left, h)
				if len(left) == 0 {
					delete(pending, w)
					rev.Confirmed++
				}
			}
		}
	}
	return rev, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
