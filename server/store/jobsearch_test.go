package store_test

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/domain"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// TestSearchReadsTheReadDatabase: the job search reads the read database
// when there is one, as the drivers list does, and the primary when there
// is none or it cannot be reached.
func TestSearchReadsTheReadDatabase(t *testing.T) {
	for _, tt := range []struct {
		name string
		read func(t testing.TB) string
		// found is how many jobs the search finds: the primary has one,
		// the standby behind it none.
		found int
	}{
		{"none", func(testing.TB) string { return "" }, 1},
		{"a standby behind the primary", storetest.URL, 0},
		{"unreachable", closedURL, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			s, err := store.Open(ctx, storetest.URL(t), store.ReadURL(tt.read(t)))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			acct := storetest.NewAccount(t, s, "reads").AccountID
			if _, err := s.UpsertJobs(ctx, acct, []store.JobFields{job("S1")}, store.UpsertOptions{MaxActive: 10, Today: time.Now()}); err != nil {
				t.Fatal(err)
			}
			words, err := s.NormalizeJobQuery(ctx, "drivers")
			if err != nil || words != "'driver'" {
				t.Fatalf("the query's words: %q, %v", words, err)
			}
			r, err := s.SearchJobs(ctx, store.JobSearch{Limit: 10})
			if err != nil || len(r.Jobs) != tt.found || r.Total != int64(tt.found) {
				t.Errorf("search: %d jobs, total %d, %v; want %d", len(r.Jobs), r.Total, err, tt.found)
			}
		})
	}
}

// TestSearchEstimatesLargeMatches: a match with enough jobs in the sample
// is estimated from it, within the sample's error, and says so; a facet's
// values with few jobs in the sample (or none) are counted over every job;
// a match with few is counted exactly. The test lowers the sample's
// threshold so that 3,000 jobs reach it.
func TestSearchEstimatesLargeMatches(t *testing.T) {
	ctx := context.Background()
	s := storetest.Store(t)
	acct := storetest.NewAccount(t, s, "many").AccountID
	jobs := make([]store.JobFields, 3000)
	for i := range jobs {
		jobs[i] = job(fmt.Sprintf("M%04d", i))
		if i%2 == 0 {
			jobs[i].FreightType = "Tanker"
		}
		if i < 5 {
			jobs[i].State = "AK" // a value the sample may well not hold
		}
	}
	if _, err := s.UpsertJobs(ctx, acct, jobs, store.UpsertOptions{MaxActive: 5000, Today: time.Now()}); err != nil {
		t.Fatal(err)
	}
	// About 3,000 / 16 = 187 jobs are in the largest sample and 47 in the
	// next: with 100 the estimates come from the largest, within 30% at
	// four standard errors (1/sqrt(187) = 7.3%).
	const threshold = 100
	store.SetSampleHitsToEstimate(t, threshold)
	near := func(got, want int64) bool { return math.Abs(float64(got-want)) <= 0.3*float64(want) }
	words, err := s.NormalizeJobQuery(ctx, "driver")
	if err != nil {
		t.Fatal(err)
	}
	// Another filter (every job asks for no TWIC card) keeps the search
	// from the kept counts: the match is estimated from its matches in
	// the sample, in 16s.
	r, err := s.SearchJobs(ctx, store.JobSearch{Words: words, ExcludeTWICOnly: true, Order: store.ByPosted, Limit: 5,
		Facets: []store.JobFacet{store.FacetFreightType, store.FacetState}})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Estimated || !near(r.Total, 3000) || r.Total%16 != 0 || len(r.Jobs) != 5 {
		t.Errorf("total %d, estimated %v, %d on the page; want an estimate of 3000 in 16s", r.Total, r.Estimated, len(r.Jobs))
	}
	freights := r.Facets[store.FacetFreightType]
	if len(freights) != 2 || !near(freights[0].Count, 1500) || !near(freights[1].Count, 1500) {
		t.Errorf("freight facet %v, want estimates of 1500 each", freights)
	}
	states := r.Facets[store.FacetState]
	if len(states) != 2 || states[0].Value != "TX" || !near(states[0].Count, 2995) ||
		states[1] != (store.FacetCount{Value: "AK", Count: 5}) {
		t.Errorf("state facet %v, want TX estimated near 2995, then AK counted: 5", states)
	}

	// Words alone: the match and each value are estimated as the jobs kept
	// counted times the share of the sample's that match. Every job holds
	// the word, so the share is 1 and the estimates are the jobs; Alaska,
	// in no sample, is counted.
	r, err = s.SearchJobs(ctx, store.JobSearch{Words: words, Order: store.ByPosted, Limit: 5,
		Facets: []store.JobFacet{store.FacetFreightType, store.FacetState}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[store.JobFacet][]store.FacetCount{
		store.FacetFreightType: {{Value: "Dry Van", Count: 1500}, {Value: "Tanker", Count: 1500}},
		store.FacetState:       {{Value: "TX", Count: 2995}, {Value: "AK", Count: 5}},
	}
	if !r.Estimated || r.Total != 3000 || !maps.EqualFunc(r.Facets, want, slices.Equal) {
		t.Errorf("words alone: total %d, estimated %v, facets %v; want 3000 estimated, facets %v", r.Total, r.Estimated, r.Facets, want)
	}

	// With a threshold of 5, the smallest sample (one job in 256, about
	// 12 of the 3,000) holds enough: the estimate is in 256s.
	store.SetSampleHitsToEstimate(t, 5)
	r, err = s.SearchJobs(ctx, store.JobSearch{Words: words, ExcludeTWICOnly: true, Order: store.ByPosted, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Estimated || r.Total%256 != 0 || r.Total < 3000/4 || r.Total > 3000*4 {
		t.Errorf("from the smallest sample: total %d, estimated %v; want an estimate in 256s", r.Total, r.Estimated)
	}
	store.SetSampleHitsToEstimate(t, threshold)

	// The Alaska jobs alone: too few in the sample, counted exactly.
	r, err = s.SearchJobs(ctx, store.JobSearch{Words: words, States: []string{"AK"}, Order: store.ByPosted, Limit: 10,
		Facets: []store.JobFacet{store.FacetFreightType}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Estimated || r.Total != 5 || len(r.Jobs) != 5 {
		t.Errorf("Alaska: total %d, estimated %v, %d on the page; want 5 counted", r.Total, r.Estimated, len(r.Jobs))
	}
	if f := r.Facets[store.FacetFreightType]; len(f) != 2 || f[0] != (store.FacetCount{Value: "Tanker", Count: 3}) {
		t.Errorf("Alaska's freight facet %v, want Tanker 3, Dry Van 2", f)
	}
}

// TestSearchSettlesSmallValuesInALargerSample: once a sample holds enough
// matches to estimate the match, a facet value it holds too few jobs of to
// settle is settled in a larger sample, read for the open values' jobs
// alone, rather than counted over every job. Every job holds the word, so
// each estimate is its value's jobs exactly. The test lowers the sample's
// threshold so that the sample of 1 in 64 of 4,000 jobs (some 62) is large,
// and moves to Alaska 2 jobs of that sample (too few to settle: 4 at
// least), 10 more of the sample of 1 in 16 and 20 of no sample.
func TestSearchSettlesSmallValuesInALargerSample(t *testing.T) {
	ctx := context.Background()
	s := storetest.Store(t)
	acct := storetest.NewAccount(t, s, "states").AccountID
	jobs := make([]store.JobFields, 4000)
	for i := range jobs {
		jobs[i] = job(fmt.Sprintf("S%04d", i))
	}
	words := postForWords(t, s, acct, jobs, "driver")
	var placed []struct {
		Ref    string `db:"reference_number"`
		Sample int    `db:"sample"`
	}
	if err := s.DB().SelectContext(ctx, &placed, `SELECT reference_number,
		CASE WHEN (hashint8extended(id, 11) & 63) = 0 THEN 64 WHEN (hashint8extended(id, 11) & 15) = 0 THEN 16 ELSE 1 END AS sample
		FROM jobs WHERE account_id = $1 ORDER BY reference_number`, acct); err != nil {
		t.Fatal(err)
	}
	alaska, left := []store.JobFields{}, map[int]int{64: 2, 16: 10, 1: 20}
	for _, p := range placed {
		if left[p.Sample] > 0 {
			left[p.Sample]--
			j := job(p.Ref)
			j.State = "AK"
			alaska = append(alaska, j)
		}
	}
	postForWords(t, s, acct, alaska, "driver")
	store.SetSampleHitsToEstimate(t, 40)
	r, ran, err := s.SearchJobsTraced(ctx, store.JobSearch{Words: words, Order: store.ByPosted, Limit: 5,
		Facets: []store.JobFacet{store.FacetState, store.FacetDriverType}})
	if err != nil {
		t.Fatal(err)
	}
	want := []store.FacetCount{{Value: "TX", Count: 3968}, {Value: "AK", Count: 32}}
	if !r.Estimated || !slices.Equal(r.Facets[store.FacetState], want) {
		t.Errorf("state facet %v, estimated %v; want %v estimated", r.Facets[store.FacetState], r.Estimated, want)
	}
	// The driver type, settled in the first large sample, is left out of
	// the later read.
	if want := []store.FacetCount{{Value: "Company Driver", Count: 4000}}; !slices.Equal(r.Facets[store.FacetDriverType], want) {
		t.Errorf("driver type facet %v; want %v", r.Facets[store.FacetDriverType], want)
	}
	readForAlaska, overEveryJob := 0, 0
	for _, q := range ran {
		switch {
		case strings.Contains(q.SQL, "FROM job_search_sample j") && strings.Contains(q.SQL, "IS TRUE"):
			readForAlaska++
			if strings.Contains(q.SQL, "driver_type") {
				t.Errorf("the read for Alaska groups by driver type too: %s", q.SQL)
			}
		case strings.Contains(q.SQL, "FROM jobs j") && strings.Contains(q.SQL, "GROUP BY"):
			overEveryJob++
		}
	}
	if readForAlaska != 1 || overEveryJob != 0 {
		t.Errorf("%d reads of a sample for the open values, %d counts over every job; want 1, 0", readForAlaska, overEveryJob)
	}
}

// TestSearchLargeByTheSmallestSampleYetSmall: when the smallest sample
// shows a match large, the page is read beside the larger samples'
// counts without counting the match itself; should those samples then
// find it small after all, the match is counted over every job, exactly.
// The word is given to the jobs of the smallest sample alone, so every
// sample holds the same k matches: k·16 reaches the threshold (large)
// while the 4k of the next sample fall short of half of it.
func TestSearchLargeByTheSmallestSampleYetSmall(t *testing.T) {
	ctx := context.Background()
	s := storetest.Store(t)
	words, k := zebrasOfTheSmallestSample(t, s)
	store.SetSampleHitsToEstimate(t, int64(12*k))
	for _, order := range []store.JobSearchOrder{store.ByRelevance, store.ByPosted} {
		r, err := s.SearchJobs(ctx, store.JobSearch{Words: words, Order: order, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if r.Total != int64(k) || r.Estimated || len(r.Jobs) != k {
			t.Errorf("order %d: total %d, estimated %v, %d on the page; want all %d, counted", order, r.Total, r.Estimated, len(r.Jobs), k)
		}
	}
}

// zebrasOfTheSmallestSample posts 3,000 jobs, of which the k of the
// smallest sample alone say zebra, and answers the words of that search.
func zebrasOfTheSmallestSample(t *testing.T, s *store.Store) (words string, k int) {
	t.Helper()
	ctx := context.Background()
	acct := storetest.NewAccount(t, s, "sampled").AccountID
	jobs := make([]store.JobFields, 3000)
	for i := range jobs {
		jobs[i] = job(fmt.Sprintf("S%04d", i))
	}
	postForWords(t, s, acct, jobs, "zebra")
	_, _, conditions := store.SearchSamples()
	var refs []string
	if err := s.DB().SelectContext(ctx, &refs, `SELECT j.reference_number FROM jobs j WHERE j.account_id = $1 AND `+conditions[0],
		acct); err != nil {
		t.Fatal(err)
	}
	if len(refs) < 3 {
		t.Fatalf("%d of 3,000 jobs in the smallest sample", len(refs))
	}
	zebras := make([]store.JobFields, len(refs))
	for i, ref := range refs {
		zebras[i] = job(ref)
		zebras[i].Title = "Zebra hauler " + ref
	}
	return postForWords(t, s, acct, zebras, "zebra"), len(refs)
}

// TestSearchRanksTheNewestMatches: by relevance, the newest matches are
// ranked, best first, and the older ones follow newest first; paging keeps
// the first page's boundary, so jobs posted between pages move no match
// across it: every match is answered once, in its place. So it is whether
// the first page counts the match itself or waits for a count apart.
func TestSearchRanksTheNewestMatches(t *testing.T) {
	for _, tt := range []struct {
		name string
		// hitsToEstimate is the sample hits an estimate takes: with 1, the
		// samples, which hold none of these few jobs, may all reach it, so
		// none says the match is too small to read the next, and the
		// match is counted apart, over every job.
		hitsToEstimate int64
		// statements is how many the first page runs.
		statements int
	}{
		{"counted by the page", 1_600, 2},
		{"counted apart", 1, 6},
	} {
		t.Run(tt.name, func(t *testing.T) {
			store.SetSampleHitsToEstimate(t, tt.hitsToEstimate)
			ranksTheNewestMatches(t, tt.statements)
		})
	}
}

func ranksTheNewestMatches(t *testing.T, statements int) {
	ctx := context.Background()
	s := storetest.Store(t)
	acct := storetest.NewAccount(t, s, "ranked").AccountID
	store.SetRankedMatches(t, 4)
	// Jobs R0 (oldest) to R7: the odd ones say tanker thrice, so rank
	// higher than the even ones, which say it once.
	post := func(refs ...int) {
		t.Helper()
		for _, i := range refs {
			j := job(fmt.Sprintf("R%d", i))
			j.Description = "<p>Tanker work.</p>"
			if i%2 == 1 {
				j.Description = "<p>Tanker work: tanker loads, tanker yard.</p>"
			}
			if _, err := s.UpsertJobs(ctx, acct, []store.JobFields{j}, store.UpsertOptions{MaxActive: 100, Today: time.Now()}); err != nil {
				t.Fatal(err)
			}
		}
	}
	post(0, 1, 2, 3, 4, 5, 6, 7)
	words, err := s.NormalizeJobQuery(ctx, "tanker")
	if err != nil {
		t.Fatal(err)
	}
	// The newest four (R4 to R7) ranked: R7, R5, then R6, R4; the rest
	// newest first.
	want := []string{"R7", "R5", "R6", "R4", "R3", "R2", "R1", "R0"}
	var got []string
	q := store.JobSearch{Words: words, Order: store.ByRelevance, Limit: 3}
	for page := 0; ; page++ {
		r, ran, err := s.SearchJobsTraced(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if page == 0 && len(ran) != statements {
			t.Errorf("first page: %d statements, want %d", len(ran), statements)
		}
		for _, f := range r.Jobs {
			got = append(got, f.ReferenceNumber)
		}
		if len(r.Jobs) < q.Limit {
			break
		}
		if page == 0 {
			post(8, 9) // newer than every ranked match, after the first page
		}
		q.After = &r.Jobs[len(r.Jobs)-1].Cursor
	}
	// R8 and R9 rank before the first page's end (R6), where keyset paging
	// does not look again; had the boundary moved to the newest four then,
	// R4 and R5 would have dropped among the older matches, R5 answered
	// twice and R4 out of its place.
	if !slices.Equal(got, want) {
		t.Errorf("paged %v, want %v", got, want)
	}
}

// TestSearchSamplesHaveTheirIndexes: each sample's condition, as the search
// writes it, is the predicate of that sample's indexes in
// job_search_sample (migration 0037), and the sample with none, the whole
// table, has indexes of no sample: PostgreSQL uses a partial index only
// for a condition that matches its predicate, so one that drifted from
// them would leave the sample counted by reading every job of the table.
// Both are compared as PostgreSQL prints them back.
func TestSearchSamplesHaveTheirIndexes(t *testing.T) {
	ctx := context.Background()
	s := storetest.Store(t)
	tx, err := s.DB().BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck // the view is the test's only
	shares, froms, conditions := store.SearchSamples()
	for i, cond := range conditions {
		table, prefix := "job_search_sample", "job_search_sample"
		if froms[i] != "job_search_sample j" { // the half of 1 in 8 in jobs
			table, prefix, cond = "jobs", "jobs_search_sample", store.Sample8InJobs
		}
		var printed string
		if _, err := tx.ExecContext(ctx, `CREATE OR REPLACE TEMP VIEW sample_condition AS SELECT 1 FROM `+table+` j WHERE `+cmp.Or(cond, "true")); err != nil {
			t.Fatal(err)
		}
		if err := tx.GetContext(ctx, &printed, `SELECT pg_get_viewdef('sample_condition')`); err != nil {
			t.Fatal(err)
		}
		_, where, _ := strings.Cut(printed, "WHERE ")
		where = strings.TrimSuffix(strings.TrimSpace(strings.ReplaceAll(where, "j.", "")), ";")
		for _, access := range []string{"match", "posted", "zip"} {
			index := fmt.Sprintf("%s%d_%s_idx", prefix, shares[i], access)
			var predicate sql.NullString
			if err := tx.GetContext(ctx, &predicate, `SELECT pg_get_expr(indpred, indrelid) FROM pg_index
				WHERE indexrelid = $1::regclass`, index); err != nil {
				t.Fatalf("%s: %v", index, err)
			}
			switch {
			case cond == "" && strings.Contains(predicate.String, "hashint8extended"):
				t.Errorf("%s: predicate %s keeps a sample of the table, whose jobs are all the search's", index, predicate.String)
			case cond != "" && !strings.Contains(predicate.String, where):
				t.Errorf("%s: predicate %s does not hold the search's condition %s", index, predicate.String, where)
			}
		}
	}
}

// TestSearchSampleKeepsLongWordsOutOfItsRows: a sampled job's words are
// out of the sample's row, a row under 2 KB with them, as it is added and
// as it changes (migration 0040), so that a read of the sample's rows
// reads their filters and not their words: one value of the sample's TOAST
// table each.
func TestSearchSampleKeepsLongWordsOutOfItsRows(t *testing.T) {
	ctx := context.Background()
	s := storetest.Store(t)
	acct := storetest.NewAccount(t, s, "long words").AccountID
	for _, variant := range []string{"lane", "haul"} {
		if _, err := s.UpsertJobs(ctx, acct, jobsOfLongWords(400, variant), store.UpsertOptions{MaxActive: 1000, Today: time.Now()}); err != nil {
			t.Fatal(err)
		}
		sampled, outOfRow := sampleWordsOutOfRow(t, s)
		var current int
		if err := s.DB().GetContext(ctx, &current, `SELECT count(*) FROM job_search_sample
			 WHERE search_words::text LIKE $1`, "%"+variant+"%"); err != nil {
			t.Fatal(err)
		}
		if sampled == 0 || outOfRow != sampled || current != sampled {
			t.Errorf("%s: %d jobs sampled, %d words out of their rows, %d current; want all", variant, sampled, outOfRow, current)
		}
	}
}

// jobsOfLongWords are n jobs whose descriptions' words (some 1.6 KB, which
// do not compress, as most jobs' do not) are under 2 KB with the sample's
// other columns and over it with the job's, and larger than the
// description's text (1 KB); each word starts with variant.
func jobsOfLongWords(n int, variant string) []store.JobFields {
	random := rand.New(rand.NewPCG(1, 2))
	jobs := make([]store.JobFields, n)
	for i := range jobs {
		words := make([]string, 80)
		for k := range words {
			words[k] = fmt.Sprintf("%s%08x", variant, random.Uint32())
		}
		jobs[i] = job(fmt.Sprintf("L%03d", i))
		jobs[i].Description = "<p>" + strings.Join(words, " ") + "</p>"
	}
	return jobs
}

// sampleWordsOutOfRow counts the jobs of job_search_sample and the words
// its TOAST table holds, a value each: the words kept out of their rows.
func sampleWordsOutOfRow(t *testing.T, s *store.Store) (sampled, outOfRow int) {
	t.Helper()
	if err := s.DB().QueryRowContext(context.Background(), `SELECT (SELECT count(*) FROM job_search_sample),
		(SELECT count(DISTINCT chunk_id) FROM `+toastOf(t, s, "job_search_sample")+`)`).Scan(&sampled, &outOfRow); err != nil {
		t.Fatal(err)
	}
	return sampled, outOfRow
}

// TestSearchCountsSmallMatchesWithThePage: a first page of a search for
// words whose match a sample finds too small for an estimate counts the
// match in the page's own statement, in every order, rather than in a
// statement before it; a later page, or a search without words, counts it
// apart. Either way the total is every match, and the ranked matches end
// where the match holds more than are ranked, as when it was counted first.
func TestSearchCountsSmallMatchesWithThePage(t *testing.T) {
	ctx := context.Background()
	s := storetest.Store(t)
	acct := storetest.NewAccount(t, s, "small").AccountID
	jobs := make([]store.JobFields, 30)
	for i := range jobs {
		jobs[i] = job(fmt.Sprintf("C%02d", i))
		jobs[i].PostalCode = new("77002")
		if i%5 < 2 { // 12 of 30
			jobs[i].Description = "<p>Tanker work, home weekly.</p>"
		}
	}
	tanker := postForWords(t, s, acct, jobs, "tanker")
	near := &store.Radius{Latitude: 29.756845, Longitude: -95.365652, Miles: 50}
	for _, tt := range []struct {
		name  string
		q     store.JobSearch
		total int64
		// statements is how many the first page runs: the smallest
		// sample's count, every job's count unless the page counts, and
		// the page; later how many the next page runs: the smallest
		// sample's count, every job's, then the page. Every job, with no
		// words, is counted by the kept counts alone.
		statements, later int
	}{
		{"newest first", store.JobSearch{Words: tanker, Order: store.ByPosted}, 12, 2, 3},
		{"relevance", store.JobSearch{Words: tanker, Order: store.ByRelevance}, 12, 2, 3},
		{"highest pay", store.JobSearch{Words: tanker, Order: store.ByPay}, 12, 2, 3},
		{"nearest first", store.JobSearch{Words: tanker, Near: near, Order: store.ByDistance}, 12, 2, 3},
		{"no match", store.JobSearch{Words: tanker, States: []string{"OK"}, Order: store.ByRelevance}, 0, 2, 3},
		{"no words", store.JobSearch{Order: store.ByPosted}, 30, 2, 2},
		{"no words, nearest first", store.JobSearch{Near: near, Order: store.ByDistance}, 30, 3, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q := tt.q
			q.Limit = 5
			r, ran, err := s.SearchJobsTraced(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if r.Total != tt.total || r.Estimated || len(ran) != tt.statements {
				t.Errorf("first page: total %d, estimated %v, %d statements; want %d in %d",
					r.Total, r.Estimated, len(ran), tt.total, tt.statements)
			}
			if len(r.Jobs) == 0 {
				return
			}
			q.After = &r.Jobs[len(r.Jobs)-1].Cursor
			r, ran, err = s.SearchJobsTraced(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if r.Total != tt.total || len(ran) != tt.later {
				t.Errorf("second page: total %d, %d statements; want %d in %d", r.Total, len(ran), tt.total, tt.later)
			}
		})
	}
	for _, tt := range []struct {
		ranked int
		end    bool
	}{{12, false}, {11, true}} {
		store.SetRankedMatches(t, tt.ranked)
		r, err := s.SearchJobs(ctx, store.JobSearch{Words: tanker, Order: store.ByRelevance, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		if end := len(r.Jobs) > 0 && r.Jobs[0].Cursor.Ranked != nil; end != tt.end || r.Total != 12 {
			t.Errorf("%d ranked of 12: ranked end found %v, total %d; want %v, 12", tt.ranked, end, r.Total, tt.end)
		}
	}
}

// TestSearchCountsFacetsWithThePage: a page that counts a small match
// counts the facets that share it (their own filter not asked for) in the
// same statement, in every order, as every job's counts have them; a facet
// whose own filter is asked for is counted apart, over its own match.
func TestSearchCountsFacetsWithThePage(t *testing.T) {
	ctx := context.Background()
	s := storetest.Store(t)
	acct := storetest.NewAccount(t, s, "facets").AccountID
	freights := []domain.FreightType{"Tanker", "Flatbed", "Dry Van"}
	jobs := make([]store.JobFields, 40)
	for i := range jobs {
		jobs[i] = job(fmt.Sprintf("F%02d", i))
		jobs[i].PostalCode = new("77002")
		jobs[i].FreightType = freights[i%3]
		jobs[i].State = []string{"TX", "TX", "OK", "LA"}[i%4]
		if i%5 < 3 { // 24 of 40
			jobs[i].Description = "<p>Tanker work, home weekly.</p>"
		}
		if i%2 == 0 {
			jobs[i].RouteType = []domain.RouteType{"Regional", "OTR"}
			jobs[i].LicenseClass = new(domain.LicenseClass("A"))
		}
	}
	tanker := postForWords(t, s, acct, jobs, "tanker")
	near := &store.Radius{Latitude: 29.756845, Longitude: -95.365652, Miles: 50}
	shared := []store.JobFacet{store.FacetFreightType, store.FacetRouteType, store.FacetLicenseClass}
	withState := append(slices.Clip(shared), store.FacetState)
	for _, tt := range []struct {
		name string
		q    store.JobSearch
	}{
		{"relevance", store.JobSearch{Words: tanker, Order: store.ByRelevance, Facets: shared}},
		{"newest first", store.JobSearch{Words: tanker, Order: store.ByPosted, Facets: shared}},
		{"nearest first, a filter", store.JobSearch{Words: tanker, Near: near, Order: store.ByDistance,
			DriverTypes: []string{"Company Driver"}, Facets: shared}},
		{"a state facet and filter", store.JobSearch{Words: tanker, Order: store.ByRelevance,
			States: []string{"TX"}, Facets: withState}},
		{"no match", store.JobSearch{Words: tanker, Order: store.ByPosted,
			EmploymentTypes: []string{"Seasonal"}, Facets: shared}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q := tt.q
			q.Limit = 5
			r, ran, err := s.SearchJobsTraced(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			want, err := s.CountJobFacets(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			total, err := s.CountJobSearch(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.EqualFunc(r.Facets, want, slices.Equal) || r.Estimated || r.Total != total {
				t.Errorf("facets %v, total %d, estimated %v; want %v, %d exact", r.Facets, r.Total, r.Estimated, want, total)
			}
			// The facets that share the match add no statement.
			apart := q
			apart.Facets = slices.DeleteFunc(slices.Clone(q.Facets), func(f store.JobFacet) bool { return slices.Contains(shared, f) })
			_, ranApart, err := s.SearchJobsTraced(ctx, apart)
			if err != nil {
				t.Fatal(err)
			}
			if len(ran) != len(ranApart) {
				t.Errorf("%d statements, %d without the facets that share the match", len(ran), len(ranApart))
			}
		})
	}
}

// postForWords posts jobs to account acct and answers the search's form of
// words.
func postForWords(t *testing.T, s *store.Store, acct int64, jobs []store.JobFields, words string) string {
	t.Helper()
	ctx := context.Background()
	if _, err := s.UpsertJobs(ctx, acct, jobs, store.UpsertOptions{MaxActive: len(jobs), Today: time.Now()}); err != nil {
		t.Fatal(err)
	}
	query, err := s.NormalizeJobQuery(ctx, words)
	if err != nil {
		t.Fatal(err)
	}
	return query
}

// toastOf is the name of table's TOAST table, whose rows are the chunks of
// the values held out of table's rows.
func toastOf(t *testing.T, s *store.Store, table string) string {
	t.Helper()
	var toast string
	if err := s.DB().GetContext(context.Background(), &toast, `SELECT reltoastrelid::regclass::text FROM pg_class
		 WHERE oid = $1::regclass`, table); err != nil {
		t.Fatal(err)
	}
	return toast
}

// TestSearchWordsStayInTheJobsRow: a job's words stay in its row, where a
// search that walks the jobs checks them without a lookup in the TOAST
// table (migration 0041); the description leaves the row instead. The
// jobs' words (some 1.6 KB) are larger than their descriptions' text (1
// KB), neither compressing, so no value of the TOAST table is as large as
// the smallest job's words.
func TestSearchWordsStayInTheJobsRow(t *testing.T) {
	ctx := context.Background()
	s := storetest.Store(t)
	acct := storetest.NewAccount(t, s, "words in row").AccountID
	if _, err := s.UpsertJobs(ctx, acct, jobsOfLongWords(50, "lane"), store.UpsertOptions{MaxActive: 100, Today: time.Now()}); err != nil {
		t.Fatal(err)
	}
	var smallestWords, largestOutOfRow, outOfRow int
	if err := s.DB().QueryRowContext(ctx, `SELECT (SELECT min(pg_column_size(search_words)) FROM jobs),
		coalesce(max(size), 0), count(*) FROM (SELECT sum(octet_length(chunk_data)) AS size FROM `+toastOf(t, s, "jobs")+` GROUP BY chunk_id) t`).
		Scan(&smallestWords, &largestOutOfRow, &outOfRow); err != nil {
		t.Fatal(err)
	}
	if outOfRow == 0 || largestOutOfRow >= smallestWords {
		t.Errorf("%d values out of the jobs' rows, the largest %d bytes; want the descriptions, each under the smallest words (%d bytes)",
			outOfRow, largestOutOfRow, smallestWords)
	}
}

// TestSearchWalksALargeMatchNewestFirst: the first page by relevance of a
// match the smallest sample shows large reads its newest matches from the
// jobs, each checked for the words, and not from the words' index: at a
// million jobs PostgreSQL reckoned the index and a sort cheaper than a
// walk of the jobs newest first, and read the 87,373 jobs of 'hazmat &
// tanker' to keep 1,000. The match is made small, the k jobs of the
// smallest sample, for the words' index to be the plan PostgreSQL would
// choose; the threshold is lowered so that the smallest sample's k
// matches show it large. The samples then find it small, and it is
// counted over every job: that count reads the words' index. The
// statements that read jobs are explained, each under the settings it ran
// with, and with sequential scans turned off for the plans to choose among
// indexes alone, after VACUUM: the words' index's entries still pending
// make it look costlier than reading every job.
func TestSearchWalksALargeMatchNewestFirst(t *testing.T) {
	ctx := context.Background()
	s := storetest.Store(t)
	words, k := zebrasOfTheSmallestSample(t, s)
	store.SetSampleHitsToEstimate(t, int64(12*k))
	r, ran, err := s.SearchJobsTraced(ctx, store.JobSearch{Words: words, Order: store.ByRelevance, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if r.Total != int64(k) || len(r.Jobs) != k {
		t.Fatalf("total %d, %d on the page; want all %d", r.Total, len(r.Jobs), k)
	}
	if _, err := s.DB().ExecContext(ctx, "VACUUM ANALYZE jobs"); err != nil {
		t.Fatal(err)
	}
	counted := 0
	for i, q := range ran {
		page := i == len(ran)-1
		if !page && !strings.Contains(q.SQL, "FROM jobs j") {
			continue
		}
		explained := explainUnder(t, s, "SET LOCAL enable_seqscan = off; "+q.Setting, q)
		switch byIndex := strings.Contains(explained, "jobs_search_match_idx"); {
		case page && byIndex:
			t.Errorf("the page's plan:\n%s\nwant jobs read without their words' index, jobs_search_match_idx", explained)
		case !page && !byIndex:
			t.Errorf("the plan of %s:\n%s\nwant the words' index, jobs_search_match_idx", q.SQL, explained)
		case !page:
			counted++
		}
	}
	if counted == 0 {
		t.Error("no count over every job; want the match counted exactly")
	}
}

// explainUnder is the plan of q, under settings (SET LOCAL statements).
func explainUnder(t *testing.T, s *store.Store, settings string, q store.Query) string {
	t.Helper()
	ctx := context.Background()
	tx, err := s.DB().BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck // read only
	if _, err := tx.ExecContext(ctx, settings); err != nil {
		t.Fatal(err)
	}
	var plan []string
	if err := tx.SelectContext(ctx, &plan, "EXPLAIN "+q.SQL, q.Args...); err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "\n")
}
