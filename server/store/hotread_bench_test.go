package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/truckjobs/jobboard/internal/pgtest"
	"github.com/truckjobs/jobboard/internal/testfix"
	"github.com/truckjobs/jobboard/server/store"
)

// BenchmarkJobByID runs the retrieve's read, 32 at a time, the way the
// store runs it (an unnamed statement, parse, bind and execute in one
// batch, which PgBouncer in transaction mode accepts) and the two ways
// lib/pq offers otherwise: a named statement prepared on each connection
// (one round trip, which the store used before it had to work behind
// PgBouncer), and an unnamed one by default (two round trips, parse then
// bind). All three in one run, on one database, so the ratios compare
// like with like.
func BenchmarkJobByID(b *testing.B) {
	ctx := context.Background()
	url := pgtest.URL(b)
	s, err := store.Open(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	acct := testfix.NewAccount(b, s, "bench").AccountID
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
	plain, err := sqlx.Open("postgres", url)
	if err != nil {
		b.Fatal(err)
	}
	defer plain.Close()
	plain.SetMaxOpenConns(20)
	plain.SetMaxIdleConns(20)
	named, err := plain.PreparexContext(ctx, store.JobByIDQuery)
	if err != nil {
		b.Fatal(err)
	}
	defer named.Close()
	for _, way := range []struct {
		name string
		get  func(j *store.Job, id int64) error
	}{
		{"store one batch", func(j *store.Job, id int64) (err error) { *j, err = s.Job(ctx, acct, id); return err }},
		{"named prepared", func(j *store.Job, id int64) error { return named.GetContext(ctx, j, acct, id) }},
		{"default two round trips", func(j *store.Job, id int64) error { return plain.GetContext(ctx, j, store.JobByIDQuery, acct, id) }},
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
