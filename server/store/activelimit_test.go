package store_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// TestActiveLimitFollowsEveryWrite: the active-job maximum is held against
// the account's active jobs as each kind of write leaves them (the upsert
// reads their number from the kept counts, not from the jobs): posts
// within and over the maximum, withdrawals by reference and by id, a
// withdrawn job posted again, an update at the maximum, and another
// account's jobs, which never count.
func TestActiveLimitFollowsEveryWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.Store(t)
	acct := storetest.NewAccount(t, s, "limited").AccountID
	other := storetest.NewAccount(t, s, "other").AccountID
	const limit = 5
	opts := store.UpsertOptions{MaxActive: limit, Today: day1}
	if _, err := s.UpsertJobs(ctx, other, jobsOf("O1", "O2", "O3", "O4", "O5", "O6"), store.UpsertOptions{MaxActive: 10, Today: day1}); err != nil {
		t.Fatal(err)
	}
	idOf := func(ref string) int64 {
		var id int64
		if err := s.DB().GetContext(ctx, &id, `SELECT id FROM jobs WHERE account_id = $1 AND reference_number = $2`, acct, ref); err != nil {
			t.Fatal(err)
		}
		return id
	}
	changedA3 := job("A3")
	changedA3.Title = "Changed A3"
	const (
		added   = store.Added
		updated = store.Updated
		same    = store.Unchanged
		over    = store.OverActiveLimit
	)
	steps := []struct {
		name string
		// withdraw runs before the post, when set.
		withdraw func() error
		post     []store.JobFields
		want     []store.Outcome
	}{
		{name: "three of five", post: jobsOf("A1", "A2", "A3"), want: []store.Outcome{added, added, added}},
		{name: "two places for four", post: jobsOf("A4", "A5", "A6", "A7"), want: []store.Outcome{added, added, over, over}},
		{name: "full: an unchanged job and a new one", post: jobsOf("A1", "A8"), want: []store.Outcome{same, over}},
		{name: "one withdrawn by reference makes one place", post: jobsOf("A8", "A9"), want: []store.Outcome{added, over},
			withdraw: func() error { _, err := s.DeleteJobsByReference(ctx, acct, []string{"A1"}); return err }},
		{name: "one withdrawn by id makes one place, which a withdrawn job takes back", post: jobsOf("A1", "A9"),
			want:     []store.Outcome{added, over},
			withdraw: func() error { _, err := s.DeleteJobsByID(ctx, acct, []int64{idOf("A2")}); return err }},
		{name: "an update at the maximum", post: []store.JobFields{changedA3, job("A9")}, want: []store.Outcome{updated, over}},
		{name: "two withdrawn, two places", post: jobsOf("A2", "A9", "A10"), want: []store.Outcome{added, added, over},
			withdraw: func() error { _, err := s.DeleteJobsByReference(ctx, acct, []string{"A4", "A5"}); return err }},
	}
	for _, st := range steps {
		if st.withdraw != nil {
			if err := st.withdraw(); err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
		}
		got, err := s.UpsertJobs(ctx, acct, st.post, opts)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if !reflect.DeepEqual(got, st.want) {
			t.Errorf("%s: outcomes %v, want %v", st.name, got, st.want)
		}
		var active int
		if err := s.DB().GetContext(ctx, &active, `SELECT count(*) FROM jobs WHERE account_id = $1 AND deleted_at IS NULL`, acct); err != nil {
			t.Fatal(err)
		}
		if active > limit {
			t.Errorf("%s: %d active jobs, over the maximum of %d", st.name, active, limit)
		}
	}
}

// jobsOf are job(ref) for each reference.
func jobsOf(refs ...string) []store.JobFields {
	jobs := make([]store.JobFields, len(refs))
	for i, ref := range refs {
		jobs[i] = job(ref)
	}
	return jobs
}
