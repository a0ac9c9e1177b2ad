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
// within a radius is checked from the ZIP index alone, so that only the
// jobs that pass them all are read to have their words checked. A column
// a filter tests that the index lacks would have the index read with the
// table (an Index Scan, not an Index Only Scan).
func TestSearchZIPIndexHoldsEveryFilter(t *testing.T) {
	ctx := context.Background()
	f := newNearFixture(t)
	allVisible(t, f.s, "jobs")
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
			page := ran[len(ran)-1]
			// A few jobs are read best from the table whatever the indexes
			// hold; with the table's pages made dear, the jobs are read
			// from the ZIP index alone when it holds the columns.
			plan := explainWith(t, f.s, readIndexesAlone, page)
			if !strings.Contains(plan, "Index Only Scan using jobs_search_zip_idx") {
				t.Errorf("the jobs of the radius are not read from the ZIP index alone:\n%s", plan)
			}
		})
	}
}

// allVisible vacuums table until the visibility map marks all its pages
// visible, as an index-only scan needs to be weighed below one that reads
// the table. A first VACUUM right after the writes may leave them unmarked,
// while a transaction that began before they committed still runs.
func allVisible(t *testing.T, s *store.Store, table string) {
	t.Helper()
	ctx := context.Background()
	for range 100 {
		if _, err := s.DB().ExecContext(ctx, `VACUUM ANALYZE `+table); err != nil {
			t.Fatal(err)
		}
		var pages, visible int
		if err := s.DB().QueryRowContext(ctx, `SELECT relpages, relallvisible FROM pg_class WHERE oid = $1::regclass`,
			table).Scan(&pages, &visible); err != nil {
			t.Fatal(err)
		}
		if visible == pages {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s: pages not all visible after 100 vacuums", table)
}

// readIndexesAlone has PostgreSQL weigh each page read out of order, as
// a table's pages are read by an index, far above the rest, and rules out
// reading a table whole: an index that holds every column a statement
// needs is then read alone (after VACUUM).
const readIndexesAlone = `SET LOCAL enable_seqscan = off; SET LOCAL random_page_cost = 1000`

// explainWith is the plan of statement q under setting, in a transaction
// of its own.
func explainWith(t *testing.T, s *store.Store, setting string, q store.Query) string {
	t.Helper()
	ctx := context.Background()
	tx, err := s.DB().BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck // nothing is written
	if _, err := tx.ExecContext(ctx, setting); err != nil {
		t.Fatal(err)
	}
	var lines []string
	if err := tx.SelectContext(ctx, &lines, "EXPLAIN "+q.SQL, q.Args...); err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}
