package store_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/domain"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

func job(ref string) store.JobFields {
	return store.JobFields{
		ReferenceNumber: ref, Title: "Driver " + ref, State: "TX", DriverType: "Company Driver",
		FreightType: "Dry Van", Description: "<p>Home weekly</p>", PayMin: new(domain.Cents(1850)),
		EmploymentType: []domain.EmploymentType{"Full-Time", "Permanent"}, RouteType: []domain.RouteType{},
	}
}

var day1 = time.Date(2026, 11, 2, 15, 0, 0, 0, time.UTC)

// TestUpsertJobsWhileChecked: the jobs the checks return are upserted
// against what is stored whatever references were read ahead: a stored
// job whose reference was not among them is read before the write, not
// taken for a new one; references of jobs the checks refused are only
// read; the checks' result is asked for once.
func TestUpsertJobsWhileChecked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.Store(t)
	acct := storetest.NewAccount(t, s, "a").AccountID
	opts := store.UpsertOptions{MaxActive: 10000, Today: day1}
	if _, err := s.UpsertJobs(ctx, acct, []store.JobFields{job("A1"), job("A2")}, opts); err != nil {
		t.Fatal(err)
	}
	changed := job("A2")
	changed.City = new("Dallas")
	tests := []struct {
		name string
		refs []string
		jobs []store.JobFields
		want []store.Outcome
	}{
		{"every reference read", []string{"A1", "A2", "A3"}, []store.JobFields{job("A1"), changed, job("A3")},
			[]store.Outcome{store.Unchanged, store.Updated, store.Added}},
		{"stored jobs not read ahead", []string{"A9"}, []store.JobFields{job("A1"), job("A4")},
			[]store.Outcome{store.Unchanged, store.Added}},
		{"refused jobs' references", []string{"A1", "B1", "B2"}, []store.JobFields{job("A1")},
			[]store.Outcome{store.Unchanged}},
		{"nothing to write", []string{"A1"}, nil, []store.Outcome{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			got, err := s.UpsertJobsWhileChecked(ctx, acct, tt.refs, nil, func([]bool) {},
				func() store.Checked { calls++; return store.Checked{Jobs: tt.jobs} }, opts)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) || calls != 1 {
				t.Errorf("got %v with %d calls of ready, want %v with 1", got, calls, tt.want)
			}
		})
	}
	jobs, err := s.ListJobs(ctx, acct)
	if err != nil {
		t.Fatal(err)
	}
	var refs []string
	for _, j := range jobs {
		refs = append(refs, j.ReferenceNumber)
	}
	if fmt.Sprint(refs) != "[A1 A2 A3 A4]" {
		t.Errorf("stored %v, want A1 to A4 once each", refs)
	}
}

// TestUpsertJobsByInputDigest: a reference whose active job was written
// from the same input is told unchanged before the stored jobs are read,
// and left out of the checks; a job is written with its input's digest,
// and one found unchanged by content gains it; a withdrawn job, and one
// whose content a write without a digest changed (an import, or a
// replica of an earlier release), are never told unchanged.
func TestUpsertJobsByInputDigest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.Store(t)
	acct := storetest.NewAccount(t, s, "a").AccountID
	opts := store.UpsertOptions{MaxActive: 10000, Today: day1}
	d := func(ref string) []byte { sum := sha256.Sum256([]byte("input of " + ref)); return sum[:] }
	// post upserts the jobs of refs, each with its digest, the checks
	// accepting those not told unchanged; it returns what known told and
	// the outcomes of the jobs checked.
	// undigested are references sent without a digest, as a job with an
	// unknown member is.
	undigested := map[string]bool{}
	post := func(refs ...string) (told []bool, outcomes []store.Outcome) {
		t.Helper()
		digests := make([][]byte, len(refs))
		for i, ref := range refs {
			if !undigested[ref] {
				digests[i] = d(ref)
			}
		}
		outcomes, err := s.UpsertJobsWhileChecked(ctx, acct, refs, func() [][]byte { return digests },
			func(unchanged []bool) { told = unchanged },
			func() store.Checked {
				var c store.Checked
				for i, ref := range refs {
					if !told[i] {
						c.Jobs, c.Digests = append(c.Jobs, job(ref)), append(c.Digests, digests[i])
					}
				}
				return c
			}, opts)
		if err != nil {
			t.Fatal(err)
		}
		return told, outcomes
	}
	check := func(step string, told []bool, outcomes []store.Outcome, wantTold string, wantOutcomes []store.Outcome) {
		t.Helper()
		if fmt.Sprint(told) != wantTold || fmt.Sprint(outcomes) != fmt.Sprint(wantOutcomes) {
			t.Errorf("%s: told %v, outcomes %v; want %s, %v", step, told, outcomes, wantTold, wantOutcomes)
		}
	}
	// A1 and A2 stored without digests, as before the digests were kept.
	if _, err := s.UpsertJobs(ctx, acct, []store.JobFields{job("A1"), job("A2")}, opts); err != nil {
		t.Fatal(err)
	}
	var withDigests int
	if err := s.DB().GetContext(ctx, &withDigests, `SELECT count(*) FROM jobs
		 WHERE account_id = $1 AND input_digest IS NOT NULL`, acct); err != nil || withDigests != 0 {
		t.Errorf("jobs written without digests: %d have one (%v), want none", withDigests, err)
	}
	told, outcomes := post("A1", "A3")
	check("stored without digests", told, outcomes, "[false false]", []store.Outcome{store.Unchanged, store.Added})
	told, outcomes = post("A1", "A2", "A3")
	check("digests kept", told, outcomes, "[true false true]", []store.Outcome{store.Unchanged})
	// A post that wrote (here a digest) has its account's counts folded;
	// one found unchanged throughout wrote nothing to fold.
	if due := s.FoldsDue(); !slices.Contains(due, acct) {
		t.Errorf("after a post that wrote, the folds due are %v, without account %d", due, acct)
	}
	told, outcomes = post("A1", "A2", "A3")
	check("all told", told, outcomes, "[true true true]", []store.Outcome{})
	if due := s.FoldsDue(); len(due) > 0 {
		t.Errorf("after a post found unchanged throughout, the folds due are %v, want none", due)
	}

	jobs, err := s.ListJobs(ctx, acct)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int64{}
	for _, j := range jobs {
		ids[j.ReferenceNumber] = j.ID
	}
	if _, err := s.DeleteJobsByID(ctx, acct, []int64{ids["A1"]}); err != nil {
		t.Fatal(err)
	}
	changed := job("A2")
	changed.Title = "Changed by an import"
	if _, err := s.UpsertJobs(ctx, acct, []store.JobFields{changed}, opts); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().ExecContext(ctx, `UPDATE jobs SET title = 'Changed by an earlier release', updated_at = now()
		 WHERE id = $1`, ids["A3"]); err != nil {
		t.Fatal(err)
	}
	told, outcomes = post("A1", "A2", "A3")
	check("withdrawn, changed without digests", told, outcomes, "[false false false]",
		[]store.Outcome{store.Added, store.Updated, store.Updated})
	told, outcomes = post("A1", "A2", "A3")
	check("written with digests", told, outcomes, "[true true true]", []store.Outcome{})

	// setDigests sets the digests of the account's jobs (of one, when
	// ref is not empty) as a writer of digests would, which the trigger
	// that clears them on other writes lets through.
	setDigests := func(digest, ref string) {
		t.Helper()
		tx, err := s.DB().BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback() //nolint:errcheck // committed below
		if _, err := tx.ExecContext(ctx, `SET LOCAL jobboard.input_digests TO written`); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE jobs SET input_digest = `+digest+` WHERE account_id = $1
			AND (reference_number = $2 OR $2 = '')`, acct, ref); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	// Digests of another build, as a new release finds them: unchanged by
	// content, the jobs take this build's digests.
	setDigests(`'another build'`, "")
	told, outcomes = post("A1", "A2", "A3")
	check("another build's digests", told, outcomes, "[false false false]",
		[]store.Outcome{store.Unchanged, store.Unchanged, store.Unchanged})
	told, outcomes = post("A1", "A2", "A3")
	check("this build's digests", told, outcomes, "[true true true]", []store.Outcome{})

	// A reference sent without a digest is never unchanged, not even
	// against a stored digest of zeros, which the lookup's packed digests
	// stand for none with.
	setDigests(`decode(repeat('00', 32), 'hex')`, "A3")
	undigested["A3"] = true
	told, outcomes = post("A1", "A2", "A3")
	check("sent without a digest", told, outcomes, "[true true false]", []store.Outcome{store.Unchanged})

	// Jobs added together, one with a digest and one without, are stored
	// with their own: each digest at its place, NULL for none.
	undigested["B2"] = true
	told, outcomes = post("B1", "B2")
	check("added together", told, outcomes, "[false false]", []store.Outcome{store.Added, store.Added})
	var stored []struct {
		Ref    string `db:"reference_number"`
		Digest []byte `db:"input_digest"`
	}
	if err := s.DB().SelectContext(ctx, &stored, `SELECT reference_number, input_digest FROM jobs
		 WHERE account_id = $1 AND reference_number IN ('B1', 'B2') ORDER BY 1`, acct); err != nil {
		t.Fatal(err)
	}
	if len(stored) != 2 || !bytes.Equal(stored[0].Digest, d("B1")) || stored[1].Digest != nil {
		t.Errorf("stored digests %x, want B1's %x and none for B2", stored, d("B1"))
	}

	// A digest of another length is refused, and nothing is written.
	_, err = s.UpsertJobsWhileChecked(ctx, acct, []string{"A9"}, func() [][]byte { return [][]byte{[]byte("short")} },
		func([]bool) {},
		func() store.Checked { return store.Checked{Jobs: []store.JobFields{job("A9")}} }, opts)
	if want := "input digest 0 is 5 bytes, not 32"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a digest of 5 bytes: got error %v, want one saying %q", err, want)
	}
}

func TestUpsertJobsOutcomes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.Store(t)
	acct := storetest.NewAccount(t, s, "a").AccountID
	opts := store.UpsertOptions{MaxActive: 10000, Today: day1}

	got, err := s.UpsertJobs(ctx, acct, []store.JobFields{job("A1"), job("A2")}, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Outcome{store.Added, store.Added}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("first post: got %v, want %v", got, want)
	}

	changed := job("A2")
	changed.City = new("Dallas")
	got, err = s.UpsertJobs(ctx, acct, []store.JobFields{job("A1"), changed, job("A3")}, opts)
	if err != nil {
		t.Fatal(err)
	}
	want = []store.Outcome{store.Unchanged, store.Updated, store.Added}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("second post: got %v, want %v", got, want)
	}

	jobs, err := s.ListJobs(ctx, acct)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 3 || jobs[1].City == nil || *jobs[1].City != "Dallas" || *jobs[0].PayMin != 1850 ||
		jobs[0].PostedOn != "2026-11-02" || len(jobs[0].EmploymentType) != 2 {
		t.Fatalf("stored jobs: %+v", jobs)
	}

	// A deleted job comes back with the same id and a new date.
	firstID := jobs[0].ID
	if del, err := s.DeleteJobsByID(ctx, acct, []int64{firstID}); err != nil || len(del) != 1 {
		t.Fatalf("delete: %v %v", del, err)
	}
	if _, err := s.Job(ctx, acct, firstID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted job still readable: %v", err)
	}
	opts.Today = day1.AddDate(0, 0, 3)
	got, err = s.UpsertJobs(ctx, acct, []store.JobFields{job("A1")}, opts)
	if err != nil || got[0] != store.Added {
		t.Fatalf("revive: %v %v", got, err)
	}
	back, err := s.Job(ctx, acct, firstID)
	if err != nil || back.PostedOn != "2026-11-05" {
		t.Fatalf("revived job: %+v %v", back, err)
	}
}

// Job scans its columns by position, ListJobs by name: both must give the
// same job, every field set and every optional one left out.
func TestJobReadsEveryField(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.Store(t)
	acct := storetest.NewAccount(t, s, "a").AccountID
	full := job("F1")
	full.City, full.PostalCode, full.Preference = new("Dallas"), new("75201"), new(domain.Preference("Team"))
	full.PayMax, full.PayFrequency, full.Requirements = new(domain.Cents(2025)), new(domain.PayFrequency("Per Mile")), new("Two years")
	full.LicenseClass, full.TwicOnly, full.RouteType = new(domain.LicenseClass("A")), true, []domain.RouteType{"Regional"}
	bare := job("B1")
	bare.PayMin = nil
	if _, err := s.UpsertJobs(ctx, acct, []store.JobFields{full, bare}, store.UpsertOptions{MaxActive: 10, Today: day1}); err != nil {
		t.Fatal(err)
	}
	listed, err := s.ListJobs(ctx, acct)
	if err != nil || len(listed) != 2 {
		t.Fatalf("list: %v %v", listed, err)
	}
	for _, want := range listed {
		got, err := s.Job(ctx, acct, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Job(%d):\n got %+v\nwant %+v", want.ID, got, want)
		}
	}
	if !reflect.DeepEqual(listed[0].JobFields, full) {
		t.Errorf("stored %+v, posted %+v", listed[0].JobFields, full)
	}
}
