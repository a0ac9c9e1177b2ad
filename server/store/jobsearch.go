package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"golang.org/x/sync/errgroup"

	"github.com/truckjobs/jobboard/domain"
)

// JobSearch is a search of every account's active jobs (docs/api.md, Job
// search), in the store's terms: the words of each closed field as the
// jobs table keeps them. Empty lists and zero values do not filter.
type JobSearch struct {
	// Words is a tsquery, as NormalizeJobQuery answered it; "" searches no words.
	Words string
	// Near keeps the jobs whose ZIP centroid is within the radius.
	Near *Radius

	DriverTypes, FreightTypes, RouteTypes, EmploymentTypes, PayFrequencies, States []string
	// LicenseClasses are the classes a job may ask for; a job that asks
	// for none (no class) is kept whenever the list is given.
	LicenseClasses  []string
	ExcludeTWICOnly bool
	// MinPay keeps the jobs whose highest pay (the minimum when there is
	// no maximum) is at least it, in cents.
	MinPay *int64
	// PostedSince keeps the jobs first added at or after it.
	PostedSince *time.Time
	AccountIDs  []int64

	Order JobSearchOrder
	// After is where the page starts: after this job, in Order.
	After *JobSearchCursor
	// Limit is the most results answered.
	Limit int
	// Facets are the facets to count.
	Facets []JobFacet

	// findRanked is set for a first page by relevance of a match that may
	// hold more than the ranked matches (rankedMatches): the page ranks the
	// newest of them and finds where they end.
	findRanked bool
	// walkNewest is set, with findRanked, for a search within no radius
	// whose match the smallest sample shows large but holds too few of to
	// estimate (large, in countMatches): a match of some 25,600 to 409,600
	// jobs of a million. Its page checks the words in a form no index
	// takes, so that it walks the jobs newest first until it has the
	// ranked matches (or reads them by its filters' index), rather than
	// reading every match from the words' index and sorting them. A larger
	// match, which the smallest sample estimates, is walked by PostgreSQL's
	// own choice.
	walkNewest bool
	// countInPage is set for a first page of a search for words whose
	// match a sample found too small for an estimate: the page's statement
	// counts the match as it reads it, rather than a statement of its own
	// reading it before.
	countInPage bool
	// facetsInPage are the facets the page's statement counts, with the
	// match (countInPage): those whose match is the search's own.
	facetsInPage []JobFacet
}

// JobSearchOrder is the order of a search's results. Each breaks ties by
// the instant the job was first added, newest first, then by id.
type JobSearchOrder int

// The orders.
const (
	// ByPosted: newest first.
	ByPosted JobSearchOrder = iota
	// ByRelevance: best match first (needs Words).
	ByRelevance
	// ByDistance: nearest first (needs Near).
	ByDistance
	// ByPay: highest pay first, jobs without an amount last.
	ByPay
)

// JobSearchCursor is the place of a result in its order: its sort key
// (the rank, the miles or the pay in cents, by order; unused by
// ByPosted), when it was first added and its id.
type JobSearchCursor struct {
	Key     float64 `json:"k,omitempty"`
	AddedAt int64   `json:"t"` // microseconds since the Unix epoch
	ID      int64   `json:"id"`
	// Ranked is where the matches ranked by relevance end, as the
	// search's first page found it; nil when every match is ranked.
	Ranked *JobPlace `json:"r,omitempty"`
}

// JobPlace is a job's place in the order of time: when it was first
// added (microseconds since the Unix epoch), then its id.
type JobPlace struct {
	AddedAt int64 `json:"t"`
	ID      int64 `json:"id"`
}

// JobFacet is a field whose values a search counts.
type JobFacet int

// The facets, each a column of jobs.
const (
	FacetDriverType JobFacet = iota
	FacetFreightType
	FacetRouteType
	FacetEmploymentType
	FacetPayFrequency
	FacetState
	FacetLicenseClass
)

// JobFound is one result of a search.
type JobFound struct {
	Job
	AccountID   int64
	AccountName string
	// Miles is the distance from the search's centre; set with Near.
	Miles *float64
	// Highlights are fragments of the title and description around the
	// matched words, which are in <b>...</b>; set with Words.
	Highlights []string
	Cursor     JobSearchCursor
}

// FacetCount is how many matching jobs have one value of a facet.
type FacetCount struct {
	Value string `db:"value"`
	Count int64  `db:"count"`
}

// JobSearchResult is a page of results, with the whole match's size and
// facets.
type JobSearchResult struct {
	Jobs  []JobFound
	Total int64
	// Estimated is true when Total or a facet's counts are estimates
	// (see countMatches). No count of a match of 10,000 jobs or fewer is
	// estimated, but a facet counts a match of its own (without its own
	// filter), which may be larger than the search's.
	Estimated bool
	Facets    map[JobFacet][]FacetCount
}

// NormalizeJobQuery reads query in web search syntax (words ANDed, quoted
// phrases, -word, OR) with English stemming, and answers it as a tsquery's
// text: "" when the query holds no word a job could be found by (only
// stop words, or punctuation).
func (s *Store) NormalizeJobQuery(ctx context.Context, query string) (string, error) {
	var words string
	err := s.read(ctx, func(db *sqlx.DB) error {
		return db.GetContext(ctx, &words, `SELECT websearch_to_tsquery('english', $1)::text`, query)
	})
	if err != nil {
		return "", fmt.Errorf("read search query: %w", err)
	}
	return words, nil
}

// SearchJobsTraced is SearchJobs on the primary, answering also the
// statements it ran, in order, so that a benchmark can explain each.
func (s *Store) SearchJobsTraced(ctx context.Context, q JobSearch) (JobSearchResult, []Query, error) {
	var ran []Query
	r, err := searchJobs(ctx, s.db, q, &ran)
	if err != nil {
		return JobSearchResult{}, nil, fmt.Errorf("search jobs: %w", err)
	}
	return r, ran, nil
}

// tracedQueryer runs statements and keeps each, with the setting they ran
// under.
type tracedQueryer struct {
	sqlx.QueryerContext
	setting string
	ran     *[]Query
}

// traced is x, keeping each statement in ran unless ran is nil.
func traced(x sqlx.QueryerContext, setting string, ran *[]Query) sqlx.QueryerContext {
	if ran == nil {
		return x
	}
	return &tracedQueryer{QueryerContext: x, setting: setting, ran: ran}
}

func (t *tracedQueryer) keep(query string, args []any) {
	*t.ran = append(*t.ran, Query{SQL: query, Args: args, Setting: t.setting})
}

func (t *tracedQueryer) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	t.keep(query, args)
	return t.QueryerContext.QueryContext(ctx, query, args...)
}

func (t *tracedQueryer) QueryxContext(ctx context.Context, query string, args ...any) (*sqlx.Rows, error) {
	t.keep(query, args)
	return t.QueryerContext.QueryxContext(ctx, query, args...)
}

func (t *tracedQueryer) QueryRowxContext(ctx context.Context, query string, args ...any) *sqlx.Row {
	t.keep(query, args)
	return t.QueryerContext.QueryRowxContext(ctx, query, args...)
}

// CountJobSearch counts every job q matches, however many: the truth a
// benchmark holds the search's estimates to.
func (s *Store) CountJobSearch(ctx context.Context, q JobSearch) (int64, error) {
	return countIn(ctx, s.db, q, everyJob)
}

// CountJobFacets counts each of q's facets over its whole match, value by
// value, however many: the truth a benchmark holds the search's facet
// estimates to.
func (s *Store) CountJobFacets(ctx context.Context, q JobSearch) (map[JobFacet][]FacetCount, error) {
	counts := map[JobFacet][]FacetCount{}
	for _, f := range q.Facets {
		var err error
		if counts[f], err = facetCounts(ctx, s.db, q, f, everyJob, nil); err != nil {
			return nil, err
		}
	}
	return counts, nil
}

// SearchJobs answers a page of the active jobs of every account that
// match q, in q's order, with the whole match's size and q's facets. It
// reads the read database when there is one.
func (s *Store) SearchJobs(ctx context.Context, q JobSearch) (JobSearchResult, error) {
	var r JobSearchResult
	err := s.read(ctx, func(db *sqlx.DB) error {
		var err error
		r, err = searchJobs(ctx, db, q, nil)
		return err
	})
	if err != nil {
		return JobSearchResult{}, fmt.Errorf("search jobs: %w", err)
	}
	return r, nil
}

// searchJobs searches on db, keeping the statements it runs in ran unless
// ran is nil.
//
// The page is read beside the counts, on a connection of its own, once
// the samples have said what it needs of them: a call takes as long as the
// slower of the two rather than both, as the drivers list does. A page that
// counts a small match counts the facets that share it too (facetsInPage):
// of words within 100 miles with two filters, the freight facet, counted
// apart, read the match's 1,940 candidates again (21 ms beside the page's
// 27 ms, on two cores).
func searchJobs(ctx context.Context, db *sqlx.DB, q JobSearch, ran *[]Query) (JobSearchResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r := JobSearchResult{Facets: map[JobFacet][]FacetCount{}}
	// The page's statements are kept apart, to follow the counts'.
	var pageRan *[]Query
	if ran != nil {
		pageRan = new([]Query)
	}
	var page pageRead
	readPage := func() error {
		var err error
		page, err = searchPage(ctx, traced(db, "", pageRan), q)
		return err
	}
	// Once the page is started, q is only read: the page reads it too.
	var g errgroup.Group
	started := false
	startPage := func() {
		started = true
		g.Go(readPage)
	}
	err := countsOn(ctx, db, q, ran, func(counter sqlx.QueryerContext) error {
		reads := sampleReads{}
		size, err := countMatches(ctx, counter, q, q.facetsOfTheMatch(), reads, func() {
			// The match is far larger than the ranked matches, and too
			// large for the page to count: the page needs nothing more
			// of the counts, and is read beside the larger samples'.
			q.findRanked = q.firstRanked()
			q.walkNewest = q.findRanked && q.Near == nil
			startPage()
		})
		if err != nil {
			return err
		}
		if started && size.inPage {
			size = matchSize{countAll: true} // the page started without counting
		}
		if !started {
			if size, err = q.notePageNeeds(ctx, counter, size); err != nil {
				return err
			}
			// With no count left, the page waits for the counts' connection.
			if size.countAll || q.facetsApart() {
				startPage()
			}
		}
		if size.countAll {
			if size, err = countAll(ctx, counter, q); err != nil {
				return err
			}
		}
		var estimated bool
		if r.Facets, estimated, err = countFacets(ctx, counter, q, reads); err != nil {
			return err
		}
		r.Total, r.Estimated = size.total, size.estimated || estimated
		return nil
	})
	if err != nil {
		cancel()
	}
	if err := cmp.Or(err, g.Wait()); err != nil {
		return r, err
	}
	if !started {
		if err := readPage(); err != nil {
			return r, err
		}
	}
	if ran != nil {
		*ran = append(*ran, *pageRan...)
	}
	page.answer(&r, q)
	return r, nil
}

// firstRanked says whether q asks for a first page by relevance.
func (q JobSearch) firstRanked() bool { return q.Order == ByRelevance && q.After == nil }

// notePageNeeds sets in q what its page needs of the counts, given the
// match's size as countMatches found it, and returns the size. A first
// page by relevance ranks a match no larger than the ranked matches whole,
// without its newest being read apart, so a match to be counted over every
// job is counted first. One the page counts may be larger: its statement
// finds where the ranked end when it is.
func (q *JobSearch) notePageNeeds(ctx context.Context, db sqlx.QueryerContext, size matchSize) (matchSize, error) {
	if size.countAll && q.firstRanked() {
		var err error
		if size, err = countAll(ctx, db, *q); err != nil {
			return size, err
		}
	}
	q.countInPage = size.inPage
	if q.countInPage {
		for _, f := range q.Facets {
			if q.sharesMatch(f) && !slices.Contains(q.facetsInPage, f) {
				q.facetsInPage = append(q.facetsInPage, f)
			}
		}
	}
	q.findRanked = q.firstRanked() && (size.estimated || size.inPage || size.total > int64(rankedMatches))
	return size, nil
}

// sharesMatch says whether facet f's match, without f's own filter, is
// the search's: f's filter is not asked for. addFilters decides.
func (q JobSearch) sharesMatch(f JobFacet) bool {
	every, butF := &conditions{}, &conditions{}
	q.addFilters(every, noFacet)
	q.addFilters(butF, f)
	return len(every.conds) == len(butF.conds)
}

// facetsApart says whether any of q's facets is counted apart from the
// page (not in facetsInPage).
func (q JobSearch) facetsApart() bool {
	return slices.ContainsFunc(q.Facets, func(f JobFacet) bool { return !slices.Contains(q.facetsInPage, f) })
}

// answer puts the page's jobs into r, with the total and the facets when
// the page counted the match, and where the ranked matches end in each
// cursor.
func (page pageRead) answer(r *JobSearchResult, q JobSearch) {
	r.Jobs = page.jobs
	if q.countInPage {
		r.Total = page.total
	}
	for _, f := range q.facetsInPage {
		r.Facets[f] = page.facets[f]
	}
	ranked := page.ranked
	if q.After != nil {
		ranked = q.After.Ranked
	}
	for i := range r.Jobs {
		r.Jobs[i].Cursor.Ranked = ranked
	}
}

// facetsOfTheMatch are the facets whose match is the search's own, for
// the samples the match's count reads to be read for them at once
// (countMatches): every facet of a search for words with no filter, whose
// facets are all counted by value; none otherwise.
func (q JobSearch) facetsOfTheMatch() []JobFacet {
	if q.Words != "" && q.countedByValue(noFacet) {
		return q.Facets
	}
	return nil
}

// countFacets counts q's facets, each over its own match, and says
// whether any count is an estimate: the facets counted by value together
// (countFacetsKept, reusing the samples in reads), the others one by one
// (countFacet).
func countFacets(ctx context.Context, db sqlx.QueryerContext, q JobSearch, reads sampleReads) (map[JobFacet][]FacetCount, bool, error) {
	counts := map[JobFacet][]FacetCount{}
	anyEstimated := false
	var byValue []JobFacet
	for _, f := range q.Facets {
		if slices.Contains(q.facetsInPage, f) {
			continue
		}
		if q.countedByValue(f) {
			byValue = append(byValue, f)
			continue
		}
		var estimated bool
		var err error
		if counts[f], estimated, err = countFacet(ctx, db, q, f); err != nil {
			return nil, false, err
		}
		anyEstimated = anyEstimated || estimated
	}
	if len(byValue) > 0 {
		kept, estimated, err := countFacetsKept(ctx, db, q, byValue, reads)
		if err != nil {
			return nil, false, err
		}
		maps.Copy(counts, kept)
		anyEstimated = anyEstimated || estimated
	}
	return counts, anyEstimated, nil
}

// CountSetting, run with SET LOCAL, has the counts of a search for words
// read the jobs the words index lists by a bitmap rather than one by one
// in an index's order. PostgreSQL reckons a match of a job's words as
// cheap as a comparison, so it counted 'driver' in a sample by reading the
// sample's time index and checking the words of each of its jobs: 44 ms
// for the 3,959 jobs of the smallest sample of a million. Read by a bitmap
// of the words index, the jobs it lists match without their words being
// read again (5 ms). The setting also rules out scans of an index alone,
// which a count of every job or of a radius is best read by: 0.4 ms for
// every job of that sample against 5.6 ms, so it is kept to searches for
// words within no radius.
//
// It rules out reading a whole table too: job_search_sample keeps its jobs'
// words out of its rows (migrations 0037, 0040), and for a common word, which
// most of its jobs hold, PostgreSQL chose to read the table and check
// each job's words, read from the TOAST table (140 ms for the 61,342
// matches of 'driver' among 62,383 jobs, against 13 ms by the bitmap).
const CountSetting = `SET LOCAL enable_indexscan = off; SET LOCAL enable_seqscan = off`

// countsOn runs fn, the counts of q's search, on db; under CountSetting,
// in a read-only transaction, when q searches for words within no radius.
// The statements are kept in ran unless it is nil.
func countsOn(ctx context.Context, db *sqlx.DB, q JobSearch, ran *[]Query, fn func(sqlx.QueryerContext) error) error {
	if q.Words == "" || q.Near != nil {
		return fn(traced(db, "", ran))
	}
	tx, err := db.BeginTxx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("count the matches: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit, or with fn's error
	if _, err := tx.ExecContext(ctx, CountSetting); err != nil {
		return fmt.Errorf("count the matches: %w", err)
	}
	if err := fn(traced(tx, CountSetting, ran)); err != nil {
		return err
	}
	return tx.Commit()
}

// rankedMatches is how many matches, the newest, are ranked by relevance.
// Ranking reads every ranked job's words: ranking the 853,603 jobs of a
// million that hold 'driver' took 4 s, and a driver looking for work is
// served better by the best of the newest thousand than by a best match
// posted long ago. The matches older than those follow, newest first.
//
// More than the largest page (100), so that a first page is all ranked
// matches. A variable so that tests reach the older matches with a few
// jobs.
var rankedMatches = 1_000

// Counting a match exactly reads every matching job: 3.0 s for a word
// 853,603 of 1,000,000 jobs hold. Above 10,000 matches the contract takes
// an estimate within 10%, which the search makes from fixed samples of the
// active jobs (migrations 0029 and 0037): the matches in a sample, times
// the number of jobs each of its jobs stands for. A count is made in the smallest
// sample first, then in the larger ones while the sample holds too few
// matches for an estimate to be trusted, and at last over every job.

// sample is one of the samples of the active jobs, or every job (everyJob).
// The samples of 1 in 16, 64 and 256 are read from job_search_sample
// (migrations 0037, 0040), the jobs of the first, a table small enough to stay in
// shared buffers; the sample of 1 in 8 is that table and the other half
// of the sample, read from jobs.
type sample struct {
	// share is how many jobs each job of the sample stands for.
	share int64
	// from is the FROM of the sample's jobs, as jobs j; "" for
	// job_search_sample.
	from string
	// condition keeps the jobs j of from that are of the sample, word for
	// word as the predicate of its indexes, which PostgreSQL matches as
	// text; "" keeps them all.
	condition string
}

// everyJob is the "sample" of every job: jobs itself.
var everyJob = sample{share: 1, from: "jobs j"}

// sampleColumns are the columns of job_search_sample, which a search's
// filters and words read.
const sampleColumns = `id, account_id, created_at, postal_code, state, freight_type, driver_type, pay_frequency,
	route_type, employment_type, license_class, twic_only, pay_amount_min, pay_amount_max, search_words`

// sizingShare is the share of the sample a match's size is judged by: the
// sample of 1 in 16, which holds 1,600 matches (an estimate) of a match of
// 25,600 jobs. The sample of 1 in 8 serves the matches between 12,800 and
// 25,600 jobs, which it estimates where they were counted over every job.
const sizingShare = 16

// mayReach says whether a larger sample may hold enough matches for an
// estimate, given hits matches in s: the sample of 1 in 16 is expected to
// hold hits times as many as its share is smaller, and the larger samples
// are not read when that is under half of what an estimate needs: the
// match is then expected under 12,800 jobs, short of an estimate even in
// the sample of 1 in 8. A match that small is counted over every job at
// once, sparing the samples' reads: 52 ms of a search within 100 miles.
func (s sample) mayReach(hits int64) bool {
	return hits*s.share/sizingShare >= sampleHitsToEstimate/2
}

// expectsEstimate says whether hits matches in s make the sample of 1 in
// 16 expected to hold enough for an estimate: then the match is some
// 25,600 jobs or more, and the sample of 1 in 16 holds under half of that
// (where mayReach gives up) only if the smallest's count (100 or more:
// 10% standard error) was off by five standard errors.
func (s sample) expectsEstimate(hits int64) bool {
	return hits*s.share/sizingShare >= sampleHitsToEstimate
}

// samples are the samples, the smallest first.
var samples = []sample{
	{256, "", "(hashint8extended(j.id, 11) & 255) = 0"},
	{64, "", "(hashint8extended(j.id, 11) & 63) = 0"},
	{16, "", ""},
	{8, `(SELECT ` + sampleColumns + ` FROM job_search_sample
		UNION ALL SELECT ` + sampleColumns + ` FROM jobs WHERE deleted_at IS NULL AND ` + sample8InJobs + `) j`, ""},
}

// sample8InJobs keeps the jobs of the sample of 1 in 8 that are not in
// job_search_sample, word for word as the predicate of their indexes on
// jobs.
const sample8InJobs = "(hashint8extended(id, 11) & 15) = 8"

// sampleHitsToEstimate is the fewest matches in a sample that an estimate
// is made from. The relative standard error of an estimate from h matches
// is about 1/sqrt(h): 2.5% at 1,600, so the estimate is within 10% at four
// standard errors, and a match of 10,000 jobs (about 1,250 in the largest
// sample) is always counted. A variable so that tests reach the estimates
// with a few thousand jobs.
var sampleHitsToEstimate int64 = 1_600

// matchSize is the number of jobs a search matches, as its counts found it.
type matchSize struct {
	total     int64
	estimated bool
	// inPage is set, and total left 0, when the match is small and left
	// to the first page's statement to count.
	inPage bool
	// countAll is set, and total left 0, when the match is small and is
	// yet to be counted over every job (countAll).
	countAll bool
}

// countMatches is the number of jobs q matches, estimated from the samples,
// or whether it is to be counted over every job (a match no sample holds
// enough of for an estimate). A match a sample finds too small for an
// estimate is counted, on a first page of a search for words, by the
// page's statement, which reads the jobs of a small match anyway (to check
// their words, and rank or sort them): of words, a radius and two
// filters, 12,714 jobs were read by the count (52 ms) and again by the
// page (30 ms). Without words, a count is read from an index alone and
// a page stops at its end, so a page that counted would be slower: 15 ms
// for every job of 10,000, against 1 ms for the count and the page.
//
// A match that is, but for its words, every active job of the search's
// accounts (countedByValue) is sized from the jobs job_facet_counts keeps:
// without words, exactly; with words, as those jobs times the share of a
// sample's jobs that match (estimateByShare), a closer estimate than
// the sample's matches times its share.
//
// large is called, at most once and before the larger samples are read,
// when the smallest sample shows the match large enough to be estimated
// in the sample of 1 in 16 (expectsEstimate): a match that is neither left to the
// page to count nor ranked whole.
//
// With facets (which must share the match: countFacetsKept), each sample
// is read for their values too, kept in reads for countFacetsKept.
func countMatches(ctx context.Context, db sqlx.QueryerContext, q JobSearch, facets []JobFacet, reads sampleReads, large func()) (matchSize, error) {
	byValue := q.countedByValue(noFacet)
	if byValue && q.Words == "" {
		jobs, err := keptFacetCounts(ctx, db, q.AccountIDs, []JobFacet{noFacet}, 1)
		return matchSize{total: jobs[noFacet][""]}, err
	}
	for i, s := range samples {
		var n int64
		var err error
		if len(facets) > 0 {
			matched, err := countByFacets(ctx, db, q, facets, s, nil)
			if err != nil {
				return matchSize{}, err
			}
			reads[s.share], n = matched, matched[noFacet][""]
		} else if n, err = countIn(ctx, db, q, s); err != nil {
			return matchSize{}, err
		}
		if i == 0 && n < sampleHitsToEstimate && s.expectsEstimate(n) {
			large()
		}
		if n >= sampleHitsToEstimate {
			if byValue {
				return estimateByShare(ctx, db, q, s, n)
			}
			return matchSize{total: n * s.share, estimated: true}, nil
		}
		if !s.mayReach(n) {
			if q.After == nil && q.Words != "" {
				return matchSize{inPage: true}, nil
			}
			break
		}
	}
	return matchSize{countAll: true}, nil
}

// countAll is the number of jobs q matches, counted over every job.
func countAll(ctx context.Context, db sqlx.QueryerContext, q JobSearch) (matchSize, error) {
	n, err := countIn(ctx, db, q, everyJob)
	return matchSize{total: n}, err
}

// countIn counts the jobs q matches among those of sample s.
func countIn(ctx context.Context, db sqlx.QueryerContext, q JobSearch, s sample) (int64, error) {
	from, where, args := q.match(noFacet, s)
	var n int64
	if err := sqlx.GetContext(ctx, db, &n, `SELECT count(*) FROM `+from+` WHERE `+where, args...); err != nil {
		return 0, fmt.Errorf("count the matches: %w", err)
	}
	return n, nil
}

// noFacet is a facet that is none of them: the match with every filter.
const noFacet JobFacet = -1

// facetColumns are the facets' values in jobs j: one per job, or (for the
// list fields) one row each.
var facetColumns = map[JobFacet]string{
	FacetDriverType:     "j.driver_type",
	FacetFreightType:    "j.freight_type",
	FacetRouteType:      "unnest(j.route_type)",
	FacetEmploymentType: "unnest(j.employment_type)",
	FacetPayFrequency:   "j.pay_frequency",
	FacetState:          "j.state",
	FacetLicenseClass:   "j.license_class",
}

// facetIn keeps the jobs j with one of a list of a facet's values: the
// filter of each facet but the license class (whose filter also keeps the
// jobs that ask for none).
var facetIn = map[JobFacet]string{
	FacetDriverType:     "j.driver_type = ANY (?::text[])",
	FacetFreightType:    "j.freight_type = ANY (?::text[])",
	FacetRouteType:      "j.route_type && ?::text[]",
	FacetEmploymentType: "j.employment_type && ?::text[]",
	FacetPayFrequency:   "j.pay_frequency = ANY (?::text[])",
	FacetState:          "j.state = ANY (?::text[])",
	FacetLicenseClass:   "j.license_class = ANY (?::text[])",
}

// facetValues are how many values each facet has.
var facetValues = map[JobFacet]int{
	FacetDriverType:     len(domain.DriverTypes()),
	FacetFreightType:    len(domain.FreightTypes()),
	FacetRouteType:      len(domain.RouteTypes()),
	FacetEmploymentType: len(domain.EmploymentTypes()),
	FacetPayFrequency:   len(domain.PayFrequencies()),
	FacetState:          len(domain.JobStates()),
	FacetLicenseClass:   len(domain.LicenseClasses()),
}

// countFacet counts the matching jobs by their values of facet f, with
// every filter but f's own: highest count first, then by value; values no
// job has are not listed. It says whether the counts are estimates. Each
// value is estimated from the smallest sample that holds enough of its
// matches (countMatches); the values no sample holds enough of, including
// those absent from them all, are counted over every job. A facet whose
// match is counted by value is counted by countFacetsKept instead.
func countFacet(ctx context.Context, db sqlx.QueryerContext, q JobSearch, f JobFacet) ([]FacetCount, bool, error) {
	var estimated []string
	var counts []FacetCount
	for _, s := range samples {
		sampled, err := facetCounts(ctx, db, q, f, s, estimated)
		if err != nil {
			return nil, false, err
		}
		var most int64
		for _, c := range sampled {
			if c.Count >= sampleHitsToEstimate {
				estimated = append(estimated, c.Value)
				counts = append(counts, FacetCount{Value: c.Value, Count: c.Count * s.share})
			} else {
				most = max(most, c.Count)
			}
		}
		if !s.mayReach(most) {
			break
		}
	}
	// When every value a job can have is estimated, no value is left to
	// count (a job's values are checked against these lists as it is
	// posted): that spares reading the whole match again.
	if len(estimated) < facetValues[f] {
		rest, err := facetCounts(ctx, db, q, f, everyJob, estimated)
		if err != nil {
			return nil, false, err
		}
		counts = append(counts, rest...)
	}
	sortByCount(counts)
	return counts, len(estimated) > 0, nil
}

// facetCounts reads the counts of facet f's values among the jobs q
// matches without f's own filter, leaving out the values of except, among
// the jobs of sample s.
func facetCounts(ctx context.Context, db sqlx.QueryerContext, q JobSearch, f JobFacet, s sample, except []string) ([]FacetCount, error) {
	from, where, args := q.match(f, s)
	cond := "v IS NOT NULL"
	if len(except) > 0 {
		args = append(args, pq.StringArray(except))
		cond = fmt.Sprintf("v IS NOT NULL AND NOT v = ANY ($%d::text[])", len(args))
	}
	counts := []FacetCount{}
	if err := sqlx.SelectContext(ctx, db, &counts, `
		SELECT v AS value, count(*) AS count FROM (SELECT `+facetColumns[f]+` AS v FROM `+from+` WHERE `+where+`) m
		 WHERE `+cond+` GROUP BY v ORDER BY count(*) DESC, v`, args...); err != nil {
		return nil, fmt.Errorf("count facet: %w", err)
	}
	return counts, nil
}

// match is the FROM and WHERE of the jobs q matches, and their arguments,
// leaving out the filter of facet except (noFacet leaves none out), among
// the jobs of sample s.
func (q JobSearch) match(except JobFacet, s sample) (from, where string, args []any) {
	return q.matchFrom(except, "", s, false)
}

// matchFrom is match, with the ZIP codes of a radius in zipOrder ("" for
// any order), and with walk, the words checked in a form no index takes:
// for a page that walks the jobs (walkNewest), and for it alone, as a
// count that checked the words so would read every job.
func (q JobSearch) matchFrom(except JobFacet, zipOrder string, s sample, walk bool) (from, where string, args []any) {
	c := &conditions{}
	from = cmp.Or(s.from, "job_search_sample j")
	if s == everyJob { // the samples hold active jobs only
		c.add("j.deleted_at IS NULL")
	}
	if q.Near != nil {
		// The ZIP codes within the radius, read from their box, joined to
		// the jobs by the index of their ZIP: a job's place is its ZIP's
		// centroid. A list of the codes to look each job's up in instead
		// (= ANY) cost a comparison per code and job: 12 s to count the
		// 124,840 jobs within 500 miles of 77002 among 1,000,000.
		dLat, dLon := q.Near.boundingBox()
		lat, lon := c.bind(q.Near.Latitude)+"::float8", c.bind(q.Near.Longitude)+"::float8"
		from += ` JOIN (
			SELECT zip, miles FROM (
				SELECT zip, ` + milesFrom("latitude", "longitude", lat, lon) + ` AS miles FROM zip_centroids
				 WHERE latitude BETWEEN ` + c.bind(q.Near.Latitude-dLat) + ` AND ` + c.bind(q.Near.Latitude+dLat) + `
				   AND longitude BETWEEN ` + c.bind(q.Near.Longitude-dLon) + ` AND ` + c.bind(q.Near.Longitude+dLon) + `) z
			 WHERE miles <= ` + c.bind(q.Near.Miles) + zipOrder + `) near ON near.zip = left(j.postal_code, 5)`
		c.add("j.postal_code IS NOT NULL")
	}
	unfiltered := len(c.conds)
	q.addFilters(c, except)
	if s.condition != "" {
		c.add(s.condition)
	}
	if q.Words != "" {
		if q.Near != nil && len(c.conds) > unfiltered && s == everyJob {
			from = candidatesNear(from, c.conds, zipOrder != "")
			c.conds = nil
		}
		// Last, so that a job's words, the costliest of its checks, are
		// read only once its other checks have passed. A large match's
		// page walks the jobs (walkNewest), which the words' index must
		// not answer instead: no index takes IS TRUE. PostgreSQL chose
		// the index and a sort for the 87,373 jobs of 'hazmat & tanker'
		// among a million, once their words were in their rows (0041),
		// as the table was twice as large.
		words := "j.search_words @@ ?::tsquery"
		if walk {
			words = "(" + words + ") IS TRUE"
		}
		c.add(words, q.Words)
	}
	return from, strings.Join(c.conds, " AND "), c.args
}

// candidatesNear is the FROM of the jobs of the radius of from (jobs j
// joined to the ZIP codes near) that meet conds, each with its miles as
// near.miles, for their words to be checked next. The ZIP index holds
// every column a filter tests (migration 0031), so the candidates are read
// from it alone, and only they are then read from the table with their
// words. The subquery is fenced (OFFSET 0): merged into the statement, the
// jobs were read from the table in the ZIP index's order and each checked
// there, for a word search within 100 miles of 77002 with two filters the
// 12,714 jobs of the radius (62 ms) where 1,940 pass the filters.
//
// Nearest first (byMiles), the candidates come in the order of the ZIP
// codes, which the statement is told (ORDER BY) so that it still reads no
// further than its page: unordered, it sorted the 74,422 candidates of a
// common word within 500 miles to keep 20 (1.5 s against 9 ms).
func candidatesNear(from string, conds []string, byMiles bool) string {
	order := ""
	if byMiles {
		order = " ORDER BY near.miles"
	}
	return `(SELECT j.id, near.miles FROM ` + from + ` WHERE ` + strings.Join(conds, " AND ") + order + ` OFFSET 0) near
		JOIN jobs j ON j.id = near.id`
}

// addFilters adds to c the filters of q but the one of facet except.
func (q JobSearch) addFilters(c *conditions, except JobFacet) {
	in := func(facet JobFacet, values []string) {
		if len(values) > 0 && facet != except {
			c.add(facetIn[facet], pq.StringArray(values))
		}
	}
	in(FacetDriverType, q.DriverTypes)
	in(FacetFreightType, q.FreightTypes)
	in(FacetRouteType, q.RouteTypes)
	in(FacetEmploymentType, q.EmploymentTypes)
	in(FacetState, q.States)
	if len(q.LicenseClasses) > 0 && except != FacetLicenseClass {
		c.add("(j.license_class IS NULL OR j.license_class = ANY (?::text[]))", pq.StringArray(q.LicenseClasses))
	}
	// The minimum pay is in the unit of the one pay frequency asked for:
	// the two are one filter, left out together from that facet.
	if except != FacetPayFrequency {
		if len(q.PayFrequencies) > 0 {
			c.add(facetIn[FacetPayFrequency], pq.StringArray(q.PayFrequencies))
		}
		if q.MinPay != nil {
			c.add("coalesce(j.pay_amount_max, j.pay_amount_min) >= ?::numeric / 100", *q.MinPay)
		}
	}
	if q.ExcludeTWICOnly {
		c.add("NOT j.twic_only")
	}
	if q.PostedSince != nil {
		c.add("j.created_at >= ?", *q.PostedSince)
	}
	if len(q.AccountIDs) > 0 {
		c.add("j.account_id = ANY (?::bigint[])", pq.Array(q.AccountIDs))
	}
}

// milesFrom is the great-circle distance in miles between the point of
// columns lat, lon and the point of the expressions lat0, lon0 (§6's
// formula, as the drivers list's radius tests it).
func milesFrom(lat, lon, lat0, lon0 string) string {
	return fmt.Sprintf(`(2 * %[5]g * asin(least(1, sqrt(
		power(sin(radians(%[1]s - %[3]s) / 2), 2) +
		cos(radians(%[3]s)) * cos(radians(%[1]s)) * power(sin(radians(%[2]s - %[4]s) / 2), 2)))))`,
		lat, lon, lat0, lon0, EarthRadiusMiles)
}

// fragmentDelimiter separates the highlights ts_headline answers: a
// character no text holds (the checks refuse control characters).
const fragmentDelimiter = "\x1f"

// searchPage reads the page of results q asks for; for a page that finds
// them (findRanked), where the ranked matches end (nil when every match is
// ranked); and for one that counts them (countInPage), the matches and
// the facets that share them (facetsInPage).
func searchPage(ctx context.Context, db sqlx.QueryerContext, q JobSearch) (pageRead, error) {
	query, args := pageStatement(q)
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return pageRead{}, fmt.Errorf("read page: %w", err)
	}
	defer rows.Close()
	page := pageRead{jobs: []JobFound{}}
	for rows.Next() {
		var f JobFound
		var headline *string
		var rankedAddedAt, rankedID, total *int64
		var facets []byte
		dest := append([]any{&f.Cursor.Key, &f.Cursor.AddedAt, &f.Miles, &f.AccountID, &f.AccountName}, jobScanDest(&f.Job)...)
		if err := rows.Scan(append(dest, &headline, &rankedAddedAt, &rankedID, &total, &facets)...); err != nil {
			return pageRead{}, fmt.Errorf("read page: %w", err)
		}
		if facets != nil && page.facets == nil {
			if page.facets, err = pageFacets(facets); err != nil {
				return pageRead{}, err
			}
		}
		if rankedID != nil {
			page.ranked = &JobPlace{AddedAt: *rankedAddedAt, ID: *rankedID}
		}
		if total != nil {
			page.total = *total
		}
		f.Cursor.ID = f.ID
		if headline != nil {
			f.Highlights = strings.Split(*headline, fragmentDelimiter)
		}
		page.jobs = append(page.jobs, f)
	}
	if err := rows.Err(); err != nil {
		return pageRead{}, fmt.Errorf("read page: %w", err)
	}
	return page, nil
}

// pageRead is what a page's statement answers.
type pageRead struct {
	jobs   []JobFound
	ranked *JobPlace
	// total is the number of matches when the page counts them, 0 when
	// none is read.
	total int64
	// facets are the counts of the facets the page counts, by value; nil
	// when no job is read.
	facets map[JobFacet][]FacetCount
}

// pageFacets reads the facet counts of a page's statement (pageStatement):
// a JSON array of each facet's values and counts.
func pageFacets(counted []byte) (map[JobFacet][]FacetCount, error) {
	var values []struct {
		Facet JobFacet `json:"f"`
		Value string   `json:"v"`
		Count int64    `json:"n"`
	}
	if err := json.Unmarshal(counted, &values); err != nil {
		return nil, fmt.Errorf("read page facets: %w", err)
	}
	facets := map[JobFacet][]FacetCount{}
	for _, v := range values {
		facets[v.Facet] = append(facets[v.Facet], FacetCount{Value: v.Value, Count: v.Count})
	}
	for _, counts := range facets {
		sortByCount(counts)
	}
	return facets, nil
}

// facetsOfMatched is the column of a page's statement that counts facets
// over its whole match (the CTE matched, pageRows.ordered): an array of
// each value's facet, value and count, or NULL when no facet is.
func facetsOfMatched(facets []JobFacet) string {
	if len(facets) == 0 {
		return "NULL::json"
	}
	counts := make([]string, len(facets))
	for i, f := range facets {
		counts[i] = `SELECT ` + strconv.Itoa(int(f)) + ` AS f, v, count(*) AS n FROM (SELECT ` +
			strings.Replace(facetColumns[f], "j.", "m.", 1) + ` AS v FROM matched m) c WHERE v IS NOT NULL GROUP BY v`
	}
	return `(SELECT json_agg(json_build_object('f', f, 'v', v, 'n', n)) FROM (` + strings.Join(counts, " UNION ALL ") + `) c)`
}

// pageStatement is the statement of q's page and its arguments: each
// row's sort key, when it was first added, its miles, account and name,
// the job, its highlights, where the ranked matches end (findRanked: the
// place of the oldest of them, or two NULLs), and the number of matches
// (countInPage, or NULL) and its facets (facetsInPage: facetsOfMatched).
func pageStatement(q JobSearch) (string, []any) {
	// Nearest first, the ZIP codes are walked nearest first, and the jobs
	// of each read from the ZIP index until the page is full: PostgreSQL
	// keeps a subquery's order, and sorts only the jobs of one ZIP code
	// (one distance) at a time by time. Unordered, it read the 126,339
	// jobs within 500 miles of 77002 to keep the nearest 20 (65 ms).
	zipOrder := ""
	if q.Order == ByDistance {
		zipOrder = " ORDER BY miles"
	}
	from, where, args := q.matchFrom(noFacet, zipOrder, everyJob, q.walkNewest)
	c := &conditions{args: args}
	// Each row's miles from the centre, and its sort key as a float8 a
	// cursor holds exactly: the rank (a real), the miles, or whole cents.
	// The key is written only into a statement that reads it: PostgreSQL
	// refuses a parameter it cannot type, such as the words of a rank
	// left out of the statement.
	miles := "NULL::float8"
	if q.Near != nil {
		miles = "near.miles"
	}
	key := func() string {
		switch q.Order {
		case ByRelevance:
			return "ts_rank_cd(j.search_words, " + c.bind(q.Words) + "::tsquery)::float8"
		case ByDistance:
			return "k.miles"
		case ByPay:
			return "coalesce(round(coalesce(j.pay_amount_max, j.pay_amount_min) * 100), -1)::float8"
		}
		return "0::float8"
	}
	sel := pageRows{from: from, miles: miles, limit: c.bind(q.Limit), counted: q.countInPage, facets: q.facetsInPage}
	// Where the ranked matches end, for the first page to find.
	with, rows, rankedEnd := "", "", "NULL::bigint, NULL::bigint"
	var since *JobPlace
	if q.After != nil {
		since = q.After.Ranked
	}
	switch {
	case q.findRanked:
		with, rows, rankedEnd = sel.newestRanked(where, key())
	case q.Order != ByRelevance || since == nil:
		with, rows = sel.rows(c, q.Order, key(), []string{where}, q.After)
	default:
		rows = sel.rankedThenOlder(c, where, key, *since, q.After)
	}
	highlights := "NULL::text"
	if q.Words != "" {
		// The title, escaped as HTML (a fragment is HTML), then the
		// description's text without its tags (its entities stay).
		highlights = `ts_headline('english', replace(replace(replace(x.title, '&', '&amp;'), '<', '&lt;'), '>', '&gt;') || E'\n' ||
			regexp_replace(x.description, '<[^>]*>', ' ', 'g'), ` +
			c.bind(q.Words) + `::tsquery, 'StartSel=<b>, StopSel=</b>, MaxFragments=3, MaxWords=25, MinWords=10, FragmentDelimiter="` +
			fragmentDelimiter + `"')`
	}
	// The page is chosen on jobs alone; the account's name, the job's
	// columns and the highlights are read for the page's rows only.
	query := `
		WITH ` + with + `page AS (` + rows + `)
		SELECT p.key, (extract(epoch FROM p.created_at) * 1000000)::bigint, p.miles, p.account_id, a.name, x.*, ` + highlights + `, ` + rankedEnd + `, p.total,
		       ` + facetsOfMatched(q.facetsInPage) + `
		  FROM page p
		  JOIN accounts a ON a.id = p.account_id
		 CROSS JOIN LATERAL (` + jobSelect + ` WHERE id = p.id) x
		 ORDER BY ` + orderOver(searchOrderBy(q.Order), "p")
	return query, c.args
}

// unrankedKey is the sort key of the matches older than those ranked by
// relevance: below every rank, which is never negative.
const unrankedKey = "-1::float8"

// searchOrderBy is the ORDER BY of an order over jobs j and their sort keys s.
// Ties go newest first, then by id; the key's direction is the order's
// (nearest first is the one ascending).
func searchOrderBy(o JobSearchOrder) string {
	switch o {
	case ByPosted:
		return "j.created_at DESC, j.id DESC"
	case ByDistance:
		return "s.key ASC, j.created_at DESC, j.id DESC"
	default:
		return "s.key DESC, j.created_at DESC, j.id DESC"
	}
}

// orderOver is by, an order of jobs j and their sort keys s (searchOrderBy),
// over the rows of a query that selected both into one, named alias.
func orderOver(by, alias string) string {
	return strings.NewReplacer("s.key", alias+".key", "j.", alias+".").Replace(by)
}

// pageRows selects the rows of a page, before their columns are read.
type pageRows struct {
	from, miles, limit string
	// counted is set when the rows carry the number of matches.
	counted bool
	// facets are the facets counted with the matches, whose columns the
	// match keeps.
	facets []JobFacet
}

// ordered is the SELECT of cols (each with a name, the key's "key") from
// the rows of tables where conds hold, in order by (of j's columns and s's
// key), up to limit; with the number of rows of tables and conds (counted)
// or NULL, as total. When counted, the rows of tables and conds are read
// once into the CTE matched, which with holds (else ""), with the columns
// of p's facets for the statement to count them (facetsOfMatched).
//
// The count is made of the CTE, which the order and limit are applied
// to. In one query with them, PostgreSQL 15 reckons that the count stops
// at the limit as a walk of an index in that order would: it read the
// posted index whole for the 1,602 jobs of a freight in two states among
// 100,000 (82 ms), where a bitmap of the match index and a sort read only
// them.
func (p pageRows) ordered(cols, tables, conds, by, limit string) (with, sel string) {
	if !p.counted {
		return "", `SELECT ` + cols + `, NULL::bigint AS total FROM ` + tables + ` WHERE ` + conds + `
		 ORDER BY ` + by + ` LIMIT ` + limit
	}
	for _, f := range p.facets {
		cols += ", j." + facetNames[f]
	}
	with = `matched AS MATERIALIZED (SELECT ` + cols + ` FROM ` + tables + ` WHERE ` + conds + `),
		`
	return with, `SELECT *, (SELECT count(*) FROM matched) AS total FROM matched w
		 ORDER BY ` + orderOver(by, "w") + ` LIMIT ` + limit
}

// newestRanked is the first page by relevance of a match that may be
// larger than the ranked matches, ordered by key: the newest matches of
// where, read once (with), ranked for the page (rows), and the oldest of
// them, which is where the ranked end when the match is larger (rankedEnd,
// its two columns). The first page is all ranked matches, as a page is
// smaller than they are.
func (p pageRows) newestRanked(where, key string) (with, rows, rankedEnd string) {
	// When the statement counts the match, the ranked end where it holds
	// more than are ranked, as where a count before the page found it so.
	more := `(SELECT count(*) FROM newest) = ` + strconv.Itoa(rankedMatches)
	if p.counted {
		more = `(SELECT max(total) FROM newest) > ` + strconv.Itoa(rankedMatches)
	}
	// The newest keep their words (j, for the key) to be ranked. A
	// counted match is read whole into matched first, where the words (in
	// the jobs' rows since migration 0041, 1.6 KB each) spilled to disk:
	// 8.7 MB for the 5,449 jobs of a rare word, 28 ms. Its newest read
	// their words back from jobs instead.
	cols, words := "j.id, j.account_id, j.created_at, j.search_words, "+p.miles+" AS miles",
		"CROSS JOIN LATERAL (SELECT n.search_words) j"
	if p.counted {
		cols = "j.id, j.account_id, j.created_at, " + p.miles + " AS miles"
		words = "CROSS JOIN LATERAL (SELECT search_words FROM jobs WHERE id = n.id) j" // by its key, each
	}
	matched, newest := p.ordered(cols, p.from, where, searchOrderBy(ByPosted), strconv.Itoa(rankedMatches))
	with = matched + `newest AS MATERIALIZED (` + newest + `),
		ranked_end AS (SELECT (extract(epoch FROM created_at) * 1000000)::bigint AS added_at, id FROM newest
		 WHERE ` + more + ` ORDER BY created_at, id LIMIT 1),
		`
	rows = `SELECT n.id, n.account_id, n.created_at, ` + key + ` AS key, n.miles, n.total
		  FROM newest n ` + words + ` ORDER BY key DESC, n.created_at DESC, n.id DESC LIMIT ` + p.limit
	return with, rows, "(SELECT added_at FROM ranked_end), (SELECT id FROM ranked_end)"
}

// rankedThenOlder is a later page by relevance of a match whose ranked
// matches end at since: the ranked ones by key, then the older ones newest
// first, each part from where the page starts (after). The key is bound
// only when the ranked part is read. A later page does not count.
func (p pageRows) rankedThenOlder(c *conditions, where string, key func() string, since JobPlace, after *JobSearchCursor) string {
	p.counted = false
	ranked := "(j.created_at, j.id) >= (" + c.bind(time.UnixMicro(since.AddedAt).UTC()) + ", " + c.bind(since.ID) + ")"
	older := strings.Replace(ranked, ">=", "<", 1)
	var parts []string
	olderAfter := after
	if after == nil || after.Key >= 0 {
		_, rows := p.rows(c, ByRelevance, key(), []string{where, ranked}, after)
		parts = append(parts, rows)
		olderAfter = nil
	}
	_, rows := p.rows(c, ByPosted, unrankedKey, []string{where, older}, olderAfter)
	parts = append(parts, rows)
	return "SELECT * FROM ((" + strings.Join(parts, ") UNION ALL (") + ")) u ORDER BY key DESC, created_at DESC, id DESC LIMIT " + p.limit
}

// rows is the SELECT of up to a page of the jobs of conds, in order o by
// key, from after on: each one's id, account, when it was first added, its
// sort key and its miles; and the CTE it reads when counted (ordered).
func (p pageRows) rows(c *conditions, o JobSearchOrder, key string, conds []string, after *JobSearchCursor) (with, sel string) {
	if after != nil {
		addedAt, id := c.bind(time.UnixMicro(after.AddedAt).UTC()), c.bind(after.ID)
		later := "(j.created_at, j.id) < (" + addedAt + ", " + id + ")"
		if o != ByPosted {
			k, cmp := c.bind(after.Key), "<"
			if o == ByDistance {
				cmp = ">"
			}
			later = "(s.key " + cmp + " " + k + " OR s.key = " + k + " AND " + later + ")"
		}
		conds = append(slices.Clip(conds), later)
	}
	return p.ordered("j.id, j.account_id, j.created_at, s.key, s.miles", p.from+`
		 CROSS JOIN LATERAL (SELECT k.miles, `+key+` AS key FROM (SELECT `+p.miles+` AS miles) k) s`,
		strings.Join(conds, " AND "), searchOrderBy(o), p.limit)
}
