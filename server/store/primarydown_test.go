package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/truckjobs/jobboard/internal/apikey"
	"github.com/truckjobs/jobboard/internal/pgbouncertest"
	"github.com/truckjobs/jobboard/internal/tcprelay"
	"github.com/truckjobs/jobboard/internal/testfix"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// TestAuthDuringPrimaryOutage: with the primary unreachable (its port
// closed, or PgBouncer in front of it, which holds queries rather than
// failing them), the lookups authentication makes fail within about a
// second, and at once while the outage is known; the read database then
// answers them as the primary did before the outage (a key revoked before
// it stays revoked), and the drivers reads, the radius filter's ZIP and a
// driver the read database does not have answer from it alone. Once the
// primary is back, a check finds it.
func TestAuthDuringPrimaryOutage(t *testing.T) {
	for _, tt := range []struct {
		name string
		// through is the primary's URL as the service reaches it, given
		// the relay's.
		through func(t *testing.T, relayed string) string
		// comesBack: the test restores the primary and waits for the check
		// (PgBouncer would retry its server only after server_login_retry).
		comesBack bool
	}{
		{"port closed", func(_ *testing.T, relayed string) string { return relayed }, true},
		{"behind PgBouncer", func(t *testing.T, relayed string) string {
			return pgbouncertest.Start(t, relayed, pgbouncertest.Options{}).URL()
		}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			direct := storetest.URL(t)
			relay := tcprelay.Start(t, hostPort(t, direct))
			s, err := store.Open(ctx, tt.through(t, strings.Replace(direct, hostPort(t, direct), relay.Addr(), 1)), store.ReadURL(direct))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			acct := storetest.NewAccount(t, s, "outage")
			revoked := revokedKey(t, s, acct.AccountID)
			driver := addDriver(t, s, acct.AccountID, "o@example.com")
			relay.Cut()

			start := time.Now()
			_, err = s.AccountIDByKeyHash(ctx, acct.KeyHash)
			took := time.Since(start)
			t.Logf("figures: the first key lookup on the unreachable primary failed after %v: %v", took.Round(time.Millisecond), err)
			if !store.IsUnavailable(err) || took > 3*time.Second {
				t.Fatalf("key lookup on the primary: %v after %v, want unavailable within 3 s", err, took)
			}
			start = time.Now()
			if _, err := s.AccountIDByKeyHash(ctx, acct.KeyHash); !errors.Is(err, store.ErrPrimaryDown) || time.Since(start) > 100*time.Millisecond {
				t.Errorf("key lookup during the known outage: %v after %v, want ErrPrimaryDown at once", err, time.Since(start))
			}
			if err := s.CheckAccount(ctx, acct.AccountID); !store.IsUnavailable(err) {
				t.Errorf("account check on the primary: %v, want unavailable", err)
			}
			checkReplicaAnswers(t, s, acct, revoked, driver)
			if got := s.ReadDatabase(); !got.PrimaryDown || got.AuthLookups != 5 {
				t.Errorf("read database %+v, want the primary down and 5 lookups answered", got)
			}
			if !tt.comesBack {
				return
			}
			relay.Restore()
			if !testfix.Eventually(10*time.Second, func() bool { _, err := s.AccountIDByKeyHash(ctx, acct.KeyHash); return err == nil }) {
				t.Errorf("the primary back: key lookups still fail: %+v", s.ReadDatabase())
			}
		})
	}
}

// revokedKey gives the account a second key, revoked, and returns its hash.
func revokedKey(t *testing.T, s *store.Store, acct int64) string {
	t.Helper()
	key := apikey.New()
	hash := apikey.Hash(key)
	if err := s.AddAPIKey(context.Background(), acct, hash, apikey.Prefix(key)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().Exec(`UPDATE api_keys SET revoked_at = now() WHERE key_hash = $1`, hash); err != nil {
		t.Fatal(err)
	}
	return hash
}

// checkReplicaAnswers checks what the read database answers for acct
// while the primary is down; it makes 5 authentication lookups.
func checkReplicaAnswers(t *testing.T, s *store.Store, acct storetest.Account, revoked string, driver int64) {
	t.Helper()
	ctx := context.Background()
	if id, err := s.ReplicaAccountIDByKeyHash(ctx, acct.KeyHash); err != nil || id != acct.AccountID {
		t.Errorf("the key on the read database: account %d, %v; want %d", id, err, acct.AccountID)
	}
	for name, hash := range map[string]string{"revoked": revoked, "wrong": apikey.Hash(apikey.New())} {
		if _, err := s.ReplicaAccountIDByKeyHash(ctx, hash); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a %s key on the read database: %v, want ErrNotFound", name, err)
		}
	}
	if err := s.ReplicaCheckAccount(ctx, acct.AccountID); err != nil {
		t.Errorf("the account on the read database: %v", err)
	}
	if err := s.ReplicaCheckAccount(ctx, acct.AccountID+1000); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("no such account on the read database: %v, want ErrNotFound", err)
	}
	if items, _, err := s.ListDrivers(ctx, acct.AccountID, store.DriverFilter{Limit: 10}); err != nil || len(items) != 1 {
		t.Errorf("drivers list: %d drivers, %v", len(items), err)
	}
	if d, err := s.Driver(ctx, acct.AccountID, driver); err != nil || d.ID != driver {
		t.Errorf("driver detail: %+v, %v", d, err)
	}
	start := time.Now()
	if _, err := s.Driver(ctx, acct.AccountID, driver+1000); !errors.Is(err, store.ErrNotFound) || time.Since(start) > time.Second {
		t.Errorf("a driver the read database does not have: %v after %v, want ErrNotFound at once", err, time.Since(start))
	}
	if _, _, err := s.ZipCentroid(ctx, "68102"); err != nil {
		t.Errorf("ZIP centroid: %v", err)
	}
}

// TestReplicaFreshnessUnanswered: a freshness check the read database
// does not answer within its bound is unavailability (a 503 the client
// retries), never the cut statement's own error, which reads as an
// internal error, nor a deadline, which reads as the request's. A bound
// of 1 ns ends before the statement is sent (database/sql's own deadline
// error); one that ends under way gets the server's 57014, as lib/pq
// answers a cancelled statement, which the table gives as such.
func TestReplicaFreshnessUnanswered(t *testing.T) {
	db := sqlx.MustOpen("postgres", storetest.URL(t))
	defer db.Close()
	if err := store.ReplicaFreshWithin(db, time.Minute); err != nil {
		t.Fatalf("a plain database, answered in time: %v, want fresh", err)
	}
	expired, cancel := context.WithTimeout(context.Background(), -time.Second)
	defer cancel()
	cut := &pq.Error{Code: "57014", Message: "canceling statement due to user request"}
	for _, tt := range []struct {
		name string
		err  error
	}{
		{"ended before it was sent", store.ReplicaFreshWithin(db, time.Nanosecond)},
		{"cut under way", store.UnansweredWithin(expired, time.Second, fmt.Errorf("check read database's age: %w", cut))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if !errors.Is(tt.err, store.ErrReplicaUnanswered) || !store.IsUnavailable(tt.err) {
				t.Errorf("%v: want ErrReplicaUnanswered, unavailable", tt.err)
			}
			if errors.Is(tt.err, context.DeadlineExceeded) || errors.As(tt.err, new(*pq.Error)) {
				t.Errorf("%v wraps the cut statement's own error", tt.err)
			}
		})
	}
	// A server's error within the bound is the check's own.
	if err := store.UnansweredWithin(context.Background(), time.Second, cut); err != cut {
		t.Errorf("within the bound: %v, want the error as it is", err)
	}
}
