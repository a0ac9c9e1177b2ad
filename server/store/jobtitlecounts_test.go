package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/truckjobs/jobboard/cmd/jobboard/demo"
	"github.com/truckjobs/jobboard/internal/logtest"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// titled is a job with the given reference and title.
func titled(ref, title string) store.JobFields {
	j := job(ref)
	j.Title = title
	return j
}

// postJobs upserts the account's jobs (renaming those that exist).
func postJobs(ctx context.Context, s *store.Store, acct int64, jobs ...store.JobFields) error {
	_, err := s.UpsertJobs(ctx, acct, jobs, store.UpsertOptions{MaxActive: 100, Today: day1})
	return err
}

// postOldJobs upserts the account's jobs as every release since migration
// 0001 could: their columns of that migration, by plain SQL. A test that
// stops the schema at an old migration writes with it rather than with
// today's statements, which name the columns added since.
func postOldJobs(ctx context.Context, s *store.Store, acct int64, jobs ...store.JobFields) error {
	for _, j := range jobs {
		if _, err := s.DB().ExecContext(ctx, `
			INSERT INTO jobs (account_id, reference_number, title, state, driver_type, freight_type, description, posted_on)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
			ON CONFLICT (account_id, reference_number) DO UPDATE SET title = excluded.title, deleted_at = NULL, updated_at = now()`,
			acct, j.ReferenceNumber, j.Title, j.State, j.DriverType, j.FreightType, j.Description, day1); err != nil {
			return err
		}
	}
	return nil
}

// applying gives each of apps the job applications refs(i) names.
func applying(apps []store.Application, refs func(i int) []string) []store.Application {
	out := make([]store.Application, len(apps))
	for i, a := range apps {
		a.JobApps = nil
		for _, r := range refs(i) {
			a.JobApps = append(a.JobApps, store.JobApplicationInput{Reference: r, CreatedAt: a.Sent})
		}
		out[i] = a
	}
	return out
}

// checkTitleCountsExact compares the list's total for each title the
// account's job applications carry (or its counts name, or none has) with
// count(DISTINCT driver_id), asking in upper case as a caller might, and
// job_title_applicants with the job applications it counts, pair by pair.
func checkTitleCountsExact(t *testing.T, s *store.Store, acct int64) {
	t.Helper()
	ctx := context.Background()
	var titles []string
	if err := s.DB().SelectContext(ctx, &titles, `
		SELECT job_title_lower FROM job_applications WHERE account_id = $1
		 UNION SELECT value FROM application_counts WHERE account_id = $1 AND dimension = 'job_title'
		 UNION SELECT 'no such title'`, acct); err != nil {
		t.Fatal(err)
	}
	for _, title := range titles {
		_, got, err := s.ListDrivers(ctx, acct, store.DriverFilter{JobTitle: strings.ToUpper(title), Sort: "id", Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		var want int64
		if err := s.DB().GetContext(ctx, &want, `SELECT count(DISTINCT driver_id) FROM job_applications
			WHERE account_id = $1 AND job_title_lower = $2`, acct, title); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("account %d, title %q: total %d, count(DISTINCT) says %d", acct, title, got, want)
		}
	}
	var wrong int
	if err := s.DB().GetContext(ctx, &wrong, `
		SELECT count(*) FROM (SELECT * FROM job_title_applicants WHERE account_id = $1) p
		  FULL JOIN (SELECT job_title_lower, driver_id, count(*) AS n FROM job_applications
		              WHERE account_id = $1 GROUP BY 1, 2) j USING (job_title_lower, driver_id)
		 WHERE p.n IS DISTINCT FROM j.n`, acct); err != nil {
		t.Fatal(err)
	}
	if wrong != 0 {
		t.Errorf("account %d: %d pairs of job_title_applicants differ from the job applications", acct, wrong)
	}
	checkTitleProfileCountsExact(t, s, acct)
}

// checkTitleProfileCountsExact compares each pair's recorded profile with
// its application's, the counts of job_title_profile_counts with the
// distinct applicants of each title and profile, and the list's total for
// a title with the state, the driver type or the job applications of each
// of its applicants with count(DISTINCT driver_id).
func checkTitleProfileCountsExact(t *testing.T, s *store.Store, acct int64) {
	t.Helper()
	ctx := context.Background()
	var wrong int
	if err := s.DB().GetContext(ctx, &wrong, `
		SELECT count(*) FROM job_title_applicants p
		  JOIN applications a ON a.account_id = p.account_id AND a.driver_id = p.driver_id
		 WHERE p.account_id = $1
		   AND (p.state, p.driver_type, p.has_job_apps) IS DISTINCT FROM (a.state, a.driver_type, a.has_job_apps)`, acct); err != nil {
		t.Fatal(err)
	}
	if wrong != 0 {
		t.Errorf("account %d: %d pairs record a profile their application does not have", acct, wrong)
	}
	if err := s.DB().GetContext(ctx, &wrong, `
		SELECT count(*) FROM (SELECT job_title_lower, state, driver_type, has_job_apps, sum(n) AS n
		                        FROM job_title_profile_counts WHERE account_id = $1 GROUP BY 1, 2, 3, 4) c
		  FULL JOIN (SELECT j.job_title_lower, a.state, a.driver_type, a.has_job_apps, count(DISTINCT j.driver_id) AS n
		               FROM job_applications j
		               JOIN applications a ON a.account_id = j.account_id AND a.driver_id = j.driver_id
		              WHERE j.account_id = $1 GROUP BY 1, 2, 3, 4) j
		 USING (job_title_lower, state, driver_type, has_job_apps)
		 WHERE coalesce(c.n, 0) <> coalesce(j.n, 0)`, acct); err != nil {
		t.Fatal(err)
	}
	if wrong != 0 {
		t.Errorf("account %d: %d titles and profiles counted otherwise than their applicants", acct, wrong)
	}
	var combos []struct {
		Title      string `db:"job_title_lower"`
		State      string `db:"state"`
		DriverType string `db:"driver_type"`
		HasJobApps bool   `db:"has_job_apps"`
	}
	if err := s.DB().SelectContext(ctx, &combos, `
		SELECT DISTINCT ON (j.job_title_lower) j.job_title_lower, a.state, a.driver_type, a.has_job_apps
		  FROM job_applications j
		  JOIN applications a ON a.account_id = j.account_id AND a.driver_id = j.driver_id
		 WHERE j.account_id = $1 ORDER BY j.job_title_lower, j.driver_id`, acct); err != nil {
		t.Fatal(err)
	}
	for _, c := range combos {
		for _, f := range []store.DriverFilter{
			{JobTitle: strings.ToUpper(c.Title), State: c.State},
			{JobTitle: c.Title, DriverType: c.DriverType},
			{JobTitle: c.Title, HasJobApps: &c.HasJobApps},
			{JobTitle: c.Title, State: c.State, DriverType: c.DriverType, HasJobApps: &c.HasJobApps},
		} {
			f.Sort, f.Limit = "id", 1
			_, got, err := s.ListDrivers(ctx, acct, f)
			if err != nil {
				t.Fatal(err)
			}
			var want int64
			if err := s.DB().GetContext(ctx, &want, `SELECT count(DISTINCT j.driver_id) FROM job_applications j
				JOIN applications a ON a.account_id = j.account_id AND a.driver_id = j.driver_id
				WHERE j.account_id = $1 AND j.job_title_lower = lower($2)
				  AND ($3 = '' OR a.state = $3) AND ($4 = '' OR a.driver_type = $4)
				  AND ($5::boolean IS NULL OR a.has_job_apps = $5)`,
				acct, f.JobTitle, f.State, f.DriverType, f.HasJobApps); err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("account %d, %q with %q %q %v: total %d, count(DISTINCT) says %d",
					acct, f.JobTitle, f.State, f.DriverType, f.HasJobApps, got, want)
			}
		}
	}
}

// TestJobTitleCountsExact: after each kind of write of job applications,
// step by step, every title's total equals count(DISTINCT) of its drivers.
func TestJobTitleCountsExact(t *testing.T) {
	ctx := context.Background()
	s := storetest.Store(t)
	acct := storetest.NewAccount(t, s, "A").AccountID
	other := storetest.NewAccount(t, s, "B").AccountID
	for _, a := range []int64{acct, other} {
		if err := postJobs(ctx, s, a, titled("J1", "OTR Driver"), titled("J2", "otr DRIVER"), titled("J3", "Local")); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().UTC()
	base := demo.Applications(acct, 30, 1, now, nil, "t.")
	exec := func(sql string, args ...any) func() error {
		return func() error { _, err := s.DB().ExecContext(ctx, sql, args...); return err }
	}
	steps := []struct {
		name string
		do   func() error
	}{
		{"two jobs of one title, one job, another title", func() error {
			return saveInBatches(ctx, s, applying(base, func(i int) []string {
				return [][]string{{"J1", "J2"}, {"J1"}, {"J3"}}[i%3]
			}), 7)
		}},
		{"the other account, same titles", func() error {
			return saveInBatches(ctx, s, applying(demo.Applications(other, 10, 2, now, nil, "o."),
				func(int) []string { return []string{"J2", "J3"} }), 10)
		}},
		{"the same drivers again, newer, to more jobs", func() error {
			return saveInBatches(ctx, s, applying(changed(base, time.Hour, 3), func(i int) []string {
				return [][]string{{"J3"}, {"J2", "J3"}, {"J1", "J3"}}[i%3]
			}), 5)
		}},
		{"a job renamed to another title", func() error { return postJobs(ctx, s, acct, titled("J2", "Local")) }},
		{"renamed to a new title", func() error { return postJobs(ctx, s, acct, titled("J1", "Yard Jockey")) }},
		{"renamed back", func() error {
			return postJobs(ctx, s, acct, titled("J1", "OTR Driver"), titled("J2", "OTR DRIVER"))
		}},
		{"titles gone stale", exec(`UPDATE job_applications SET job_title_lower = 'stale' WHERE account_id = $1
			AND driver_id IN (SELECT driver_id FROM applications WHERE account_id = $1 ORDER BY driver_id LIMIT 12)`, acct)},
		{"stale titles rewritten by the intake's upsert", func() error {
			return saveInBatches(ctx, s, applying(changed(base[:12], 2*time.Hour, 3), func(i int) []string {
				return [][]string{{"J3"}, {"J2", "J3"}, {"J1", "J3"}}[i%3]
			}), 12)
		}},
		{"a batch rolled back", func() error {
			bad := applying(demo.Applications(acct, 3, 4, now, nil, "bad."), func(int) []string { return []string{"J1", "NO-SUCH-JOB"} })
			if err := saveApplications(ctx, s, bad); !errors.As(err, new(*store.UnknownJobError)) {
				return fmt.Errorf("a batch naming an unknown job: %v, want it rolled back", err)
			}
			return nil
		}},
		{"job applications deleted", exec(`DELETE FROM job_applications WHERE account_id = $1 AND job_id IN
			(SELECT id FROM jobs WHERE account_id = $1 AND reference_number = 'J1') AND driver_id % 2 = 0`, acct)},
		{"applications deleted (a cascade)", exec(`DELETE FROM applications WHERE account_id = $1 AND driver_id IN
			(SELECT driver_id FROM applications WHERE account_id = $1 ORDER BY driver_id DESC LIMIT 5)`, acct)},
		{"drivers deleted (a cascade through both accounts)", exec(`DELETE FROM drivers WHERE id IN
			(SELECT driver_id FROM applications WHERE account_id = $1 ORDER BY driver_id LIMIT 3)`, acct)},
		{"folded", func() error { return s.CompactApplicationCounts(ctx, acct) }},
	}
	for _, step := range steps {
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		t.Run(step.name, func(t *testing.T) {
			checkTitleCountsExact(t, s, acct)
			checkTitleCountsExact(t, s, other)
		})
	}
}

// TestJobTitleCountsConcurrent: intakes of the same drivers to jobs of the
// same titles, renames of those jobs moving them between titles, deletes
// and folds, all at once, leave every title's count exact.
func TestJobTitleCountsConcurrent(t *testing.T) {
	ctx := context.Background()
	s := storetest.Store(t)
	acct := storetest.NewAccount(t, s, "A").AccountID
	jobs := []store.JobFields{titled("J1", "OTR"), titled("J2", "otr"), titled("J3", "Local"), titled("J4", "local")}
	if err := postJobs(ctx, s, acct, jobs...); err != nil {
		t.Fatal(err)
	}
	refs := []string{"J1", "J2", "J3", "J4"}
	base := demo.Applications(acct, 60, 1, time.Now().UTC(), nil, "c.")
	// Batches and renames take the jobs' locks in id order; a deadlock
	// left (on the rows of applications or counts) rolls one transaction
	// back whole, and the store runs it again: no writer sees it.
	logs := logtest.Capture(t)
	intake := func(k int) func() error {
		return func() error {
			// Each intake applies every driver to a different mix of jobs,
			// some newer than the stored application, some older.
			apps := applying(changed(base, time.Duration(k-2)*time.Hour, k), func(i int) []string {
				return []string{refs[(i+k)%4], refs[(i*k+1)%4]}
			})
			size := 1 + k%3
			for start := 0; start < len(apps); start += size {
				batch := apps[start:min(start+size, len(apps))]
				if err := saveApplications(ctx, s, batch); err != nil {
					return err
				}
			}
			return nil
		}
	}
	rename := func() error {
		for i := range 15 {
			if err := postJobs(ctx, s, acct, titled("J2", []string{"Local", "otr"}[i%2]), titled("J4", []string{"Yard", "local"}[i%2])); err != nil {
				return err
			}
		}
		return nil
	}
	fold := func() error {
		for range 20 {
			if err := s.CompactApplicationCounts(ctx, acct); err != nil {
				return err
			}
		}
		return nil
	}
	writers := []func() error{intake(1), intake(2), intake(3), intake(4), intake(5), rename, fold,
		func() error { return deleteSome(ctx, s, acct) }}
	runTogether(t, writers)
	t.Logf("%d transactions run again after a deadlock", strings.Count(logs.String(), "rolled back by a deadlock"))
	checkTitleCountsExact(t, s, acct)
	if err := s.CompactApplicationCounts(ctx, acct); err != nil {
		t.Fatal(err)
	}
	checkTitleCountsExact(t, s, acct)
	if n := unfoldedValues(t, s, acct); n != 0 {
		t.Errorf("%d values still have several count rows after a fold", n)
	}
}

// TestJobTitleBackfillWithWritesBetween: job applications stored before
// migration 0018 are counted after it, account by account, with writes
// made before each account's fill (intakes, a rename, deletes) and one
// still running when the fill starts, which the fill waits for and counts.
func TestJobTitleBackfillWithWritesBetween(t *testing.T) {
	ctx := context.Background()
	s := storetest.Store(t)
	if _, err := s.DB().ExecContext(ctx, `DROP SCHEMA public CASCADE; CREATE SCHEMA public`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MigrateUpTo(ctx, 17); err != nil {
		t.Fatal(err)
	}
	accounts := []int64{storetest.NewAccount(t, s, "A").AccountID, storetest.NewAccount(t, s, "B").AccountID}
	now := time.Now().UTC()
	for i, acct := range accounts {
		if err := postOldJobs(ctx, s, acct, titled("J1", "OTR"), titled("J2", "otr"), titled("J3", "Local"), titled("Solo", "Solo")); err != nil {
			t.Fatal(err)
		}
		apps := applying(demo.Applications(acct, 40, uint64(i+1), now, nil, "old."), func(i int) []string {
			return [][]string{{"J1", "J2"}, {"J2"}, {"J3"}, {}}[i%4]
		})
		if err := saveInBatches(ctx, s, apps, 10); err != nil {
			t.Fatal(err)
		}
	}
	var filled int
	var committed sync.WaitGroup
	store.SetBeforeJobTitleBackfill(func(_ context.Context, id int64) {
		filled++
		for _, acct := range accounts {
			err := errors.Join(
				saveInBatches(ctx, s, applying(demo.Applications(acct, 8, uint64(10*id+acct), now, nil, fmt.Sprintf("new%d.", id)),
					func(int) []string { return []string{"J1", "J3"} }), 4),
				postOldJobs(ctx, s, acct, titled("J2", []string{"Local", "otr"}[filled%2])),
				deleteFew(ctx, s, acct))
			if err != nil {
				t.Errorf("a write before the fill of account %d: %v", id, err)
			}
		}
		// A driver's first application to Solo, committed only after the
		// fill has started.
		tx, err := s.DB().BeginTxx(ctx, nil)
		if err == nil {
			var res sql.Result
			res, err = tx.ExecContext(ctx, `INSERT INTO job_applications (account_id, driver_id, job_id, is_direct_app, created_at, job_title_lower)
				SELECT a.account_id, a.driver_id, j.id, false, now(), 'solo' FROM applications a
				  JOIN jobs j ON j.account_id = a.account_id AND j.reference_number = 'Solo'
				 WHERE a.account_id = $1 ORDER BY a.driver_id LIMIT 1`, id)
			if n, _ := res.RowsAffected(); err == nil && n != 1 {
				err = fmt.Errorf("%d job applications to Solo", n)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		committed.Add(1)
		go func() {
			defer committed.Done()
			time.Sleep(300 * time.Millisecond)
			if err := tx.Commit(); err != nil {
				t.Error(err)
			}
		}()
	})
	t.Cleanup(func() { store.SetBeforeJobTitleBackfill(nil) })
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	committed.Wait()
	if filled != len(accounts) {
		t.Errorf("%d accounts filled, want %d", filled, len(accounts))
	}
	for _, acct := range accounts {
		checkTitleCountsExact(t, s, acct)
		_, solo, err := s.ListDrivers(ctx, acct, store.DriverFilter{JobTitle: "Solo", Limit: 1})
		if err != nil || solo != 1 {
			t.Errorf("account %d: %d applicants of Solo (%v), want the one committed during the fill", acct, solo, err)
		}
	}
}

// deleteFew removes the account's three last applicants, and the driver of
// its last but three (a cascade through every account).
func deleteFew(ctx context.Context, s *store.Store, acct int64) error {
	return s.InRetriedSQLTx(ctx, "test delete", func(tx *sqlx.Tx) error {
		_, err := tx.ExecContext(ctx, `
		WITH last AS (SELECT driver_id, row_number() OVER (ORDER BY driver_id DESC) AS k
		                FROM applications WHERE account_id = $1 ORDER BY driver_id DESC LIMIT 4),
		apps AS (DELETE FROM applications a USING last WHERE a.account_id = $1 AND a.driver_id = last.driver_id AND k < 4)
		DELETE FROM drivers d USING last WHERE d.id = last.driver_id AND k = 4`, acct)
		return err
	})
}

// TestJobTitleCountQuery: the title alone is counted from application_counts,
// a title with state, driver type or job applications from
// job_title_profile_counts, a title with another condition in applications.
func TestJobTitleCountQuery(t *testing.T) {
	s := storetest.Store(t)
	yes := true
	for _, tt := range []struct {
		f    store.DriverFilter
		want string
	}{
		{store.DriverFilter{JobTitle: "OTR Driver"}, "FROM application_counts WHERE account_id = $1 AND dimension = 'job_title' AND value = lower($2)"},
		{store.DriverFilter{JobTitle: "OTR Driver", Sort: "name", Descending: true}, "dimension = 'job_title'"},
		{store.DriverFilter{JobTitle: "OTR Driver", State: "TX"},
			"FROM job_title_profile_counts WHERE account_id = $1 AND job_title_lower = lower($2) AND state = $3"},
		{store.DriverFilter{JobTitle: "OTR Driver", HasJobApps: &yes},
			"FROM job_title_profile_counts WHERE account_id = $1 AND job_title_lower = lower($2) AND has_job_apps = $3"},
		{store.DriverFilter{JobTitle: "OTR Driver", State: "TX", DriverType: "Student", HasJobApps: &yes},
			"FROM job_title_profile_counts WHERE account_id = $1 AND job_title_lower = lower($2) AND state = $3 AND driver_type = $4 AND has_job_apps = $5"},
		{store.DriverFilter{JobTitle: "OTR Driver", State: "TX", Certification: "H"}, "FROM applications a"},
	} {
		_, count, err := s.DriverListQueries(context.Background(), 7, tt.f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(count.SQL, tt.want) {
			t.Errorf("%+v: count %s, want %q in it", tt.f, count.SQL, tt.want)
		}
		if tt.f.State == "" && tt.f.HasJobApps == nil && (len(count.Args) != 2 || count.Args[1] != tt.f.JobTitle) {
			t.Errorf("%+v: count args %v", tt.f, count.Args)
		}
	}
}

// TestJobTitleProfileChangeRacingAPair: an applicant's first job
// application to a title and a change of the applicant's state, each in a
// transaction still open when the other starts, in either order: the pair
// is counted under the state the applicant ends with. Without the share
// lock the pair takes on its application, the pair's writer reads the
// state of before the change, or the change's move misses the pair.
func TestJobTitleProfileChangeRacingAPair(t *testing.T) {
	ctx := context.Background()
	s := storetest.Store(t)
	acct := storetest.NewAccount(t, s, "A").AccountID
	if err := postJobs(ctx, s, acct, titled("J1", "OTR"), titled("First", "First")); err != nil {
		t.Fatal(err)
	}
	if err := saveApplications(ctx, s, applying(demo.Applications(acct, 4, 1, time.Now().UTC(), nil, "r."),
		func(int) []string { return []string{"J1"} })); err != nil {
		t.Fatal(err)
	}
	var drivers []int64
	if err := s.DB().SelectContext(ctx, &drivers, `SELECT driver_id FROM applications WHERE account_id = $1 ORDER BY driver_id`, acct); err != nil {
		t.Fatal(err)
	}
	const pair = `INSERT INTO job_applications (account_id, driver_id, job_id, is_direct_app, created_at, job_title_lower)
		SELECT $1, $2, id, false, now(), 'first' FROM jobs WHERE account_id = $1 AND reference_number = 'First'`
	const move = `UPDATE applications SET state = $3 WHERE account_id = $1 AND driver_id = $2`
	for i, tt := range []struct {
		name          string
		first, second string
	}{
		{"the state changes first", move, pair},
		{"the pair appears first", pair, move},
	} {
		t.Run(tt.name, func(t *testing.T) {
			driver := drivers[i]
			args := func(stmt string) []any {
				if stmt == move {
					return []any{acct, driver, fmt.Sprintf("Z%c", 'A'+i)}
				}
				return []any{acct, driver}
			}
			tx, err := s.DB().BeginTxx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback() //nolint:errcheck // committed below
			if _, err := tx.ExecContext(ctx, tt.first, args(tt.first)...); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := s.DB().ExecContext(ctx, tt.second, args(tt.second)...)
				done <- err
			}()
			select {
			case err := <-done:
				t.Fatalf("the second write did not wait for the first's transaction (err %v)", err)
			case <-time.After(300 * time.Millisecond):
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			checkTitleCountsExact(t, s, acct)
		})
	}
}
