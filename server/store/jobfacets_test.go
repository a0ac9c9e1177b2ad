package store_test

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/domain"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// facetedJob is job i of a feed whose facet values vary with i and round:
// states, freights, route lists, and a pay frequency and license class
// that are sometimes absent.
func facetedJob(i, round int) store.JobFields {
	j := job(fmt.Sprintf("F%04d", i))
	k := i + round
	j.State = []string{"TX", "CA", "OH", "WY"}[k%4]
	j.FreightType = []domain.FreightType{"Dry Van", "Tanker", "Reefer"}[k%3]
	j.RouteType = [][]domain.RouteType{{}, {"OTR"}, {"Regional", "Local"}}[(k/2)%3]
	if k%5 != 0 {
		j.PayFrequency = new(domain.PayFrequency([]string{"Weekly", "Hourly"}[k%2]))
	}
	if k%7 != 0 {
		j.LicenseClass = new(domain.LicenseClass([]string{"A", "B", "None"}[k%3]))
	}
	return j
}

// keptCountsDiffer lists where job_facet_counts' sums differ from the
// active jobs counted afresh: per account and under account 0, in every
// job and in each sample as the search reads it (its jobs in
// job_search_sample that meet its condition).
func keptCountsDiffer(t *testing.T, s *store.Store) []string {
	t.Helper()
	const columns = "account_id, state, driver_type, freight_type, pay_frequency, license_class, route_type, employment_type"
	shares, froms, conditions := store.SearchSamples()
	sampled := []string{"SELECT 1 AS sample, " + columns + " FROM jobs j WHERE j.deleted_at IS NULL"}
	for i, c := range conditions {
		sampled = append(sampled, fmt.Sprintf("SELECT %d, %s FROM %s WHERE %s", shares[i], columns, froms[i], cmp.Or(c, "true")))
	}
	var diffs []string
	err := s.DB().SelectContext(context.Background(), &diffs, `
		WITH s AS (`+strings.Join(sampled, " UNION ALL ")+`),
		keys AS (
			SELECT account_id, sample, 'all' AS facet, '' AS value FROM s
			UNION ALL SELECT account_id, sample, 'state', state FROM s
			UNION ALL SELECT account_id, sample, 'driver_type', driver_type FROM s
			UNION ALL SELECT account_id, sample, 'freight_type', freight_type FROM s
			UNION ALL SELECT account_id, sample, 'pay_frequency', pay_frequency FROM s WHERE pay_frequency IS NOT NULL
			UNION ALL SELECT account_id, sample, 'license_class', license_class FROM s WHERE license_class IS NOT NULL
			UNION ALL SELECT account_id, sample, 'route_type', unnest(route_type) FROM s
			UNION ALL SELECT account_id, sample, 'employment_type', unnest(employment_type) FROM s),
		truth AS (
			SELECT a, sample, facet, value, count(*) AS n
			  FROM (SELECT account_id AS a, sample, facet, value FROM keys
			        UNION ALL SELECT 0, sample, facet, value FROM keys) k
			 GROUP BY 1, 2, 3, 4),
		kept AS (
			SELECT account_id AS a, sample, facet, value, sum(n) AS n FROM job_facet_counts
			 GROUP BY 1, 2, 3, 4 HAVING sum(n) <> 0)
		SELECT format('%s %s %s=%s: kept %s, jobs %s', coalesce(k.a, t.a), coalesce(k.sample, t.sample),
		              coalesce(k.facet, t.facet), coalesce(k.value, t.value), coalesce(k.n, 0), coalesce(t.n, 0))
		  FROM kept k FULL JOIN truth t USING (a, sample, facet, value)
		 WHERE k.n IS DISTINCT FROM t.n`)
	if err != nil {
		t.Fatal(err)
	}
	return diffs
}

// sampleRowsDiffer lists the jobs whose row in job_search_sample differs
// from the job, or is there for an inactive job or one of no sample, or is
// missing for an active job of the sample of 1 in 16.
func sampleRowsDiffer(t *testing.T, s *store.Store) []string {
	t.Helper()
	const columns = `id, account_id, created_at, postal_code, state, freight_type, driver_type, pay_frequency,
		route_type, employment_type, license_class, twic_only, pay_amount_min, pay_amount_max, search_words`
	var diffs []string
	err := s.DB().SelectContext(context.Background(), &diffs, `
		WITH truth AS (SELECT `+columns+` FROM jobs WHERE deleted_at IS NULL AND (hashint8extended(id, 11) & 15) = 0),
		kept AS (SELECT `+columns+` FROM job_search_sample)
		(SELECT 'missing or differs: ' || id FROM (SELECT * FROM truth EXCEPT SELECT * FROM kept) m)
		UNION ALL
		(SELECT 'extra or differs: ' || id FROM (SELECT * FROM kept EXCEPT SELECT * FROM truth) x)`)
	if err != nil {
		t.Fatal(err)
	}
	return diffs
}

// TestJobFacetCountsFollowWrites: every write to jobs (a post of new
// jobs, changed ones, deletes by id and by reference, a deleted job
// brought back, an import's delete of the jobs its feed left out) keeps
// job_facet_counts equal to the active jobs and job_search_sample to the
// active jobs of its sample, and a fold leaves one row a value with the
// same sums.
func TestJobFacetCountsFollowWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.Store(t)
	a := storetest.NewAccount(t, s, "facets a").AccountID
	b := storetest.NewAccount(t, s, "facets b").AccountID
	opts := store.UpsertOptions{MaxActive: 10000, Today: day1}
	post := func(acct int64, from, to, round int) {
		t.Helper()
		jobs := make([]store.JobFields, 0, to-from)
		for i := from; i < to; i++ {
			jobs = append(jobs, facetedJob(i, round))
		}
		if _, err := s.UpsertJobs(ctx, acct, jobs, opts); err != nil {
			t.Fatal(err)
		}
	}
	check := func(step string) {
		t.Helper()
		if diffs := keptCountsDiffer(t, s); len(diffs) > 0 {
			t.Fatalf("%s: %d counts differ, first %v", step, len(diffs), diffs[:min(len(diffs), 5)])
		}
		if diffs := sampleRowsDiffer(t, s); len(diffs) > 0 {
			t.Fatalf("%s: %d sampled jobs differ, first %v", step, len(diffs), diffs[:min(len(diffs), 5)])
		}
	}
	post(a, 0, 600, 0)
	post(b, 0, 200, 0)
	check("new jobs")
	post(a, 0, 300, 1) // 300 changed, and unchanged ones
	post(a, 300, 600, 0)
	check("changed jobs")
	listed, err := s.ListJobs(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, j := range listed[:100] {
		ids = append(ids, j.ID)
	}
	if _, err := s.DeleteJobsByID(ctx, a, ids); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteJobsByReference(ctx, b, []string{"F0001", "F0002", "F0003"}); err != nil {
		t.Fatal(err)
	}
	check("deleted jobs")
	post(a, 0, 50, 2) // 50 of the deleted ones back, changed
	check("jobs brought back")
	err = s.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.DeleteJobsExcept(ctx, b, []string{"F0100", "F0101"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	check("jobs a feed left out")
	// Rows removed from the table, active or not, as a removed account's
	// jobs would go.
	if _, err := s.DB().ExecContext(ctx, `DELETE FROM jobs WHERE account_id = $1 AND id % 3 = 0`, a); err != nil {
		t.Fatal(err)
	}
	check("jobs removed")

	s.FoldWrittenCounts(ctx)
	check("folded")
	var repeated int
	if err := s.DB().GetContext(ctx, &repeated, `SELECT count(*) FROM (SELECT 1 FROM job_facet_counts
		 WHERE account_id = ANY ($1::bigint[]) GROUP BY account_id, facet, sample, value HAVING count(*) > 1) r`,
		[]int64{0, a, b}); err != nil {
		t.Fatal(err)
	}
	if repeated > 0 {
		t.Errorf("after the fold, %d values still have more than one row", repeated)
	}
}

// TestJobFacetCountsConcurrent: posts of changed jobs racing each other in
// one account and in another, with the fold loop running, leave the kept
// counts equal to the jobs. Each post changes every job's values, so
// every statement moves every count.
func TestJobFacetCountsConcurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.Store(t)
	accounts := []int64{storetest.NewAccount(t, s, "race a").AccountID, storetest.NewAccount(t, s, "race b").AccountID}
	stop := s.StartCountFolding(ctx)
	opts := store.UpsertOptions{MaxActive: 10000, Today: day1}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 4 {
		wg.Go(func() {
			acct := accounts[w%2]
			for round := range 6 {
				jobs := make([]store.JobFields, 0, 100)
				for i := range 100 {
					jobs = append(jobs, facetedJob(i+(w/2)*50, round+w))
				}
				if _, err := s.UpsertJobs(ctx, acct, jobs, opts); err != nil {
					errs <- err
					return
				}
				if round == 3 {
					if _, err := s.DeleteJobsByReference(ctx, acct, []string{"F0010", "F0060"}); err != nil {
						errs <- err
						return
					}
				}
				time.Sleep(time.Duration(w) * time.Millisecond)
			}
		})
	}
	wg.Wait()
	stop()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if diffs := keptCountsDiffer(t, s); len(diffs) > 0 {
		t.Fatalf("%d counts differ, first %v", len(diffs), diffs[:min(len(diffs), 5)])
	}
	if diffs := sampleRowsDiffer(t, s); len(diffs) > 0 {
		t.Fatalf("%d sampled jobs differ, first %v", len(diffs), diffs[:min(len(diffs), 5)])
	}
}

// TestWorthReading: once a match is known large, a sample is read whole
// for its facets only when it may settle an open value and no open value
// needs a larger sample, which would settle them all in one read; the
// sample of 1 in 8 is never read whole for them. At the test's numbers, a
// sample of about 72 jobs of a value (all matching) may settle it
// (mayReachShare, at half the margin of the 144 that settle it).
func TestWorthReading(t *testing.T) {
	counts := map[int64]map[string]int64{
		64: {"big": 400, "mid": 40, "small": 5},
		16: {"big": 1600, "mid": 160, "small": 20},
		8:  {"big": 3200, "mid": 320, "small": 40},
	}
	for _, tt := range []struct {
		name string
		open []string
		next []int64
		want bool
	}{
		{"a value it may settle", []string{"big"}, []int64{64, 16, 8}, true},
		{"a value needs the larger", []string{"big", "mid"}, []int64{64, 16, 8}, false},
		{"the larger for that value", []string{"big", "mid"}, []int64{16, 8}, true},
		{"a value no sample settles is left to count", []string{"big", "small"}, []int64{64, 16, 8}, true},
		{"only values no sample settles", []string{"small"}, []int64{64, 16, 8}, false},
		{"not 1 in 8", []string{"mid", "small"}, []int64{8}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			open := map[string]float64{}
			for _, v := range tt.open {
				open[v] = 1
			}
			if got := store.WorthReading(open, tt.next, counts); got != tt.want {
				t.Errorf("WorthReading(%v, %v) = %v, want %v", tt.open, tt.next, got, tt.want)
			}
		})
	}
}

// TestSettles: a value's share of matching jobs settles its estimate when
// its Wilson interval at four standard errors lies within 10% of it, or
// when it holds the matches a plain estimate needs.
func TestSettles(t *testing.T) {
	for _, tt := range []struct {
		name string
		m, n int64
		want bool
	}{
		{"no match seen", 0, 100, false},
		{"40 of 40: the share may be 0.75", 40, 40, false},
		{"145 of 145", 145, 145, true},
		{"a small state under a common word in 1 of 64: 85 of 87", 85, 87, false},
		{"the same in 1 of 16: 340 of 350", 340, 350, true},
		{"a small state under two words: 30 of 350", 30, 350, false},
		{"a plain estimate's 1,600 matches, whatever the jobs", 1600, 1_000_000, true},
		{"half of 3,000", 1500, 3000, true},
		{"half of 1,500", 750, 1500, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := store.Settles(tt.m, tt.n); got != tt.want {
				t.Errorf("Settles(%d, %d) = %v, want %v", tt.m, tt.n, got, tt.want)
			}
		})
	}
}
