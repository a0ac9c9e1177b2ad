package store_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/internal/tcprelay"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// addDriver stores one applicant of acct on the database of s and returns
// its id.
func addDriver(t *testing.T, s *store.Store, acct int64, email string) int64 {
	t.Helper()
	var id int64
	err := s.DB().GetContext(context.Background(), &id, `WITH d AS (INSERT INTO drivers (email_key) VALUES ($2) RETURNING id)
		INSERT INTO applications (account_id, driver_id, sent, email, first_name, last_name, address, city, zip,
		                          phone, experience, state, driver_type, email_key, phone_digits,
		                          first_name_key, last_name_key, experience_years, endorsements)
		SELECT $1, d.id, now(), $2, 'R', 'R', '1 Main St', 'Town', '68102', '4025550100', '1',
		       'NE', 'Student', $2, '4025550100', 'r', 'r', 1, '{}' FROM d RETURNING driver_id`, acct, email)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// hostPort is the host:port of a database URL.
func hostPort(t testing.TB, dbURL string) string {
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// closedURL is a database URL where nothing listens.
func closedURL(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "postgres://jobboard@" + addr + "/jobboard?sslmode=disable"
}

// TestReadDatabase: the drivers list and detail come from the read
// database when there is one, and from the primary when there is none or
// it cannot be reached; a driver the read database does not have yet (a
// standby behind) is still found by its id.
func TestReadDatabase(t *testing.T) {
	for _, tt := range []struct {
		name string
		read func(t testing.TB) string
		// listed is how many drivers the list shows: the primary has one,
		// the standby behind it none.
		listed int
		want   store.ReadDatabaseStatus
		// replication is what ReadReplication answers, nil for an error.
		// The stand-in for a standby is a database of its own, not in
		// recovery, with nothing replayed, so nothing behind (the
		// topology's test reads a real standby).
		replication *store.ReadReplication
	}{
		{"none", func(testing.TB) string { return "" }, 1, store.ReadDatabaseStatus{}, nil},
		{"a standby behind the primary", storetest.URL, 0, store.ReadDatabaseStatus{Configured: true, Up: true},
			&store.ReadReplication{Standby: false}},
		{"unreachable", closedURL, 1, store.ReadDatabaseStatus{Configured: true, Up: false, Fallbacks: 3}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			primaryURL := storetest.URL(t)
			s, err := store.Open(ctx, primaryURL, store.ReadURL(tt.read(t)))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			acct := storetest.NewAccount(t, s, "reads").AccountID
			id := addDriver(t, s, acct, "r@example.com")
			items, total, err := s.ListDrivers(ctx, acct, store.DriverFilter{Limit: 10})
			if err != nil || len(items) != tt.listed || total != int64(tt.listed) {
				t.Errorf("list: %d drivers, total %d, %v; want %d", len(items), total, err, tt.listed)
			}
			if d, err := s.Driver(ctx, acct, id); err != nil || d.Email != "r@example.com" {
				t.Errorf("detail: %+v, %v", d, err)
			}
			if _, err := s.Driver(ctx, acct, id+1); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("detail of a driver nowhere: %v, want ErrNotFound", err)
			}
			if got := s.ReadDatabase(); got != tt.want {
				t.Errorf("read database %+v, want %+v", got, tt.want)
			}
			got, err := s.ReadReplication(ctx)
			switch {
			case tt.replication == nil && err == nil:
				t.Errorf("replication %+v, want an error", got)
			case tt.replication != nil && (err != nil || got != *tt.replication):
				t.Errorf("replication %+v, %v; want %+v", got, err, *tt.replication)
			}
		})
	}
}

// TestReadDatabaseComesBack: while the read database is down, reads go to
// the primary without trying it again for a while; once it is back, the
// next try finds it and reads go to it again.
func TestReadDatabaseComesBack(t *testing.T) {
	ctx := context.Background()
	primaryURL := storetest.URL(t)
	fwd := tcprelay.Start(t, hostPort(t, primaryURL))
	s, err := store.Open(ctx, primaryURL, store.ReadURL(strings.Replace(primaryURL, hostPort(t, primaryURL), fwd.Addr(), 1)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	clock := time.Now()
	s.SetReadClock(func() time.Time { return clock })
	acct := storetest.NewAccount(t, s, "reads").AccountID
	list := func(step string, want store.ReadDatabaseStatus) {
		t.Helper()
		if items, _, err := s.ListDrivers(ctx, acct, store.DriverFilter{Limit: 10}); err != nil || len(items) != 1 {
			t.Fatalf("%s: list %d drivers, %v", step, len(items), err)
		}
		if got := s.ReadDatabase(); got != want {
			t.Errorf("%s: read database %+v, want %+v", step, got, want)
		}
	}
	addDriver(t, s, acct, "r@example.com")
	list("up", store.ReadDatabaseStatus{Configured: true, Up: true})
	fwd.Cut()
	list("just stopped", store.ReadDatabaseStatus{Configured: true, Fallbacks: 1})
	fwd.Restore()
	list("back, before the retry", store.ReadDatabaseStatus{Configured: true, Fallbacks: 2})
	clock = clock.Add(5 * time.Second)
	list("back, at the retry", store.ReadDatabaseStatus{Configured: true, Up: true, Fallbacks: 2})
	list("back", store.ReadDatabaseStatus{Configured: true, Up: true, Fallbacks: 2})
}

// TestPrimaryStatus: the test cluster is a primary, and a slot without a
// consumer is listed as inactive, keeping the WAL written since it was
// made.
func TestPrimaryStatus(t *testing.T) {
	ctx := context.Background()
	s := storetest.Store(t)
	slot := fmt.Sprintf("test_slot_%d", time.Now().UnixNano())
	if _, err := s.DB().ExecContext(ctx, `SELECT pg_create_physical_replication_slot($1, true)`, slot); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = s.DB().ExecContext(ctx, `SELECT pg_drop_replication_slot($1)`, slot) })
	if _, err := s.DB().ExecContext(ctx, `CREATE TABLE wal_written AS SELECT g FROM generate_series(1, 10000) g`); err != nil {
		t.Fatal(err)
	}
	p, err := s.PrimaryStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p.InRecovery {
		t.Error("the test cluster is reported in recovery")
	}
	slots := p.Slots
	var found *store.ReplicationSlot
	for i := range slots {
		if slots[i].Name == slot {
			found = &slots[i]
		}
	}
	if found == nil || found.Active || found.RetainedBytes < 100_000 {
		t.Errorf("slot %s: %+v in %+v; want it inactive, keeping the 100 KB or more written since", slot, found, slots)
	}
}
