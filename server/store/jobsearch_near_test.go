package store_test

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/domain"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// nearFixture is a store with jobs in and out of 100 miles of 77002, some
// with the word tanker, of two driver types and many pays.
type nearFixture struct {
	s     *store.Store
	words string
	near  *store.Radius
	// jobs are the jobs stored, by reference.
	jobs map[string]store.JobFields
}

// nearZIPs are the ZIP codes of the fixture's jobs: Houston (the centre),
// Galveston (about 45 miles off) and Dallas (about 225).
var nearZIPs = []string{"77002", "77550", "75201"}

func newNearFixture(t *testing.T) nearFixture {
	ctx := context.Background()
	s := storetest.Store(t)
	acct := storetest.NewAccount(t, s, "near").AccountID
	f := nearFixture{s: s, jobs: map[string]store.JobFields{},
		near: &store.Radius{Latitude: 29.756845, Longitude: -95.365652, Miles: 100}}
	var jobs []store.JobFields
	weekly := domain.PayFrequency("Weekly")
	for i := range 48 {
		j := job(fmt.Sprintf("N%02d", i))
		j.PostalCode = new(nearZIPs[i%3])
		if i%4 != 0 {
			j.Description = "<p>Tanker work, home weekly.</p>"
		}
		if i%2 == 1 {
			j.DriverType = "Owner Operator"
		}
		j.PayMin, j.PayFrequency = new(domain.Cents(100_000+i*1_000)), &weekly
		jobs = append(jobs, j)
		f.jobs[j.ReferenceNumber] = j
	}
	if _, err := s.UpsertJobs(ctx, acct, jobs, store.UpsertOptions{MaxActive: 100, Today: time.Now()}); err != nil {
		t.Fatal(err)
	}
	var err error
	if f.words, err = s.NormalizeJobQuery(ctx, "tanker"); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestSearchWordsNearWithFilters: a search for words within a radius with
// filters, whose jobs are found in the ZIP index before their words are
// read, answers every job that meets all three and no other, in each
// order, page after page, with an exact total and facet counts with the
// facet's own filter left out.
func TestSearchWordsNearWithFilters(t *testing.T) {
	ctx := context.Background()
	f := newNearFixture(t)
	minPay := int64(120_000)
	meets := func(j store.JobFields, driverType bool) bool {
		return *j.PostalCode != "75201" && strings.Contains(j.Description, "Tanker") &&
			int64(*j.PayMin) >= minPay && (!driverType || j.DriverType == "Company Driver")
	}
	var want []string
	byDriverType := map[string]int64{}
	for ref, j := range f.jobs {
		if meets(j, true) {
			want = append(want, ref)
		}
		if meets(j, false) {
			byDriverType[string(j.DriverType)]++
		}
	}
	slices.Sort(want)
	for name, order := range map[string]store.JobSearchOrder{"newest first": store.ByPosted,
		"relevance": store.ByRelevance, "nearest first": store.ByDistance, "highest pay": store.ByPay} {
		t.Run(name, func(t *testing.T) {
			q := store.JobSearch{Words: f.words, Near: f.near, DriverTypes: []string{"Company Driver"}, MinPay: &minPay,
				Order: order, Limit: 4, Facets: []store.JobFacet{store.FacetDriverType}}
			var got []store.JobFound
			for page := 1; ; page++ {
				r, err := f.s.SearchJobs(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if r.Total != int64(len(want)) || r.Estimated {
					t.Errorf("page %d: total %d (estimated %v), want %d", page, r.Total, r.Estimated, len(want))
				}
				if counts := facetMap(r.Facets[store.FacetDriverType]); !maps.Equal(counts, byDriverType) {
					t.Errorf("page %d: driver types %v, want %v", page, counts, byDriverType)
				}
				got = append(got, r.Jobs...)
				if len(r.Jobs) < q.Limit || len(got) > len(want) {
					break
				}
				q.After = &r.Jobs[len(r.Jobs)-1].Cursor
			}
			refs := make([]string, len(got))
			for i, j := range got {
				refs[i] = j.ReferenceNumber
			}
			if slices.Sort(refs); !slices.Equal(refs, want) {
				t.Errorf("got %v, want %v", refs, want)
			}
			if !slices.IsSortedFunc(got, inOrder(order)) {
				t.Errorf("not in order: %v", got)
			}
		})
	}
}

// inOrder compares two results by the sort key of order alone.
func inOrder(order store.JobSearchOrder) func(a, b store.JobFound) int {
	return func(a, b store.JobFound) int {
		switch order {
		case store.ByDistance:
			return cmp.Compare(*a.Miles, *b.Miles)
		case store.ByPay:
			return cmp.Compare(*b.PayMin, *a.PayMin)
		case store.ByRelevance:
			return cmp.Compare(b.Cursor.Key, a.Cursor.Key)
		}
		return cmp.Or(cmp.Compare(b.Cursor.AddedAt, a.Cursor.AddedAt), cmp.Compare(b.ID, a.ID))
	}
}

func facetMap(counts []store.FacetCount) map[string]int64 {
	m := map[string]int64{}
	for _, c := range counts {
		m[c.Value] = c.Count
	}
	return m
}

// TestSearchZIPIndexHoldsEveryFilter: each filter of a search for words
// within a radius is checked in a subquery of the jobs of the radius, ahead
// of the words, and every column the filter tests is in the ZIP index, so
// that the subquery reads that index alone. PostgreSQL names the columns a
// condition reads: those a view of it depends on. (Which plan a few jobs
// get says nothing about a million: with their table's pages made dear, a
// plan led by the jobs' table won one run in twenty.)
func TestSearchZIPIndexHoldsEveryFilter(t *testing.T) {
	ctx := context.Background()
	f := newNearFixture(t)
	var indexed []string
	if err := f.s.DB().SelectContext(ctx, &indexed, `SELECT a.attname FROM pg_index i
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
		WHERE i.indexrelid = 'jobs_search_zip_idx'::regclass`); err != nil {
		t.Fatal(err)
	}
	minPay, since := int64(1), time.Now().Add(-time.Hour)
	for _, tt := range []struct {
		name   string
		filter func(*store.JobSearch)
	}{
		{"driver types", func(q *store.JobSearch) { q.DriverTypes = []string{"Company Driver"} }},
		{"freight types", func(q *store.JobSearch) { q.FreightTypes = []string{"Dry Van"} }},
		{"route types", func(q *store.JobSearch) { q.RouteTypes = []string{"Local"} }},
		{"employment types", func(q *store.JobSearch) { q.EmploymentTypes = []string{"Full-Time"} }},
		{"pay frequencies", func(q *store.JobSearch) { q.PayFrequencies = []string{"Weekly"} }},
		{"states", func(q *store.JobSearch) { q.States = []string{"TX"} }},
		{"license classes", func(q *store.JobSearch) { q.LicenseClasses = []string{"A"} }},
		{"no TWIC card", func(q *store.JobSearch) { q.ExcludeTWICOnly = true }},
		{"minimum pay", func(q *store.JobSearch) { q.MinPay = &minPay }},
		{"posted since", func(q *store.JobSearch) { q.PostedSince = &since }},
		{"accounts", func(q *store.JobSearch) { q.AccountIDs = []int64{1} }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q := store.JobSearch{Words: f.words, Near: f.near, Order: store.ByPosted, Limit: 5}
			tt.filter(&q)
			_, ran, err := f.s.SearchJobsTraced(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			page := ran[len(ran)-1].SQL
			candidates, words, ok := strings.Cut(page, "OFFSET 0) near")
			if !ok || strings.Contains(candidates, "search_words") || !strings.Contains(words, "search_words @@") {
				t.Fatalf("the filters are not checked in a subquery ahead of the words:\n%s", page)
			}
			for _, column := range filterColumns(t, f.s, store.SearchFilterConditions(q)) {
				if !slices.Contains(indexed, column) {
					t.Errorf("column %s is tested by the filter and not in the ZIP index %v", column, indexed)
				}
			}
		})
	}
}

// filterColumns are the columns of jobs j that conds read, each a filter's
// condition with NULL for its arguments.
func filterColumns(t *testing.T, s *store.Store, conds []string) []string {
	t.Helper()
	if len(conds) == 0 {
		t.Fatal("no filter condition")
	}
	ctx := context.Background()
	tx, err := s.DB().BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck // the view is the test's only
	if _, err := tx.ExecContext(ctx, `CREATE TEMP VIEW filter_columns AS SELECT 1 FROM jobs j WHERE `+
		strings.Join(conds, " AND ")); err != nil {
		t.Fatal(err)
	}
	var columns []string
	if err := tx.SelectContext(ctx, &columns, `SELECT DISTINCT a.attname FROM pg_depend d
		JOIN pg_rewrite r ON r.oid = d.objid AND d.classid = 'pg_rewrite'::regclass
		JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
		WHERE r.ev_class = 'filter_columns'::regclass AND d.refobjid = 'jobs'::regclass`); err != nil {
		t.Fatal(err)
	}
	if len(columns) == 0 {
		t.Fatalf("no column read by %v", conds)
	}
	return columns
}
