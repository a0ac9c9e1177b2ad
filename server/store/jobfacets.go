package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Facets from kept counts. job_facet_counts (migration 0036) holds, for
// each account and for every account together, how many active jobs have
// each value of each facet, in every job and in each sample. A facet whose
// match is every active job of the search's accounts, but for words, is
// read from it rather than from the jobs:
//
//   - without words, the kept counts are the facet: exact, a few index
//     entries a value (three facets of 1,000,000 jobs took 1.9 s counted
//     over the jobs);
//   - with words, a value's count is its jobs times the share of its jobs
//     in a sample that match the words (countFacetsByShare).

// everyAccount is the account under which job_facet_counts counts the
// jobs of every account. No account has it: ids start at 1.
const everyAccount int64 = 0

// facetNames are the facets as job_facet_counts names them: the column;
// "all", with the one value "", counts the jobs themselves.
var facetNames = map[JobFacet]string{
	noFacet:             "all",
	FacetDriverType:     "driver_type",
	FacetFreightType:    "freight_type",
	FacetRouteType:      "route_type",
	FacetEmploymentType: "employment_type",
	FacetPayFrequency:   "pay_frequency",
	FacetState:          "state",
	FacetLicenseClass:   "license_class",
}

// countedByValue says whether the match of facet f (its match without its
// own filter) is, but for its words, every active job of the search's
// accounts: then job_facet_counts holds how many of them have each value.
// addFilters decides, so that a filter added there is never ignored here.
func (q JobSearch) countedByValue(f JobFacet) bool {
	if q.Near != nil || slices.ContainsFunc(q.AccountIDs, func(id int64) bool { return id <= everyAccount }) {
		return false
	}
	q.AccountIDs = nil
	c := &conditions{}
	q.addFilters(c, f)
	return len(c.conds) == 0
}

// valueCounts are counts by facet and value.
type valueCounts map[JobFacet]map[string]int64

func (c valueCounts) add(f JobFacet, v string, n int64) {
	if c[f] == nil {
		c[f] = map[string]int64{}
	}
	c[f][v] += n
}

// keptFacetCounts reads how many active jobs of the accounts (of every
// account when there are none) have each value of each of the facets,
// among every job (sample 1) or those of a sample (its share). Values no
// job has are left out.
func keptFacetCounts(ctx context.Context, db sqlx.QueryerContext, accounts []int64, facets []JobFacet, sample int64) (valueCounts, error) {
	if len(accounts) == 0 {
		accounts = []int64{everyAccount}
	}
	names := make([]string, len(facets))
	for i, f := range facets {
		names[i] = facetNames[f]
	}
	var rows []struct {
		Facet string `db:"facet"`
		FacetCount
	}
	if err := sqlx.SelectContext(ctx, db, &rows, `
		SELECT facet, value, sum(n)::bigint AS count FROM job_facet_counts
		 WHERE account_id = ANY ($1::bigint[]) AND facet = ANY ($2::text[]) AND sample = $3
		 GROUP BY facet, value HAVING sum(n) > 0`, pq.Array(accounts), pq.StringArray(names), sample); err != nil {
		return nil, fmt.Errorf("read kept facet counts: %w", err)
	}
	counts := valueCounts{}
	for _, r := range rows {
		for _, f := range facets {
			if facetNames[f] == r.Facet {
				counts.add(f, r.Value, r.Count)
			}
		}
	}
	return counts, nil
}

// countFacetsKept counts the facets whose match is counted by value
// (countedByValue), each as countFacet does. They share one match: with
// any filter, that of its own facet is the only one counted by value.
//
// reads are the samples the match's count has already read for these
// facets (countMatches), by share.
func countFacetsKept(ctx context.Context, db sqlx.QueryerContext, q JobSearch, facets []JobFacet, reads sampleReads) (map[JobFacet][]FacetCount, bool, error) {
	all, err := keptFacetCounts(ctx, db, q.AccountIDs, facets, 1)
	if err != nil {
		return nil, false, err
	}
	if q.Words != "" {
		return countFacetsByShare(ctx, db, q, facets, all, reads)
	}
	lists := map[JobFacet][]FacetCount{}
	for _, f := range facets {
		lists[f] = byCount(all[f])
	}
	return lists, false, nil
}

// A value's matches among its jobs, estimated from a sample: when n of the
// sample's jobs have the value and m of those match the words, the value's
// count is its jobs (kept exactly) times m/n. When most of the value's
// jobs match, m/n is known closely from far fewer jobs than a plain count
// of the sample's matches needs (1,600): under a common word, the 5,600
// jobs of a small state of 1,000,000 are estimated from the 350 in a
// sample of 1 in 16.
//
// settles says whether m of n is enough for an estimate: the share's
// Wilson interval at four standard errors (z, as sampleHitsToEstimate
// sets it: a plain estimate from 1,600 matches is within 10% at four
// standard errors of 2.5%) lies within 10% of m/n. Wilson's interval
// holds where the normal one fails, with a share near 1 and few jobs:
// 40 of 40 matching says only that the share is above 0.7 or so, and it
// takes 145 of 145 to settle. A value with as many matches as a plain
// estimate needs settles too: the share's error is never the larger.
func settles(m, n int64) bool {
	return m >= sampleHitsToEstimate || shareWithinTenPercent(float64(m), float64(n), shareZ())
}

// mayReachShare says whether a sample of n jobs with the value may settle
// it when the share of them matching is near p: with half the margin of
// settles (z / sqrt 2), as sample.mayReach allows for the plain count.
func mayReachShare(p float64, n int64) bool {
	return shareWithinTenPercent(p*float64(n), float64(n), shareZ()/math.Sqrt2)
}

// shareZ is the standard errors a share is held to: 4 when an estimate
// needs 1,600 matches (4 = 10% of sqrt(1,600)), fewer when a test lowers
// sampleHitsToEstimate to reach the estimates with a few thousand jobs.
func shareZ() float64 { return 0.1 * math.Sqrt(float64(sampleHitsToEstimate)) }

// shareWithinTenPercent says whether the Wilson score interval of m
// matches in n, at z standard errors, lies within 10% of m/n.
func shareWithinTenPercent(m, n, z float64) bool {
	if m <= 0 || n <= 0 {
		return false
	}
	p, z2 := m/n, z*z
	centre := (p + z2/(2*n)) / (1 + z2/n)
	half := z / (1 + z2/n) * math.Sqrt(p*(1-p)/n+z2/(4*n*n))
	return centre-half >= 0.9*p && centre+half <= 1.1*p
}

// facetValue is one value of one facet.
type facetValue struct {
	facet JobFacet
	value string
}

// countFacetsByShare counts the matches of words by the facets' values,
// where all are the values' active jobs (keptFacetCounts): each value from
// the smallest sample that settles it, the rest counted over every job.
// A sample is read once for every facet.
//
// Estimates are made only in a sample holding enough matches for the
// match's own size to be estimated (sampleHitsToEstimate), so a match of
// 10,000 jobs or fewer is always counted exactly. A sample is read whole,
// once for every facet, while it may settle a value still open
// (worthReading): the samples' table stays in shared buffers, and every
// match of a common word in the sample of 1 in 16 (61,342 jobs) read whole
// in 13 ms, where 33 small states' matches, found each by its own filter
// in the words' index, took 33 ms. Once the match is known large, a sample
// is read for the open values' jobs only (countByFacets): its words are
// still matched whole, but only those jobs are grouped. The values no
// sample settles are counted over every job, by their own filters.
func countFacetsByShare(ctx context.Context, db sqlx.QueryerContext, q JobSearch, facets []JobFacet, all valueCounts, reads sampleReads) (map[JobFacet][]FacetCount, bool, error) {
	counts := valueCounts{}
	// open are the values not yet settled, each with the share of its
	// sampled jobs seen to match: 1 until a sample says otherwise.
	open := map[facetValue]float64{}
	for f, values := range all {
		for v := range values {
			open[facetValue{f, v}] = 1
		}
	}
	// inSamples are the kept counts of each sample, read when first needed.
	inSamples := map[int64]valueCounts{}
	kept := func(s sample) (valueCounts, error) {
		if c, ok := inSamples[s.share]; ok {
			return c, nil
		}
		c, err := keptFacetCounts(ctx, db, q.AccountIDs, facets, s.share)
		inSamples[s.share] = c
		return c, err
	}
	large := false // a sample held enough matches to estimate the match
	for i, s := range samples {
		if len(open) == 0 {
			break
		}
		inSample, err := kept(s)
		if err != nil {
			return nil, false, err
		}
		if large {
			read, err := worthReading(open, samples[i:], kept)
			if err != nil {
				return nil, false, err
			}
			if !read {
				continue
			}
		}
		matched, err := reads.of(ctx, db, q, facets, s, open, large)
		if err != nil {
			return nil, false, err
		}
		if !large {
			if hits := matched[noFacet][""]; hits < sampleHitsToEstimate {
				if !s.mayReach(hits) {
					break
				}
				continue
			}
			large = true
		}
		for fv := range open {
			m, n := matched[fv.facet][fv.value], inSample[fv.facet][fv.value]
			switch {
			case settles(m, n):
				counts.add(fv.facet, fv.value, int64(math.Round(float64(all[fv.facet][fv.value])*float64(m)/float64(n))))
				delete(open, fv)
			case n > 0:
				open[fv] = float64(m) / float64(n)
			}
		}
	}
	estimated := len(counts) > 0
	if err := countOverEveryJob(ctx, db, q, facets, open, counts); err != nil {
		return nil, false, err
	}
	lists := map[JobFacet][]FacetCount{}
	for _, f := range facets {
		lists[f] = byCount(counts[f])
	}
	return lists, estimated, nil
}

// of is sample s's counts of the facets' values: as the match's count read
// it, or read now. Once the match is large, only the open values' jobs are
// counted (the rest would be grouped for nothing), and that partial read
// is not kept.
func (reads sampleReads) of(ctx context.Context, db sqlx.QueryerContext, q JobSearch, facets []JobFacet, s sample,
	open map[facetValue]float64, large bool) (valueCounts, error) {
	if matched, read := reads[s.share]; read {
		return matched, nil
	}
	var only []facetValue
	if large {
		only = slices.Collect(maps.Keys(open))
	}
	matched, err := countByFacets(ctx, db, q, facets, s, only)
	if err == nil && !large {
		reads[s.share] = matched
	}
	return matched, err
}

// countOverEveryJob adds to counts the open values' matches, counted over
// every job.
func countOverEveryJob(ctx context.Context, db sqlx.QueryerContext, q JobSearch, facets []JobFacet, open map[facetValue]float64, counts valueCounts) error {
	if len(open) == 0 {
		return nil
	}
	rest, err := countByFacets(ctx, db, q, facets, everyJob, slices.Collect(maps.Keys(open)))
	if err != nil {
		return err
	}
	for f, values := range rest {
		for v, n := range values {
			counts.add(f, v, n)
		}
	}
	return nil
}

// wholeReadShare is the largest sample read whole for the values it may
// settle, once the match is known to be large: under a common word the
// sample of 1 in 8 holds some 123,000 matches, more to read than the few
// values it would settle counted over every job.
const wholeReadShare = 16

// worthReading says whether the first of next, the samples yet to read
// (with their kept counts), is worth reading for the open values, each
// with the share of its jobs seen to match: it is read whole, so it must
// be one that may settle one of them, and none may need a larger one that
// would settle them all anyway (read alone, the larger costs less than
// both).
func worthReading(open map[facetValue]float64, next []sample, kept func(sample) (valueCounts, error)) (bool, error) {
	reachable := []valueCounts{}
	for _, s := range next {
		if s.share < wholeReadShare {
			break
		}
		c, err := kept(s)
		if err != nil {
			return false, err
		}
		reachable = append(reachable, c)
	}
	if len(reachable) == 0 {
		return false, nil
	}
	mayHere, needsLater := false, false
	for fv, p := range open {
		if mayReachShare(p, reachable[0][fv.facet][fv.value]) {
			mayHere = true
			continue
		}
		for _, c := range reachable[1:] {
			if mayReachShare(p, c[fv.facet][fv.value]) {
				needsLater = true
			}
		}
	}
	return mayHere && !needsLater, nil
}

// countByFacets counts the jobs q matches by the values of each of the
// facets (which share their match: countFacetsKept), among the jobs of
// sample s: the values of only, or every value when
// only is nil; the matching jobs themselves too, under noFacet (of the
// values' jobs alone, with only). With only, the jobs are kept by the
// values' filters as well: over every job, for an index to find them; in
// a sample, as a check of the jobs its words' index finds. The sample's
// words index holds the filters beside the words (migrations 0030, 0037), and
// PostgreSQL read it once for each value: the 33 small states under a
// common word in the sample of 1 in 16 took 18.7 ms in that index alone,
// and 25.7 ms in all, against 3.6 ms and 15.5 ms (the grouping of all
// 61,271 matches, 27.9 ms) with the states checked on the jobs the words
// alone found.
//
// One statement reads each matching job's values, and they are counted
// here: grouped in SQL, each job's values as rows of a lateral list, the
// 3,885 jobs of the smallest sample under a common word took 16 ms, twice
// as long as reading them (7 ms). Facets of one value a job are grouped in
// SQL by grouping sets instead (countGroupedByFacets).
func countByFacets(ctx context.Context, db sqlx.QueryerContext, q JobSearch, facets []JobFacet, s sample, only []facetValue) (valueCounts, error) {
	from, where, args := q.match(facets[0], s)
	var wanted map[facetValue]bool
	if only != nil {
		if facets, where, args, wanted = onlyValues(only, facets, s, where, args); len(facets) == 0 {
			return valueCounts{}, nil // no value to count, and no filter to keep them by
		}
	}
	columns := make([]string, len(facets))
	for i, f := range facets {
		columns[i] = "j." + facetNames[f]
	}
	if !slices.ContainsFunc(facets, func(f JobFacet) bool { return listFacets[f] }) {
		return countGroupedByFacets(ctx, db, facets, columns, from, where, args, wanted)
	}
	rows, err := db.QueryContext(ctx, `SELECT `+strings.Join(columns, ", ")+` FROM `+from+` WHERE `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("count facets: %w", err)
	}
	defer rows.Close()
	one := make([]sql.NullString, len(facets))
	lists := make([]pq.StringArray, len(facets))
	dest := make([]any, len(facets))
	for i, f := range facets {
		if listFacets[f] {
			dest[i] = &lists[i]
		} else {
			dest[i] = &one[i]
		}
	}
	counts := valueCounts{}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("count facets: %w", err)
		}
		counts.add(noFacet, "", 1)
		for i, f := range facets {
			values := lists[i]
			if !listFacets[f] {
				if !one[i].Valid {
					continue
				}
				values = pq.StringArray{one[i].String}
			}
			for _, v := range values {
				if wanted == nil || wanted[facetValue{f, v}] {
					counts.add(f, v, 1)
				}
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count facets: %w", err)
	}
	return counts, nil
}

// onlyValues narrows a count by facets to the values of only: the facets
// with a value wanted, where with the condition that keeps those values'
// jobs (its arrays added to args), and the values wanted. Only the facets
// with values wanted are read: of three facets under a common word, the
// 31,877 jobs of 48 open values of two of them in the sample of 1 in 16
// took 22.5 ms grouped by those two, against 25.0 ms by all three.
func onlyValues(only []facetValue, facets []JobFacet, s sample, where string, args []any) ([]JobFacet, string, []any, map[facetValue]bool) {
	wanted := map[facetValue]bool{}
	var kept []string
	var withValues []JobFacet
	for _, f := range facets {
		var values []string
		for _, fv := range only {
			if fv.facet == f {
				values = append(values, fv.value)
				wanted[fv] = true
			}
		}
		if len(values) > 0 {
			args = append(args, pq.StringArray(values))
			kept = append(kept, strings.Replace(facetIn[f], "?", fmt.Sprintf("$%d", len(args)), 1))
			withValues = append(withValues, f)
		}
	}
	if s == everyJob {
		where += " AND (" + strings.Join(kept, " OR ") + ")"
	} else {
		where += " AND (" + strings.Join(kept, " OR ") + ") IS TRUE" // no index takes IS TRUE
	}
	return withValues, where, args, wanted
}

// countGroupedByFacets is countByFacets for facets of one value a job
// (columns, in the jobs j of from and where): the jobs are grouped in SQL,
// by each column alone and all together, and only the groups are read.
// Read row by row, the 61,271 matches of a common word in the sample of 1
// in 16 took 27 ms in PostgreSQL and as long again to scan here.
func countGroupedByFacets(ctx context.Context, db sqlx.QueryerContext, facets []JobFacet, columns []string, from, where string, args []any, wanted map[facetValue]bool) (valueCounts, error) {
	sets := make([]string, len(columns))
	for i, c := range columns {
		sets[i] = "(" + c + ")"
	}
	list := strings.Join(columns, ", ")
	rows, err := db.QueryContext(ctx, `SELECT `+list+`, GROUPING(`+list+`), count(*) FROM `+from+` WHERE `+where+`
		 GROUP BY GROUPING SETS (`+strings.Join(sets, ", ")+`, ())`, args...)
	if err != nil {
		return nil, fmt.Errorf("count facets: %w", err)
	}
	defer rows.Close()
	values := make([]sql.NullString, len(facets))
	var grouping, n int64
	dest := make([]any, 0, len(facets)+2)
	for i := range values {
		dest = append(dest, &values[i])
	}
	dest = append(dest, &grouping, &n)
	all := int64(1)<<len(facets) - 1 // GROUPING's bit is 1 for a column not grouped by, the first column's highest
	counts := valueCounts{}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("count facets: %w", err)
		}
		if grouping == all {
			counts.add(noFacet, "", n)
			continue
		}
		for i, f := range facets {
			by := grouping&(1<<(len(facets)-1-i)) == 0
			if by && values[i].Valid && (wanted == nil || wanted[facetValue{f, values[i].String}]) {
				counts.add(f, values[i].String, n)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count facets: %w", err)
	}
	return counts, nil
}

// sampleReads are the counts of whole samples by facet value (and their
// matches, under noFacet), by the sample's share.
type sampleReads map[int64]valueCounts

// listFacets are the facets of a list column: a job counts once for each
// of its values.
var listFacets = map[JobFacet]bool{FacetRouteType: true, FacetEmploymentType: true}

// byCount lists counts highest first, then by value, leaving out zeros.
func byCount(counts map[string]int64) []FacetCount {
	list := []FacetCount{}
	for v, n := range counts {
		if n > 0 {
			list = append(list, FacetCount{Value: v, Count: n})
		}
	}
	sortByCount(list)
	return list
}

// sortByCount sorts counts highest first, then by value.
func sortByCount(counts []FacetCount) {
	slices.SortFunc(counts, func(a, b FacetCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Value, b.Value))
	})
}

// estimateByShare estimates the size of a match of words counted by value
// (countedByValue) from the matches of sample s, hits: the jobs it is
// among times the share of the sample's jobs that match.
func estimateByShare(ctx context.Context, db sqlx.QueryerContext, q JobSearch, s sample, hits int64) (matchSize, error) {
	all, err := keptFacetCounts(ctx, db, q.AccountIDs, []JobFacet{noFacet}, 1)
	if err != nil {
		return matchSize{}, err
	}
	inSample, err := keptFacetCounts(ctx, db, q.AccountIDs, []JobFacet{noFacet}, s.share)
	if err != nil {
		return matchSize{}, err
	}
	jobs, sampled := all[noFacet][""], inSample[noFacet][""]
	if sampled == 0 { // only a delete of them between the two reads
		return matchSize{total: hits * s.share, estimated: true}, nil
	}
	return matchSize{total: int64(math.Round(float64(jobs) * float64(hits) / float64(sampled))), estimated: true}, nil
}
