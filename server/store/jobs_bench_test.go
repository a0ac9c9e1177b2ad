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

// BenchmarkListJobs reads an account's 10,000 jobs in one select (bench
// scenario 3's floor) and page by page, as the jobs list streams them.
func BenchmarkListJobs(b *testing.B) {
	ctx := context.Background()
	s := storetest.Store(b)
	acct := storetest.NewAccount(b, s, "bench").AccountID
	for chunk := range 10 {
		jobs := make([]store.JobFields, 1000)
		for i := range jobs {
			jobs[i] = job(fmt.Sprintf("L%05d", chunk*1000+i))
			jobs[i].City = new("Dallas")
		}
		if _, err := s.UpsertJobs(ctx, acct, jobs, store.UpsertOptions{MaxActive: 1_000_000, Today: day1}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("select", func(b *testing.B) {
		for b.Loop() {
			if jobs, err := s.ListJobs(ctx, acct); err != nil || len(jobs) != 10_000 {
				b.Fatal(len(jobs), err)
			}
		}
	})
	for _, size := range []int{1000, 10_000} {
		b.Run(fmt.Sprintf("pages of %d", size), func(b *testing.B) {
			for b.Loop() {
				var n int
				for after, more := int64(0), true; more; {
					page, err := s.ListJobsPage(ctx, acct, after, size, 64<<20)
					if err != nil {
						b.Fatal(err)
					}
					n += len(page.Jobs)
					after, more = page.Jobs[len(page.Jobs)-1].ID, page.More
				}
				if n != 10_000 {
					b.Fatal(n)
				}
			}
		})
	}
}

// BenchmarkUpsertJobsSearchCost writes 1,000 new jobs of the size make
// bench posts (a description of some 230 bytes of HTML, two lines of
// requirements) with the search's part of a job's write in place, and with
// it removed from the database (searchRemoved): the difference is what job
// search costs a post. A search must find a job as soon as its post is
// answered (contract §11), so its words, indexes, sample and counts are
// written in the post's transaction.
func BenchmarkUpsertJobsSearchCost(b *testing.B) {
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		remove bool
	}{{"with search", false}, {"without search", true}} {
		b.Run(c.name, func(b *testing.B) {
			s := storetest.Store(b)
			if c.remove {
				searchRemoved(b, s)
			}
			acct := storetest.NewAccount(b, s, "bench").AccountID
			for round := 0; b.Loop(); round++ {
				b.StopTimer()
				jobs := make([]store.JobFields, 1000)
				for i := range jobs {
					jobs[i] = postedSizeJob(fmt.Sprintf("R%dJ%d", round, i))
				}
				b.StartTimer()
				if _, err := s.UpsertJobs(ctx, acct, jobs, store.UpsertOptions{MaxActive: 1_000_000, Today: day1}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// postedSizeJob is a job with text of the size of make bench's posts.
func postedSizeJob(ref string) store.JobFields {
	j := job(ref)
	j.City = new("Springfield")
	j.Description = "<p>Route " + ref + ": home <b>every weekend</b>. Late-model trucks with APUs, paid orientation, " +
		"weekly direct deposit, health, dental and vision from day one.</p><ul><li>No touch freight</li><li>Pet policy</li></ul>"
	j.Requirements = new("<ul><li>Class A CDL</li><li>1 year of experience</li></ul>")
	return j
}

// searchRemoved drops from s's database what job search adds to a job's
// write: the jobs' search indexes, and disables the triggers that compute
// a job's words and keep the search's sample and facet counts.
func searchRemoved(b *testing.B, s *store.Store) {
	ctx := context.Background()
	var indexes, triggers []string
	if err := s.DB().SelectContext(ctx, &indexes, `SELECT indexname FROM pg_indexes
		 WHERE tablename = 'jobs' AND indexname LIKE 'jobs\_search\_%'`); err != nil {
		b.Fatal(err)
	}
	if err := s.DB().SelectContext(ctx, &triggers, `SELECT tgname FROM pg_trigger WHERE tgrelid = 'jobs'::regclass
		 AND (tgname LIKE 'jobs\_search\_words\_%' OR tgname LIKE 'jobs\_sampled\_%' OR tgname LIKE 'jobs\_facets\_counted\_%')`); err != nil {
		b.Fatal(err)
	}
	if len(indexes) < 4 || len(triggers) != 8 {
		b.Fatalf("search's indexes %q and triggers %q: not those this benchmark knows", indexes, triggers)
	}
	for _, ix := range indexes {
		if _, err := s.DB().ExecContext(ctx, `DROP INDEX `+ix); err != nil {
			b.Fatal(err)
		}
	}
	for _, tg := range triggers {
		if _, err := s.DB().ExecContext(ctx, `ALTER TABLE jobs DISABLE TRIGGER `+tg); err != nil {
			b.Fatal(err)
		}
	}
}
