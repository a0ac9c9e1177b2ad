package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// TestJobsListPlans: the jobs list of an account whose jobs are mostly
// withdrawn reads the account's active jobs, not every account's jobs in
// id order. Other accounts' jobs and the account's withdrawn ones are put
// in by SQL, in the proportions the scale bench met (300 ms a page there).
func TestJobsListPlans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.Store(t)
	acct := storetest.NewAccount(t, s, "many withdrawn").AccountID
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
	for _, q := range store.JobsListQueries {
		text := planOf(t, s, q.Query, append([]any{acct}, q.Args...)...)
		if strings.Contains(text, "jobs_pkey") || !strings.Contains(text, "jobs_listed_idx") {
			t.Errorf("%s does not read the account's active jobs by jobs_listed_idx:\n%s", q.Name, text)
		}
	}
}

// planOf is the plan of query with args, its lines joined.
func planOf(t *testing.T, s *store.Store, query string, args ...any) string {
	t.Helper()
	rows, err := s.DB().QueryContext(context.Background(), "EXPLAIN "+query, args...)
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
	return strings.Join(plan, "\n")
}

// TestUpsertPlansForAnAccountTheStatisticsMiss: a post to an account the
// table's statistics do not know (created after the last ANALYZE, as every
// new account is for a while) finds its jobs with one probe a reference
// and updates them by id, instead of reading every job the account ever
// had: the planner expects one row for such an account, and a lookup by
// account_id then costs as many rows as the account has, withdrawn ones
// included (in bench scenario 1, 11 ms for 1,000 references among 20,000
// of the account's jobs, 21 ms among 34,000, more with each post).
func TestUpsertPlansForAnAccountTheStatisticsMiss(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.Store(t)
	acct := accountTheStatisticsMiss(t, s)
	jobs := make([]store.JobFields, 1000)
	for i := range jobs {
		jobs[i] = job(fmt.Sprintf("A%d", i+1))
	}
	lookup, update, digests, err := s.UpsertPlans(ctx, acct, jobs)
	if err != nil {
		t.Fatal(err)
	}
	for _, plan := range []string{lookup, digests} {
		if !strings.Contains(plan, "Nested Loop") || !strings.Contains(plan, "reference_number = r.ref") {
			t.Errorf("the lookup does not probe the account's reference index once a reference:\n%s", plan)
		}
	}
	// By id alone, the planner weighs the whole table, whose size it
	// knows: probes of jobs_pkey, or for a table this small one pass.
	if strings.Contains(update, "account_id") {
		t.Errorf("the update finds its jobs by the account:\n%s", update)
	}
}

// accountTheStatisticsMiss makes two accounts of 10,000 jobs each, which
// ANALYZE then counts, and after it an account the statistics do not know,
// with 20,000 withdrawn jobs (W1...) and 1,000 active ones (A1...).
func accountTheStatisticsMiss(t *testing.T, s *store.Store) int64 {
	t.Helper()
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO accounts (name, webhook_secret) SELECT 'known ' || g, 'whsec_x' FROM generate_series(1, 2) g`,
		`INSERT INTO jobs (account_id, reference_number, title, state, driver_type, freight_type, description, posted_on)
		 SELECT a.id, 'K' || g, 'Driver', 'TX', 'Company Driver', 'Dry Van', 'd', current_date
		   FROM generate_series(1, 10000) g, accounts a`,
		`ANALYZE jobs`,
	} {
		if _, err := s.DB().ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	acct := storetest.NewAccount(t, s, "unknown to the statistics").AccountID
	for _, q := range []string{
		`INSERT INTO jobs (account_id, reference_number, title, state, driver_type, freight_type, description, posted_on, deleted_at)
		 SELECT $1, 'W' || g, 'Driver', 'TX', 'Company Driver', 'Dry Van', 'd', current_date, now() FROM generate_series(1, 20000) g`,
		`INSERT INTO jobs (account_id, reference_number, title, state, driver_type, freight_type, description, posted_on)
		 SELECT $1, 'A' || g, 'Driver', 'TX', 'Company Driver', 'Dry Van', 'd', current_date FROM generate_series(1, 1000) g`,
	} {
		if _, err := s.DB().ExecContext(ctx, q, acct); err != nil {
			t.Fatal(err)
		}
	}
	return acct
}

// TestIntakeJobLookupForAnAccountTheStatisticsMiss: an application naming
// jobs of an account the statistics do not know finds each job with one
// probe of the account's reference index, withdrawn jobs included, rather
// than reading all 21,000 of the account's jobs (3.2-3.8 ms for two
// references), and locks them.
func TestIntakeJobLookupForAnAccountTheStatisticsMiss(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.Store(t)
	acct := accountTheStatisticsMiss(t, s)
	refs := []string{"A7", "W5", "missing"}
	plan, found, heldBack, err := s.IntakeJobLookup(ctx, acct, refs)
	if err != nil {
		t.Fatal(err)
	}
	if !heldBack {
		t.Error("a writer locked the jobs the lookup had found while its transaction was open")
	}
	if !strings.Contains(plan, "Nested Loop") || !strings.Contains(plan, "reference_number = r.ref") {
		t.Errorf("the lookup does not probe the account's reference index once a reference:\n%s", plan)
	}
	if want := []string{"A7", "W5"}; !slices.Equal(found, want) {
		t.Errorf("found %q, want %q (a withdrawn job counts, a missing one is left out)", found, want)
	}
}
