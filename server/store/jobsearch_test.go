package store_test

import (
	"context"
	"testing"
	"time"

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
