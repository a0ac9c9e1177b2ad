package main

import (
	"slices"
	"testing"
)

// TestTablesRead: each table a plan scans is named once, in the order the
// plan names it, whatever the scan.
func TestTablesRead(t *testing.T) {
	for _, c := range []struct {
		name, plan string
		want       []string
	}{
		{"bitmap", "MixedAggregate\n  ->  Bitmap Heap Scan on job_search_sample j\n        ->  Bitmap Index Scan on job_search_sample16_match_idx",
			[]string{"job_search_sample"}},
		{"by index, twice", "Nested Loop\n  ->  Index Scan using jobs_search_posted_idx on jobs j\n  ->  Index Scan using jobs_pkey on jobs",
			[]string{"jobs"}},
		{"backward, only, seq", "Limit\n  ->  Index Scan Backward using jobs_pkey on jobs j\n  ->  Index Only Scan using zip_centroids_pkey on zip_centroids\n  ->  Seq Scan on accounts a",
			[]string{"jobs", "zip_centroids", "accounts"}},
		{"CTEs, subqueries and functions are no tables", "Sort\n  CTE matched\n    ->  Index Scan using jobs_search_zip_idx on jobs j_1\n  ->  CTE Scan on matched m\n  ->  Subquery Scan on p\n  ->  Function Scan on unnest v\n  ->  Seq Scan on accounts a",
			[]string{"jobs", "accounts"}},
		{"none", "Result  (cost=0.00..0.01 rows=1 width=4)", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := (explained{plan: c.plan}).tablesRead(); !slices.Equal(got, c.want) {
				t.Errorf("tablesRead = %q, want %q", got, c.want)
			}
		})
	}
}

func TestFileSlug(t *testing.T) {
	for name, want := range map[string]string{
		"common word (drivers), relevance, 3 facets": "common-word-drivers-relevance-3-facets",
		`phrase ("stop pay"), relevance`:             "phrase-stop-pay-relevance",
		"words + 100 mi + 2 filters":                 "words-100-mi-2-filters",
	} {
		if got := fileSlug(name); got != want {
			t.Errorf("fileSlug(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestTotalSamples: the CPU time is read out of pprof's totals as
// profilePhases quotes them, in pprof's units.
func TestTotalSamples(t *testing.T) {
	for line, want := range map[string]string{
		"Of the server's CPU samples (Duration: 5s, Total samples = 580ms): the store's search 34.48%.": "580ms",
		"Duration: 13s, Total samples = 1.83s (14.08%)":                                                 "1.83s",
	} {
		m := totalSamples.FindStringSubmatch(line)
		if m == nil || m[1] != want {
			t.Errorf("totalSamples in %q = %q, want %q", line, m, want)
		}
	}
}
