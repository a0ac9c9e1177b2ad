package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

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
	Value string
	Count int64
}

// JobSearchResult is a page of results, with the whole match's size and
// facets.
type JobSearchResult struct {
	Jobs  []JobFound
	Total int64
	// Estimated is true when Total or a facet's counts are estimates
	// (see countMatches): never for a match of 10,000 jobs or fewer.
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

// SearchJobs answers a page of the active jobs of every account that
// match q, in q's order, with the whole match's size and q's facets. It
// reads the read database when there is one.
func (s *Store) SearchJobs(ctx context.Context, q JobSearch) (JobSearchResult, error) {
	var r JobSearchResult
	err := s.read(ctx, func(db *sqlx.DB) error {
		var err error
		r, err = searchJobs(ctx, db, q)
		return err
	})
	if err != nil {
		return JobSearchResult{}, fmt.Errorf("search jobs: %w", err)
	}
	return r, nil
}

func searchJobs(ctx context.Context, db *sqlx.DB, q JobSearch) (JobSearchResult, error) {
	r := JobSearchResult{Facets: map[JobFacet][]FacetCount{}}
	var err error
	if r.Jobs, err = searchPage(ctx, db, q); err != nil {
		return r, err
	}
	if r.Total, r.Estimated, err = countMatches(ctx, db, q); err != nil {
		return r, err
	}
	for _, f := range q.Facets {
		var estimated bool
		if r.Facets[f], estimated, err = countFacet(ctx, db, q, f); err != nil {
			return r, err
		}
		r.Estimated = r.Estimated || estimated
	}
	return r, nil
}

// Counting a match exactly reads every matching job: 3.0 s for a word
// 853,603 of 1,000,000 jobs hold. Above 10,000 matches the contract takes
// an estimate within 10%, which the search makes from a fixed sample of
// the active jobs (migration 0029): the matches among them, times
// sampleShare. Each count is first made in the sample, and made again over
// every job when the sample holds too few matches for the estimate to be
// trusted.
const (
	// sampleCondition keeps the jobs j of the sample, word for word as the
	// predicate of its indexes, which PostgreSQL matches as text.
	sampleCondition = "(hashint8extended(j.id, 11) & 15) = 0"
	// sampleShare is how many jobs each job of the sample stands for.
	sampleShare = 16
)

// sampleHitsToEstimate is the fewest matches in the sample that an
// estimate is made from. The relative standard error of an estimate from h
// matches is about 1/sqrt(h): 2.5% at 1,600, so the estimate (25,600 jobs
// and more) is within 10% at four standard errors, and a match of 10,000
// jobs, about 625 in the sample, is always counted. A variable so that
// tests reach the estimates with a few thousand jobs.
var sampleHitsToEstimate int64 = 1_600

// countMatches is the number of jobs q matches, and whether it is an
// estimate.
func countMatches(ctx context.Context, db *sqlx.DB, q JobSearch) (int64, bool, error) {
	from, where, args := q.match(noFacet)
	var n int64
	if err := db.GetContext(ctx, &n, `SELECT count(*) FROM `+from+` WHERE `+where+` AND `+sampleCondition, args...); err != nil {
		return 0, false, fmt.Errorf("count in the sample: %w", err)
	}
	if n >= sampleHitsToEstimate {
		return n * sampleShare, true, nil
	}
	if err := db.GetContext(ctx, &n, `SELECT count(*) FROM `+from+` WHERE `+where, args...); err != nil {
		return 0, false, fmt.Errorf("count: %w", err)
	}
	return n, false, nil
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
// job has are not listed. It says whether the counts are estimates: when
// the facet's match holds enough of the sample (countMatches), each
// value's count is estimated from its own matches in the sample if they
// are enough, and counted over every job if they are not.
func countFacet(ctx context.Context, db *sqlx.DB, q JobSearch, f JobFacet) ([]FacetCount, bool, error) {
	sampled, err := facetCounts(ctx, db, q, f, true, nil)
	if err != nil {
		return nil, false, err
	}
	var hits int64
	for _, c := range sampled {
		hits += c.Count
	}
	if hits < sampleHitsToEstimate {
		counts, err := facetCounts(ctx, db, q, f, false, nil)
		return counts, false, err
	}
	// Values with few jobs in the sample, and those with none there, are
	// counted over every job: an estimate from a few would miss 10% by
	// more than chance allows, and a value absent from the sample may
	// still be held by some of the match.
	var estimated []string
	counts := make([]FacetCount, 0, len(sampled))
	for _, c := range sampled {
		if c.Count >= sampleHitsToEstimate {
			estimated = append(estimated, c.Value)
			counts = append(counts, FacetCount{Value: c.Value, Count: c.Count * sampleShare})
		}
	}
	// When every value a job can have is estimated, no value is left to
	// count (a job's values are checked against these lists as it is
	// posted): that spares reading the whole match again.
	if len(estimated) < facetValues[f] {
		rest, err := facetCounts(ctx, db, q, f, false, estimated)
		if err != nil {
			return nil, false, err
		}
		counts = append(counts, rest...)
	}
	slices.SortFunc(counts, func(a, b FacetCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Value, b.Value))
	})
	return counts, true, nil
}

// facetCounts reads the counts of facet f's values among the jobs q
// matches without f's own filter: in the sample or over every job, and
// leaving out the values of except.
func facetCounts(ctx context.Context, db *sqlx.DB, q JobSearch, f JobFacet, inSample bool, except []string) ([]FacetCount, error) {
	from, where, args := q.match(f)
	if inSample {
		where += " AND " + sampleCondition
	}
	cond := "v IS NOT NULL"
	if len(except) > 0 {
		args = append(args, pq.StringArray(except))
		cond = fmt.Sprintf("v IS NOT NULL AND NOT v = ANY ($%d::text[])", len(args))
	}
	rows, err := db.QueryContext(ctx, `
		SELECT v, count(*) FROM (SELECT `+facetColumns[f]+` AS v FROM `+from+` WHERE `+where+`) m
		 WHERE `+cond+` GROUP BY v ORDER BY count(*) DESC, v`, args...)
	if err != nil {
		return nil, fmt.Errorf("count facet: %w", err)
	}
	defer rows.Close()
	counts := []FacetCount{}
	for rows.Next() {
		var c FacetCount
		if err := rows.Scan(&c.Value, &c.Count); err != nil {
			return nil, fmt.Errorf("count facet: %w", err)
		}
		counts = append(counts, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count facet: %w", err)
	}
	return counts, nil
}

// match is the FROM and WHERE of the jobs q matches, and their arguments,
// leaving out the filter of facet except (noFacet leaves none out).
func (q JobSearch) match(except JobFacet) (from, where string, args []any) {
	c := &conditions{}
	from = "jobs j"
	c.add("j.deleted_at IS NULL")
	if q.Words != "" {
		c.add("j.search_words @@ ?::tsquery", q.Words)
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
			 WHERE miles <= ` + c.bind(q.Near.Miles) + `) near ON near.zip = left(j.postal_code, 5)`
		c.add("j.postal_code IS NOT NULL")
	}
	in := func(facet JobFacet, cond string, values []string) {
		if len(values) > 0 && facet != except {
			c.add(cond, pq.StringArray(values))
		}
	}
	in(FacetDriverType, "j.driver_type = ANY (?::text[])", q.DriverTypes)
	in(FacetFreightType, "j.freight_type = ANY (?::text[])", q.FreightTypes)
	in(FacetRouteType, "j.route_type && ?::text[]", q.RouteTypes)
	in(FacetEmploymentType, "j.employment_type && ?::text[]", q.EmploymentTypes)
	in(FacetState, "j.state = ANY (?::text[])", q.States)
	if len(q.LicenseClasses) > 0 && except != FacetLicenseClass {
		c.add("(j.license_class IS NULL OR j.license_class = ANY (?::text[]))", pq.StringArray(q.LicenseClasses))
	}
	// The minimum pay is in the unit of the one pay frequency asked for:
	// the two are one filter, left out together from that facet.
	if except != FacetPayFrequency {
		if len(q.PayFrequencies) > 0 {
			c.add("j.pay_frequency = ANY (?::text[])", pq.StringArray(q.PayFrequencies))
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
	return from, strings.Join(c.conds, " AND "), c.args
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

// searchPage reads the page of results q asks for.
func searchPage(ctx context.Context, db *sqlx.DB, q JobSearch) ([]JobFound, error) {
	query, args := pageStatement(q)
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read page: %w", err)
	}
	defer rows.Close()
	found := []JobFound{}
	for rows.Next() {
		var f JobFound
		var headline *string
		dest := append([]any{&f.Cursor.Key, &f.Cursor.AddedAt, &f.Miles, &f.AccountID, &f.AccountName}, jobScanDest(&f.Job)...)
		if err := rows.Scan(append(dest, &headline)...); err != nil {
			return nil, fmt.Errorf("read page: %w", err)
		}
		f.Cursor.ID = f.ID
		if headline != nil {
			f.Highlights = strings.Split(*headline, fragmentDelimiter)
		}
		found = append(found, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read page: %w", err)
	}
	return found, nil
}

// pageStatement is the statement of q's page and its arguments: each
// row's sort key, when it was first added, its miles, account and name,
// the job, and its highlights.
func pageStatement(q JobSearch) (string, []any) {
	from, where, args := q.match(noFacet)
	c := &conditions{conds: []string{where}, args: args}
	bind := c.bind
	// Each row's sort key, as a float8 a cursor holds exactly: the rank
	// (a real), the miles, or whole cents; and its miles from the centre.
	key, miles := "0::float8", "NULL::float8"
	if q.Near != nil {
		miles = "near.miles"
	}
	switch q.Order {
	case ByRelevance:
		key = "ts_rank_cd(j.search_words, " + bind(q.Words) + "::tsquery)::float8"
	case ByDistance:
		key = "k.miles"
	case ByPay:
		key = "coalesce(round(coalesce(j.pay_amount_max, j.pay_amount_min) * 100), -1)::float8"
	}
	// Ties go newest first, then by id; the key's direction is the order's
	// (nearest first is the one ascending).
	order, after := "j.created_at DESC, j.id DESC", "(j.created_at, j.id) < (?, ?)"
	if q.Order != ByPosted {
		direction, cmp := "DESC", "<"
		if q.Order == ByDistance {
			direction, cmp = "ASC", ">"
		}
		order = "s.key " + direction + ", " + order
		after = "(s.key " + cmp + " ? OR s.key = ? AND " + after + ")"
	}
	if a := q.After; a != nil {
		addedAt := time.UnixMicro(a.AddedAt).UTC()
		if q.Order == ByPosted {
			c.add(after, addedAt, a.ID)
		} else {
			c.add(after, a.Key, a.Key, addedAt, a.ID)
		}
	}
	limit := bind(q.Limit)
	highlights := "NULL::text"
	if q.Words != "" {
		// The title, escaped as HTML (a fragment is HTML), then the
		// description's text without its tags (its entities stay).
		highlights = `ts_headline('english', replace(replace(replace(x.title, '&', '&amp;'), '<', '&lt;'), '>', '&gt;') || E'\n' ||
			regexp_replace(x.description, '<[^>]*>', ' ', 'g'), ` +
			bind(q.Words) + `::tsquery, 'StartSel=<b>, StopSel=</b>, MaxFragments=3, MaxWords=25, MinWords=10, FragmentDelimiter="` +
			fragmentDelimiter + `"')`
	}
	// The page is chosen on jobs alone; the account's name, the job's
	// columns and the highlights are read for the page's rows only.
	query := `
		WITH page AS (
		SELECT j.id, j.account_id, j.created_at, s.key, s.miles
		  FROM ` + from + `
		 CROSS JOIN LATERAL (SELECT k.miles, ` + key + ` AS key FROM (SELECT ` + miles + ` AS miles) k) s
		 WHERE ` + strings.Join(c.conds, " AND ") + `
		 ORDER BY ` + order + `
		 LIMIT ` + limit + `)
		SELECT p.key, (extract(epoch FROM p.created_at) * 1000000)::bigint, p.miles, p.account_id, a.name, x.*, ` + highlights + `
		  FROM page p
		  JOIN accounts a ON a.id = p.account_id
		 CROSS JOIN LATERAL (` + jobSelect + ` WHERE id = p.id) x
		 ORDER BY ` + strings.NewReplacer("s.key", "p.key", "j.", "p.").Replace(order)
	return query, c.args
}
