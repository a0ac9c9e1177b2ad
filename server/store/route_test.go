package store_test

import (
	"context"
	"net/netip"
	"strings"
	"testing"

	"github.com/truckjobs/jobboard/internal/pgbouncertest"
	"github.com/truckjobs/jobboard/internal/tcprelay"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// TestRoute: the hottest reads run as named prepared statements only when
// the connection reaches PostgreSQL itself; through PgBouncer in
// transaction mode or a plain TCP relay they are sent unprepared, and a
// connection that is not direct prepares nothing even when told to.
func TestRoute(t *testing.T) {
	direct := storetest.URL(t)
	bouncer := pgbouncertest.Start(t, direct, pgbouncertest.Options{PoolSize: 1})
	host := strings.TrimPrefix(direct, "postgres://jobboard@")
	target := host[:strings.Index(host, "/")]
	relayed := strings.Replace(direct, target, tcprelay.Start(t, target).Addr(), 1)
	for _, tt := range []struct {
		name       string
		url        string
		force      bool
		wantDirect bool
		wantNamed  int
	}{
		{"direct", direct, false, true, 2},
		{"through PgBouncer", bouncer.URL(), false, false, 0},
		{"through a TCP relay", relayed, false, false, 0},
		{"through a TCP relay, prepared forced", relayed, true, false, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			s, err := store.Open(ctx, tt.url)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got := s.Route(); got.Direct != tt.wantDirect || got.Reason == "" {
				t.Errorf("route %+v, want direct %v with a reason", got, tt.wantDirect)
			}
			if tt.force {
				s.ForcePrepared()
			}
			// One connection, so the count of named statements below is
			// the one the reads used.
			s.DB().SetMaxOpenConns(1)
			if got := namedAfterHotReads(t, s); got != tt.wantNamed {
				t.Errorf("%d named prepared statements on the connection, want %d", got, tt.wantNamed)
			}
		})
	}
}

// namedAfterHotReads runs the job retrieve and the key lookup and counts
// the named statements of the connection they ran on.
func namedAfterHotReads(t *testing.T, s *store.Store) int {
	ctx := context.Background()
	a := storetest.NewAccount(t, s, "route")
	if _, err := s.UpsertJobs(ctx, a.AccountID, []store.JobFields{job("R1")}, store.UpsertOptions{MaxActive: 10, Today: day1}); err != nil {
		t.Fatal(err)
	}
	jobs, err := s.ListJobs(ctx, a.AccountID)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("list jobs: %d, %v", len(jobs), err)
	}
	for range 2 {
		if j, err := s.Job(ctx, a.AccountID, jobs[0].ID); err != nil || j.ReferenceNumber != "R1" {
			t.Fatalf("job: %+v, %v", j, err)
		}
		if id, err := s.AccountIDByKeyHash(ctx, "no such key"); err == nil {
			t.Fatalf("key lookup found account %d", id)
		}
	}
	var n int
	if err := s.DB().GetContext(ctx, &n, `SELECT count(*) FROM pg_prepared_statements WHERE NOT from_sql`); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCompareRoute: a connection is direct only when the server's view of
// both ends equals the client's socket.
func TestCompareRoute(t *testing.T) {
	ap := netip.MustParseAddrPort
	client, pg := ap("127.0.0.1:40000"), ap("127.0.0.1:5432")
	for _, tt := range []struct {
		name           string
		server, seenBy netip.AddrPort
		want           bool
	}{
		{"the same connection", pg, client, true},
		{"the server listens elsewhere (PgBouncer, a relay)", ap("127.0.0.1:5433"), ap("127.0.0.1:40001"), false},
		// An SSH tunnel or forwarded port on 5432 to a pooler that reaches
		// a PostgreSQL on its own 127.0.0.1:5432.
		{"the same server end from another connection", pg, ap("127.0.0.1:40001"), false},
		{"the same client port on another host", pg, ap("10.0.0.7:40000"), false},
		{"a Unix socket (NULL)", netip.AddrPort{}, netip.AddrPort{}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := store.CompareRoute(client, pg, tt.server, tt.seenBy); got.Direct != tt.want || got.Reason == "" {
				t.Errorf("%+v, want direct %v with a reason", got, tt.want)
			}
		})
	}
}

// TestPreparedAfterColumnChange: a column of a prepared read changes type
// under a running server (a migration): the read after it still answers,
// run unprepared while the statement is dropped, and the next prepares it
// afresh.
func TestPreparedAfterColumnChange(t *testing.T) {
	ctx := context.Background()
	s, err := store.Open(ctx, storetest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.Route().Direct {
		t.Fatalf("route %+v, want direct", s.Route())
	}
	s.DB().SetMaxOpenConns(1)
	a := storetest.NewAccount(t, s, "change")
	if _, err := s.UpsertJobs(ctx, a.AccountID, []store.JobFields{job("C1")}, store.UpsertOptions{MaxActive: 10, Today: day1}); err != nil {
		t.Fatal(err)
	}
	jobs, err := s.ListJobs(ctx, a.AccountID)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("list jobs: %d, %v", len(jobs), err)
	}
	for i, step := range []string{"prepared", "after the change", "prepared again"} {
		if i == 1 {
			if _, err := s.DB().ExecContext(ctx, `ALTER TABLE jobs ALTER COLUMN state TYPE varchar(500)`); err != nil {
				t.Fatal(err)
			}
		}
		if j, err := s.Job(ctx, a.AccountID, jobs[0].ID); err != nil || j.ReferenceNumber != "C1" {
			t.Fatalf("%s: %+v, %v", step, j, err)
		}
	}
	var n int
	if err := s.DB().GetContext(ctx, &n, `SELECT count(*) FROM pg_prepared_statements WHERE NOT from_sql`); err != nil || n != 1 {
		t.Errorf("%d named statements (%v), want the retrieve's, prepared again", n, err)
	}
}
