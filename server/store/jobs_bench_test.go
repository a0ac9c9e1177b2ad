package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// BenchmarkUpsertJobs writes 1,000 jobs in one batch: all new, all
// changed, all unchanged; the batch arrays and the equality are on the path.
func BenchmarkUpsertJobs(b *testing.B) {
	const n = 1000
	batch := func(prefix, title string) []store.JobFields {
		jobs := make([]store.JobFields, n)
		for i := range jobs {
			jobs[i] = job(fmt.Sprintf("%sJ%d", prefix, i))
			jobs[i].Title = title
			jobs[i].City = new("Dallas")
		}
		return jobs
	}
	ctx := context.Background()
	// run times one upsert per round; prepare, untimed, sets the round up.
	run := func(b *testing.B, prepare func(upsert func([]store.JobFields), round int) []store.JobFields) {
		s := storetest.Store(b)
		acct := storetest.NewAccount(b, s, "bench").AccountID
		upsert := func(jobs []store.JobFields) {
			if _, err := s.UpsertJobs(ctx, acct, jobs, store.UpsertOptions{MaxActive: 1_000_000, Today: day1}); err != nil {
				b.Fatal(err)
			}
		}
		for round := 0; b.Loop(); round++ {
			b.StopTimer()
			jobs := prepare(upsert, round)
			b.StartTimer()
			upsert(jobs)
		}
	}
	b.Run("new", func(b *testing.B) {
		run(b, func(_ func([]store.JobFields), round int) []store.JobFields {
			return batch(fmt.Sprintf("N%d", round), "Driver")
		})
	})
	b.Run("changed", func(b *testing.B) {
		run(b, func(upsert func([]store.JobFields), round int) []store.JobFields {
			upsert(batch("C", fmt.Sprintf("Driver %d", round)))
			return batch("C", fmt.Sprintf("Driver %d+", round))
		})
	})
	b.Run("unchanged", func(b *testing.B) {
		run(b, func(upsert func([]store.JobFields), _ int) []store.JobFields {
			upsert(batch("U", "Driver"))
			return batch("U", "Driver")
		})
	})
}
