package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/truckjobs/jobboard/internal/pgtest"
	"github.com/truckjobs/jobboard/internal/testfix"
	"github.com/truckjobs/jobboard/server/store"
)

// TestListJobsPagePlan: the jobs list of an account whose jobs are mostly
// withdrawn reads the account's active jobs, not every account's jobs in
// id order. Other accounts' jobs and the account's withdrawn ones are put
// in by SQL, in the proportions the scale bench met (300 ms a page there).
func TestListJobsPagePlan(t *testing.T) {
	ctx := context.Background()
	s := pgtest.Store(t)
	acct := testfix.NewAccount(t, s, "many withdrawn").AccountID
	for _, q := range []string{
		`INSERT INTO accounts (name, webhook_secret) SELECT 'other ' || g, 'whsec_x' FROM generate_series(1, 400) g`,
		// 40 active jobs each, posted in rounds so that ids interleave.
		`INSERT INTO jobs (account_id, reference_number, title, state, driver_type, freight_type, description, posted_on)
		 SELECT a.id, 'R' || r, 'Driver', 'TX', 'Company Driver', 'Dry Van', 'd', current_date
		 FROM generate_series(1, 40) r, accounts a WHERE a.id <> $1 ORDER BY r, a.id`,
		`INSERT INTO jobs (account_id, reference_number, title, state, driver_type, freight_type, description, posted_on, deleted_at)
		 SELECT $1, 'W' || g, 'Driver', 'TX', 'Company Driver', 'Dry Van', 'd', current_date, now() FROM generate_series(1, 6000) g`,
		`INSERT INTO jobs (account_id, reference_number, title, state, driver_type, freight_type, description, posted_on)
		 SELECT $1, 'A' || g, 'Driver', 'TX', 'Company Driver', 'Dry Van', 'd', current_date FROM generate_series(1, 40) g`,
		`ANALYZE jobs`,
	} {
		var args []any
		if strings.Contains(q, "$1") {
			args = append(args, acct)
		}
		if _, err := s.DB().ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := s.DB().QueryContext(ctx, "EXPLAIN "+store.ListJobsPageQuery, acct, 0, 1000, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(plan, "\n")
	if strings.Contains(text, "jobs_pkey") || !strings.Contains(text, "jobs_listed_idx") {
		t.Errorf("the page does not read the account's active jobs by jobs_listed_idx:\n%s", text)
	}
}
