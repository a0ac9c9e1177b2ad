package store

import (
	"cmp"
	"context"
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
//     in a sample that match the words (countFacetByShare).

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

// keptFacetCounts reads how many active jobs of the accounts (of every
// account when there are none) have each value of facet f, among every
// job (sample 1) or those of a sample (its share). Values no job has are
// left out.
func keptFacetCounts(ctx context.Context, db sqlx.QueryerContext, accounts []int64, f JobFacet, sample int64) (map[string]int64, error) {
	if len(accounts) == 0 {
		accounts = []int64{everyAccount}
	}
	var rows []FacetCount
	if err := sqlx.SelectContext(ctx, db, &rows, `
		SELECT value, sum(n)::bigint AS count FROM job_facet_counts
		 WHERE account_id = ANY ($1::bigint[]) AND facet = $2 AND sample = $3
		 GROUP BY value HAVING sum(n) > 0`, pq.Array(accounts), facetNames[f], sample); err != nil {
		return nil, fmt.Errorf("read kept facet counts: %w", err)
	}
	counts := make(map[string]int64, len(rows))
	for _, r := range rows {
		counts[r.Value] = r.Count
	}
	return counts, nil
}

// countFacetKept is countFacet for a facet whose match is counted by value
// (countedByValue).
func countFacetKept(ctx context.Context, db sqlx.QueryerContext, q JobSearch, f JobFacet) ([]FacetCount, bool, error) {
	all, err := keptFacetCounts(ctx, db, q.AccountIDs, f, 1)
	if err != nil {
		return nil, false, err
	}
	if q.Words == "" {
		return byCount(all), false, nil
	}
	return countFacetByShare(ctx, db, q, f, all)
}

// A value's matches among its jobs, estimated from a sample: when n of the
// sample's jobs have the value and m of those match the words, the value's
// count is its jobs (kept exactly) times m/n. The relative standard error
// of m/n is about sqrt((n-m) / (m n)), which is far smaller than that of
// a plain count of the sample's matches (1/sqrt(m)) when most of the
// value's jobs match: under a common word, the 5,600 jobs of a small state
// of 1,000,000 are estimated from the 87 in a sample of 1 in 64, where a
// plain count needed 1,600 matches and so read them all.
//
// settles says whether m of n is enough for an estimate: a relative
// standard error within 2.5% (the estimate is then within 10% at four
// standard errors, as sampleHitsToEstimate allows), computed with one
// more miss than seen, so that a handful of jobs that all match is not
// taken for a certainty (it takes 40 of 40).
func settles(m, n int64) bool {
	return m > 0 && sampleHitsToEstimate*(n-m+1) <= m*n
}

// mayReachShare says whether a sample of n jobs with the value may settle
// it when the share of them matching is near p: with half the margin of
// settles, as sample.mayReach allows for the plain count.
func mayReachShare(p float64, n int64) bool {
	m := p * float64(n)
	return m > 0 && float64(sampleHitsToEstimate)/2*(float64(n)-m+1) <= m*float64(n)
}

// countFacetByShare counts the matches of words by facet f's values, where
// all are the values' active jobs (keptFacetCounts): each value from the
// smallest sample that settles it, the rest counted over every job.
//
// Estimates are made only in a sample holding enough matches for the
// match's own size to be estimated (sampleHitsToEstimate), so a match of
// 10,000 jobs or fewer is always counted exactly. From there, a sample is
// read only for the values it may settle, by their own filter, which the
// words' indexes hold beside the words: a sample of 1 in 16 under a common
// word is 62,000 jobs, a small state's share of it a few hundred.
func countFacetByShare(ctx context.Context, db sqlx.QueryerContext, q JobSearch, f JobFacet, all map[string]int64) ([]FacetCount, bool, error) {
	counts := map[string]int64{}
	// open are the values not yet settled, each with the share of its
	// sampled jobs seen to match: 1 until a sample says otherwise.
	open := map[string]float64{}
	for v := range all {
		open[v] = 1
	}
	large := false // a sample held enough matches to estimate the match
	for _, s := range samples {
		inSample, err := keptFacetCounts(ctx, db, q.AccountIDs, f, s.share)
		if err != nil {
			return nil, false, err
		}
		// Until the match is known to be large, the sample is read whole
		// (only nil), to count it.
		var only []string
		if large {
			for v, p := range open {
				if mayReachShare(p, inSample[v]) {
					only = append(only, v)
				}
			}
			if len(only) == 0 {
				continue
			}
		}
		matched, err := facetCountsOf(ctx, db, q, f, s.condition, only)
		if err != nil {
			return nil, false, err
		}
		if !large {
			var hits int64
			for _, m := range matched {
				hits += m
			}
			if hits < sampleHitsToEstimate {
				if !s.mayReach(hits) {
					break
				}
				continue
			}
			large = true
			only = slices.Collect(maps.Keys(open))
		}
		for _, v := range only {
			m, n := matched[v], inSample[v]
			switch {
			case settles(m, n):
				counts[v] = int64(math.Round(float64(all[v]) * float64(m) / float64(n)))
				delete(open, v)
			case n > 0:
				open[v] = float64(m) / float64(n)
			}
		}
		if len(open) == 0 {
			break
		}
	}
	estimated := len(counts) > 0
	if len(open) > 0 {
		rest, err := facetCountsOf(ctx, db, q, f, "", slices.Collect(maps.Keys(open)))
		if err != nil {
			return nil, false, err
		}
		maps.Copy(counts, rest)
	}
	return byCount(counts), estimated, nil
}

// facetCountsOf counts the jobs q matches without facet f's own filter by
// f's values, in the sample of condition ("" for every job): the values
// of only, or every value when only is nil. The values are kept by f's
// filter as well, for an index to find their jobs.
func facetCountsOf(ctx context.Context, db sqlx.QueryerContext, q JobSearch, f JobFacet, condition string, only []string) (map[string]int64, error) {
	from, where, args := q.match(f, condition)
	outer := "v IS NOT NULL"
	if only != nil {
		args = append(args, pq.StringArray(only))
		param := fmt.Sprintf("$%d", len(args))
		where += " AND " + strings.Replace(facetIn[f], "?", param, 1)
		outer += " AND v = ANY (" + param + "::text[])"
	}
	var rows []FacetCount
	if err := sqlx.SelectContext(ctx, db, &rows, `
		SELECT v AS value, count(*) AS count FROM (SELECT `+facetColumns[f]+` AS v FROM `+from+` WHERE `+where+`) m
		 WHERE `+outer+` GROUP BY v`, args...); err != nil {
		return nil, fmt.Errorf("count facet: %w", err)
	}
	counts := make(map[string]int64, len(rows))
	for _, r := range rows {
		counts[r.Value] = r.Count
	}
	return counts, nil
}

// byCount lists counts highest first, then by value, leaving out zeros.
func byCount(counts map[string]int64) []FacetCount {
	list := []FacetCount{}
	for v, n := range counts {
		if n > 0 {
			list = append(list, FacetCount{Value: v, Count: n})
		}
	}
	slices.SortFunc(list, func(a, b FacetCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Value, b.Value))
	})
	return list
}

// estimateByShare estimates the size of a match of words counted by value
// (countedByValue) from the matches of sample s, hits: the jobs it is
// among times the share of the sample's jobs that match.
func estimateByShare(ctx context.Context, db sqlx.QueryerContext, q JobSearch, s sample, hits int64) (matchSize, error) {
	all, err := keptFacetCounts(ctx, db, q.AccountIDs, noFacet, 1)
	if err != nil {
		return matchSize{}, err
	}
	inSample, err := keptFacetCounts(ctx, db, q.AccountIDs, noFacet, s.share)
	if err != nil {
		return matchSize{}, err
	}
	if inSample[""] == 0 { // only a delete of them between the two reads
		return matchSize{total: hits * s.share, estimated: true}, nil
	}
	return matchSize{total: int64(math.Round(float64(all[""]) * float64(hits) / float64(inSample[""]))), estimated: true}, nil
}
