package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/truckjobs/jobboard/internal/pgbouncertest"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// BenchmarkJobByID runs the retrieve's read, 32 at a time, the ways the
// store may run it: on a direct connection as a named statement prepared
// on each connection (one round trip, no planning), and through PgBouncer
// in transaction mode as an unnamed statement parsed, bound and executed
// in one batch (planned on every run, and a hop more); then, on a direct
// connection, the same one batch unprepared (the cost of planning alone)
// and lib/pq's default for an unnamed statement (two round trips, parse
// then bind). All in one run, on one database, so the ratios compare like
// with like.
func BenchmarkJobByID(b *testing.B) {
	ctx := context.Background()
	url := storetest.URL(b)
	s, err := store.Open(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	pooled, err := store.Open(ctx, pgbouncertest.Start(b, url, pgbouncertest.Options{PoolSize: 20}).URL())
	if err != nil {
		b.Fatal(err)
	}
	defer pooled.Close()
	if !s.Route().Direct || pooled.Route().Direct {
		b.Fatalf("direct store %+v, through PgBouncer %+v", s.Route(), pooled.Route())
	}
	acct := storetest.NewAccount(b, s, "bench").AccountID
	jobs := make([]store.JobFields, 1000)
	for i := range jobs {
		jobs[i] = job(fmt.Sprintf("H%d", i))
	}
	if _, err := s.UpsertJobs(ctx, acct, jobs, store.UpsertOptions{MaxActive: 1_000_000, Today: day1}); err != nil {
		b.Fatal(err)
	}
	listed, err := s.ListJobs(ctx, acct)
	if err != nil {
		b.Fatal(err)
	}
	batch, plain := openPlain(b, url+"&binary_parameters=yes"), openPlain(b, url)
	for _, way := range []struct {
		name string
		get  func(j *store.Job, id int64) error
	}{
		{"store direct prepared", func(j *store.Job, id int64) (err error) { *j, err = s.Job(ctx, acct, id); return err }},
		{"store through PgBouncer", func(j *store.Job, id int64) (err error) { *j, err = pooled.Job(ctx, acct, id); return err }},
		{"direct one batch unprepared", func(j *store.Job, id int64) error {
			return batch.QueryRowContext(ctx, store.JobByIDQuery, acct, id).Scan(store.JobScanDest(j)...)
		}},
		{"direct default two round trips", func(j *store.Job, id int64) error {
			return plain.QueryRowContext(ctx, store.JobByIDQuery, acct, id).Scan(store.JobScanDest(j)...)
		}},
	} {
		b.Run(way.name, func(b *testing.B) {
			b.SetParallelism(16) // 32 goroutines on two cores
			b.RunParallel(func(pb *testing.PB) {
				var j store.Job
				for i := 0; pb.Next(); i++ {
					if err := way.get(&j, listed[i%len(listed)].ID); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// openPlain is a pool of lib/pq's own, sized like the store's.
func openPlain(b *testing.B, url string) *sqlx.DB {
	db, err := sqlx.Open("postgres", url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(20)
	db.SetMaxIdleConns(20)
	return db
}
