package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/truckjobs/jobboard/cmd/jobboard/demo"
	"github.com/truckjobs/jobboard/domain"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// TestDriverCountsExactAfterMixedWrites: the list's totals, answered from
// application_counts for the filters it counts, equal count(*) over
// applications after concurrent intakes (new applications, newer ones that
// change every counted column, older ones that change nothing, job
// applications that set has_job_apps), a seed, deletes of applications and
// of drivers (a cascade), a batch rolled back, and compactions running
// all along.
func TestDriverCountsExactAfterMixedWrites(t *testing.T) {
	ctx := context.Background()
	s := storetest.Store(t)
	a, b := storetest.NewAccount(t, s, "A").AccountID, storetest.NewAccount(t, s, "B").AccountID
	refs := []string{"J1", "J2", "J3"}
	for _, acct := range []int64{a, b} {
		if _, err := s.UpsertJobs(ctx, acct, []store.JobFields{job("J1"), job("J2"), job("J3")},
			store.UpsertOptions{MaxActive: 10, Today: day1}); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().UTC()
	base := demo.Applications(a, 300, 1, now, refs, "c.")
	writers := []func() error{
		func() error { return saveInBatches(ctx, s, base[:150], 10) },
		func() error { return saveInBatches(ctx, s, changed(base[100:250], time.Hour, 2), 7) },
		func() error { return saveInBatches(ctx, s, changed(base[50:120], -time.Hour, 3), 5) },
		func() error { return saveInBatches(ctx, s, demo.Applications(b, 80, 4, now, refs, "b."), 9) },
		func() error { return s.SeedApplications(ctx, a, demo.Applications(a, 200, 5, now, refs, "seed.")) },
		func() error { return deleteSome(ctx, s, a) },
		func() error { return changeStatuses(ctx, s, a) },
		func() error { return changeStatuses(ctx, s, b) },
		func() error {
			bad := demo.Applications(a, 5, 6, now, refs, "bad.")
			bad[4].JobApps = []store.JobApplicationInput{{Reference: "NO-SUCH-JOB", CreatedAt: now}}
			if err := saveApplications(ctx, s, bad); !errors.As(err, new(*store.UnknownJobError)) {
				return fmt.Errorf("a batch naming an unknown job: %v, want it rolled back", err)
			}
			return nil
		},
		func() error {
			for range 20 {
				if err := s.CompactApplicationCounts(ctx, a); err != nil {
					return err
				}
			}
			return nil
		},
	}
	runTogether(t, writers)
	for _, acct := range []int64{a, b} {
		checkCountsExact(t, s, acct)
		checkTitleCountsExact(t, s, acct)
		if err := s.CompactApplicationCounts(ctx, acct); err != nil {
			t.Fatal(err)
		}
		checkCountsExact(t, s, acct)
		// With no writer running, a fold leaves one row per value.
		if unfolded := unfoldedValues(t, s, acct); unfolded != 0 {
			t.Errorf("account %d: %d values still have several count rows after a fold", acct, unfolded)
		}
	}
}

// saveApplications stores one batch as the intake does, in a retried
// transaction, without the intake's events.
func saveApplications(ctx context.Context, s *store.Store, apps []store.Application) error {
	return s.InRetriedTx(ctx, "save applications", func(tx *store.Tx) error {
		_, err := tx.SaveApplications(ctx, apps)
		return err
	})
}

// saveInBatches stores apps through the intake's path, size at a time.
func saveInBatches(ctx context.Context, s *store.Store, apps []store.Application, size int) error {
	for start := 0; start < len(apps); start += size {
		if err := saveApplications(ctx, s, apps[start:min(start+size, len(apps))]); err != nil {
			return err
		}
	}
	return nil
}

// changed copies apps sent shift later (or earlier), each with other
// values in every counted column.
func changed(apps []store.Application, shift time.Duration, seed int) []store.Application {
	out := make([]store.Application, len(apps))
	states := []string{"TX", "OH", "CA", "NE"}
	types := []string{"Company Driver", "Owner Operator", "Student"}
	certs := [][]string{{}, {"T"}, {"H", "X"}, {"T", "H", "N", "X"}}
	for i, a := range apps {
		k := i + seed
		a.Sent = a.Sent.Add(shift)
		a.Profile.State, a.Profile.DriverType = states[k%len(states)], types[k%len(types)]
		a.Profile.Endorsements = certs[k%len(certs)]
		// The last is no number: experience_years is NULL.
		a.Profile.Experience = []string{"0.5", "2", "7", "25", "over ten"}[k%5]
		a.Profile.FirstName, a.Profile.LastName = fmt.Sprintf("F%d", k%5), fmt.Sprintf("L%d", k%3)
		a.JobApps = nil
		if k%2 == 0 {
			a.JobApps = []store.JobApplicationInput{{Reference: "J2", CreatedAt: a.Sent}}
		}
		out[i] = a
	}
	return out
}

// deleteSome removes applications of the account, and drivers (whose
// applications go by cascade), a few at a time. The deletes race the
// intakes, renames and folds on the rows of applications and of their
// counts, so each runs in the store's retried transaction: a deadlock
// PostgreSQL breaks by rolling a delete back runs it again, as it does
// the store's own writes, instead of failing the test.
func deleteSome(ctx context.Context, s *store.Store, acct int64) error {
	deletes := []string{
		`DELETE FROM applications WHERE account_id = $1 AND driver_id IN
			(SELECT driver_id FROM applications WHERE account_id = $1 ORDER BY random() LIMIT 4)`,
		`DELETE FROM drivers WHERE id IN
			(SELECT driver_id FROM applications WHERE account_id = $1 ORDER BY random() LIMIT 2)`,
	}
	for range 10 {
		for _, q := range deletes {
			if err := s.InRetriedSQLTx(ctx, "test delete", func(tx *sqlx.Tx) error {
				_, err := tx.ExecContext(ctx, q, acct)
				return err
			}); err != nil {
				return err
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}

// changeStatuses moves the lead status of some of the account's drivers,
// a few at a time, racing the intakes, deletes and folds: each move is an
// update of applications the status counts follow.
func changeStatuses(ctx context.Context, s *store.Store, acct int64) error {
	statuses := domain.LeadStatuses()
	for i := range 30 {
		err := s.InRetriedTx(ctx, "test statuses", func(tx *store.Tx) error {
			var ids []int64
			if err := tx.SQL().QueryRowContext(ctx, `SELECT coalesce(array_agg(driver_id), '{}') FROM
				(SELECT driver_id FROM applications WHERE account_id = $1 ORDER BY random() LIMIT 5) d`,
				acct).Scan(pq.Array(&ids)); err != nil {
				return err
			}
			var updates []store.StatusUpdate
			for j, id := range ids {
				st := statuses[(i+j)%len(statuses)]
				updates = append(updates, store.StatusUpdate{DriverID: id,
					StatusChange: domain.StatusChange{Status: st, ChangedAt: time.Now().UTC().Truncate(time.Microsecond)}})
			}
			_, err := tx.SetDriverStatuses(ctx, acct, updates)
			return err
		})
		if err != nil {
			return err
		}
		time.Sleep(2 * time.Millisecond)
	}
	return nil
}

// statusChecks are lists of several statuses, and statuses with a state,
// a driver type or job applications, which application_status_profile_counts
// counts.
func statusChecks(t *testing.T, s *store.Store, acct int64) []countCheck {
	var state, driverType string
	if err := s.DB().QueryRowContext(context.Background(), `SELECT coalesce(min(state), 'TX'),
		coalesce(min(driver_type), 'Student') FROM applications WHERE account_id = $1`, acct).Scan(&state, &driverType); err != nil {
		t.Fatal(err)
	}
	yes, no := true, false
	return []countCheck{
		{"statuses new and hired", store.DriverFilter{Statuses: []string{"new", "hired"}},
			"status = ANY ($2::text[])", pq.StringArray{"new", "hired"}},
		{"statuses reviewing, rejected and withdrawn", store.DriverFilter{Statuses: []string{"reviewing", "rejected", "withdrawn"}},
			"status = ANY ($2::text[])", pq.StringArray{"reviewing", "rejected", "withdrawn"}},
		{"status new in " + state, store.DriverFilter{Statuses: []string{"new"}, State: state},
			"status = 'new' AND state = $2", state},
		{"statuses new and reviewing in " + state, store.DriverFilter{Statuses: []string{"new", "reviewing"}, State: state},
			"status IN ('new', 'reviewing') AND state = $2", state},
		{"status new of " + driverType + " with job applications",
			store.DriverFilter{Statuses: []string{"new"}, DriverType: driverType, HasJobApps: &yes},
			"status = 'new' AND driver_type = $2 AND has_job_apps", driverType},
		{"status reviewing without job applications", store.DriverFilter{Statuses: []string{"reviewing"}, HasJobApps: &no},
			"status = 'reviewing' AND NOT has_job_apps AND $2::int IS NULL", nil},
		{"statuses hired and rejected of " + driverType + " in " + state,
			store.DriverFilter{Statuses: []string{"hired", "rejected"}, DriverType: driverType, State: state},
			"status IN ('hired', 'rejected') AND driver_type = ($2::text[])[1] AND state = ($2::text[])[2]",
			pq.StringArray{driverType, state}},
	}
}

// countCheck is a filter and the condition on applications that selects
// the same rows, with its one argument.
type countCheck struct {
	name string
	f    store.DriverFilter
	cond string
	arg  any
}

// checkCountsExact compares the list's total with count(*) for every
// value of every counted filter the account's applications hold, and for
// date ranges that start and end on and between day boundaries.
func checkCountsExact(t *testing.T, s *store.Store, acct int64) {
	t.Helper()
	ctx := context.Background()
	type check = countCheck
	checks := []check{{name: "no filter", cond: "$2::int IS NULL", arg: nil}}
	for _, c := range []string{"T", "H", "N", "X"} {
		checks = append(checks, check{"certification " + c, store.DriverFilter{Certification: c}, "endorsements @> ARRAY[$2::text]", c})
	}
	for _, yes := range []bool{true, false} {
		checks = append(checks, check{fmt.Sprint("has_job_apps ", yes), store.DriverFilter{HasJobApps: &yes}, "has_job_apps = $2", yes})
	}
	for _, m := range []float64{0, 0.5, 1, 2, 7, 8} {
		checks = append(checks, check{fmt.Sprint("min_experience ", m), store.DriverFilter{MinExperience: &m}, "experience_years >= $2", m})
	}
	values := func(column string, filter func(v string) store.DriverFilter) {
		var vs []string
		if err := s.DB().SelectContext(ctx, &vs, `SELECT DISTINCT `+column+` FROM applications WHERE account_id = $1`, acct); err != nil {
			t.Fatal(err)
		}
		for _, v := range vs {
			checks = append(checks, check{column + " " + v, filter(v), column + " = $2", v})
		}
	}
	values("state", func(v string) store.DriverFilter { return store.DriverFilter{State: v} })
	values("driver_type", func(v string) store.DriverFilter { return store.DriverFilter{DriverType: v} })
	values("first_name_key", func(v string) store.DriverFilter { return store.DriverFilter{FirstNameKey: v} })
	values("last_name_key", func(v string) store.DriverFilter { return store.DriverFilter{LastNameKey: v} })
	// Every status, held or not: a status no driver holds counts 0.
	for _, st := range domain.LeadStatuses() {
		checks = append(checks, check{"status " + string(st), store.DriverFilter{Statuses: []string{string(st)}}, "status = $2", string(st)})
	}
	checks = append(checks, statusChecks(t, s, acct)...)
	checks = append(checks, dateChecks(t, s, acct)...)
	checks = append(checks, radiusChecks(t, s, acct)...)
	checks = append(checks, combinationChecks(t, s, acct)...)
	for _, c := range checks {
		// A page that holds every match: its rows, which the page's own
		// statement selects, must be the count's.
		c.f.Sort, c.f.Limit = "id", 1000
		items, got, err := s.ListDrivers(ctx, acct, c.f)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var want int64
		if err := s.DB().GetContext(ctx, &want, `SELECT count(*) FROM applications WHERE account_id = $1 AND `+c.cond, acct, c.arg); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got != want {
			t.Errorf("account %d, %s: total %d, count(*) says %d", acct, c.name, got, want)
		}
		if int64(len(items)) != want {
			t.Errorf("account %d, %s: the page lists %d drivers, count(*) says %d", acct, c.name, len(items), want)
		}
	}
}

// combinationChecks are filters of two and three columns, built from one
// applicant of each state the account has: those application_profile_counts
// answers (state, driver type, job applications, whole half-years of
// experience, a certification), with a minimum below every known
// experience, and with a name or a date the counts do not hold.
func combinationChecks(t *testing.T, s *store.Store, acct int64) []countCheck {
	var rows []struct {
		State        string  `db:"state"`
		DriverType   string  `db:"driver_type"`
		HasJobApps   bool    `db:"has_job_apps"`
		Years        float64 `db:"years"`
		FirstNameKey string  `db:"first_name_key"`
		Sent         time.Time
	}
	if err := s.DB().SelectContext(context.Background(), &rows, `SELECT DISTINCT ON (state) state, driver_type,
		has_job_apps, coalesce(experience_halves, 0) / 2.0 AS years, first_name_key, sent
		FROM applications WHERE account_id = $1 ORDER BY state, driver_id`, acct); err != nil {
		t.Fatal(err)
	}
	var out []countCheck
	for i, r := range rows {
		cert := []string{"T", "H", "N", "X"}[i%4]
		yes, no := true, false
		jobApps := []*bool{&yes, &no}[i%2]
		years, below := r.Years, -0.5
		day := r.Sent.UTC().Truncate(24 * time.Hour)
		vals := pq.StringArray{r.State, r.DriverType, fmt.Sprint(*jobApps), fmt.Sprint(years), cert, r.FirstNameKey,
			day.Format(time.RFC3339)}
		// $2 is vals: state, driver type, has_job_apps, years, certification, first name key, day.
		out = append(out,
			countCheck{"state and driver type " + r.State, store.DriverFilter{State: r.State, DriverType: r.DriverType},
				"state = ($2::text[])[1] AND driver_type = ($2::text[])[2]", vals},
			countCheck{"driver type, job applications and experience " + r.State,
				store.DriverFilter{DriverType: r.DriverType, HasJobApps: jobApps, MinExperience: &years},
				"driver_type = ($2::text[])[2] AND has_job_apps = ($2::text[])[3]::boolean AND experience_years >= ($2::text[])[4]::numeric", vals},
			countCheck{"state, certification and job applications " + r.State,
				store.DriverFilter{State: r.State, Certification: cert, HasJobApps: jobApps},
				"state = ($2::text[])[1] AND endorsements @> ARRAY[($2::text[])[5]] AND has_job_apps = ($2::text[])[3]::boolean", vals},
			countCheck{"driver type and any known experience " + r.State,
				store.DriverFilter{DriverType: r.DriverType, MinExperience: &below},
				"driver_type = ($2::text[])[2] AND experience_years IS NOT NULL", vals},
			countCheck{"first name and state " + r.State, store.DriverFilter{State: r.State, FirstNameKey: r.FirstNameKey},
				"state = ($2::text[])[1] AND first_name_key = ($2::text[])[6]", vals},
			countCheck{"driver type, certification and sent from " + r.State,
				store.DriverFilter{DriverType: r.DriverType, Certification: cert, SentFrom: &day},
				"driver_type = ($2::text[])[2] AND endorsements @> ARRAY[($2::text[])[5]] AND sent >= ($2::text[])[7]::timestamptz", vals},
		)
	}
	return out
}

// dateChecks are date ranges around the middle of the account's
// applications: open at either end, from and to midnight or a time of
// day, with whole days between or none; each alone, with the state of the
// applicant in the middle, and with its driver type and job applications.
func dateChecks(t *testing.T, s *store.Store, acct int64) []countCheck {
	var mid struct {
		Sent       time.Time `db:"sent"`
		State      string    `db:"state"`
		DriverType string    `db:"driver_type"`
		HasJobApps bool      `db:"has_job_apps"`
	}
	if err := s.DB().GetContext(context.Background(), &mid, `SELECT sent, state, driver_type, has_job_apps
		FROM applications WHERE account_id = $1 ORDER BY sent, driver_id
		OFFSET (SELECT count(*) / 2 FROM applications WHERE account_id = $1) LIMIT 1`, acct); err != nil {
		t.Fatal(err)
	}
	day := mid.Sent.UTC().Truncate(24 * time.Hour)
	at := func(days, hours int) *time.Time {
		v := day.AddDate(0, 0, days).Add(time.Duration(hours) * time.Hour)
		return &v
	}
	ranges := []struct{ from, before *time.Time }{
		{at(0, 0), nil}, {at(0, 13), nil}, {nil, at(0, 0)}, {nil, at(3, 7)},
		{at(-10, 5), at(10, 19)}, {at(-10, 0), at(10, 0)}, {at(0, 2), at(0, 20)},
		{at(0, 0), at(1, 0)}, {at(0, 6), at(1, 0)}, {at(0, 6), at(2, 3)}, {at(-1, 23), at(1, 1)},
	}
	var out []countCheck
	for _, r := range ranges {
		vals := pq.StringArray{"-infinity", "infinity", mid.State, mid.DriverType, fmt.Sprint(mid.HasJobApps)}
		for i, b := range []*time.Time{r.from, r.before} {
			if b != nil {
				vals[i] = b.Format(time.RFC3339Nano)
			}
		}
		// $2 is vals: from, before, state, driver type, has_job_apps.
		sent := "sent >= ($2::text[])[1]::timestamptz AND sent < ($2::text[])[2]::timestamptz"
		name := fmt.Sprintf("sent from %s before %s", vals[0], vals[1])
		out = append(out,
			countCheck{name, store.DriverFilter{SentFrom: r.from, SentBefore: r.before}, sent, vals},
			countCheck{name + " in " + mid.State,
				store.DriverFilter{SentFrom: r.from, SentBefore: r.before, State: mid.State},
				sent + " AND state = ($2::text[])[3]", vals},
			countCheck{name + " of " + mid.DriverType + " with job applications " + vals[4],
				store.DriverFilter{SentFrom: r.from, SentBefore: r.before, DriverType: mid.DriverType, HasJobApps: &mid.HasJobApps},
				sent + " AND driver_type = ($2::text[])[4] AND has_job_apps = ($2::text[])[5]::boolean", vals})
	}
	return out
}

// radiusChecks are circles around three of the account's applicants' home
// centroids, compared with the great-circle distance computed with asin:
// each alone, with the driver type of an applicant who lives there, with
// job applications or none, and with both.
func radiusChecks(t *testing.T, s *store.Store, acct int64) []countCheck {
	var homes []struct {
		Latitude   float64 `db:"latitude"`
		Longitude  float64 `db:"longitude"`
		DriverType string  `db:"driver_type"`
	}
	if err := s.DB().SelectContext(context.Background(), &homes, `SELECT DISTINCT ON (latitude, longitude)
		latitude, longitude, driver_type FROM applications
		WHERE account_id = $1 AND latitude IS NOT NULL ORDER BY 1, 2, driver_id LIMIT 3`, acct); err != nil {
		t.Fatal(err)
	}
	const within = `2 * 3958.8 * asin(sqrt(power(sin(radians(latitude - ($2::text[])[1]::float8) / 2), 2) +
		cos(radians(latitude)) * cos(radians(($2::text[])[1]::float8)) *
		power(sin(radians(longitude - ($2::text[])[2]::float8) / 2), 2))) <= ($2::text[])[3]::float8`
	var out []countCheck
	for i, h := range homes {
		for _, miles := range []float64{1, 120, 900} {
			r := &store.Radius{Latitude: h.Latitude, Longitude: h.Longitude, Miles: miles}
			jobApps := i%2 == 0
			// $2 is vals: latitude, longitude, miles, driver type, has_job_apps.
			vals := pq.StringArray{fmt.Sprint(h.Latitude), fmt.Sprint(h.Longitude), fmt.Sprint(miles),
				h.DriverType, fmt.Sprint(jobApps)}
			name := fmt.Sprintf("%v miles of %v, %v", miles, h.Latitude, h.Longitude)
			out = append(out,
				countCheck{name, store.DriverFilter{Radius: r}, within, vals},
				countCheck{name + " of " + h.DriverType, store.DriverFilter{Radius: r, DriverType: h.DriverType},
					within + " AND driver_type = ($2::text[])[4]", vals},
				countCheck{name + " with job applications " + vals[4], store.DriverFilter{Radius: r, HasJobApps: &jobApps},
					within + " AND has_job_apps = ($2::text[])[5]::boolean", vals},
				countCheck{name + " of " + h.DriverType + " with job applications " + vals[4],
					store.DriverFilter{Radius: r, DriverType: h.DriverType, HasJobApps: &jobApps},
					within + " AND driver_type = ($2::text[])[4] AND has_job_apps = ($2::text[])[5]::boolean", vals})
		}
	}
	return out
}

// unfoldedValues is the number of the account's values that have more than
// one count row.
func unfoldedValues(t *testing.T, s *store.Store, acct int64) int {
	t.Helper()
	var n int
	if err := s.DB().GetContext(context.Background(), &n, `
		SELECT (SELECT count(*) FROM (SELECT 1 FROM application_counts WHERE account_id = $1
		          GROUP BY dimension, value HAVING count(*) > 1) c)
		     + (SELECT count(*) FROM (SELECT 1 FROM application_location_counts WHERE account_id = $1
		          GROUP BY latitude, longitude HAVING count(*) > 1) l)
		     + (SELECT count(*) FROM (SELECT 1 FROM application_profile_counts WHERE account_id = $1
		          GROUP BY state, driver_type, has_job_apps, experience_halves, endorsements HAVING count(*) > 1) p)
		     + (SELECT count(*) FROM (SELECT 1 FROM application_day_counts WHERE account_id = $1
		          GROUP BY day, state, driver_type, has_job_apps HAVING count(*) > 1) d)
		     + (SELECT count(*) FROM (SELECT 1 FROM application_location_profile_counts WHERE account_id = $1
		          GROUP BY latitude, longitude, driver_type, has_job_apps HAVING count(*) > 1) lp)
		     + (SELECT count(*) FROM (SELECT 1 FROM job_title_profile_counts WHERE account_id = $1
		          GROUP BY job_title_lower, state, driver_type, has_job_apps HAVING count(*) > 1) tp)
		     + (SELECT count(*) FROM (SELECT 1 FROM application_status_profile_counts WHERE account_id = $1
		          GROUP BY status, state, driver_type, has_job_apps HAVING count(*) > 1) sp)`, acct); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCountFoldingOffTheIntake: an intake only writes its delta rows (two
// batches a second apart leave values with two rows, where the intake used
// to fold on its own); the fold loop folds them within about a second, and
// its stop folds what was written last.
func TestCountFoldingOffTheIntake(t *testing.T) {
	ctx := context.Background()
	s := storetest.Store(t)
	acct := storetest.NewAccount(t, s, "A").AccountID
	if _, err := s.UpsertJobs(ctx, acct, []store.JobFields{job("J2")}, store.UpsertOptions{MaxActive: 10, Today: day1}); err != nil {
		t.Fatal(err)
	}
	apps := demo.Applications(acct, 40, 1, time.Now().UTC(), []string{"J2"}, "f.")
	if err := saveInBatches(ctx, s, apps[:20], 20); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	if err := saveInBatches(ctx, s, apps[20:], 20); err != nil {
		t.Fatal(err)
	}
	if unfoldedValues(t, s, acct) == 0 {
		t.Fatal("the intake folded the counts itself")
	}

	stop := s.StartCountFolding(ctx)
	deadline := time.Now().Add(5 * time.Second)
	for unfoldedValues(t, s, acct) != 0 {
		if time.Now().After(deadline) {
			stop()
			t.Fatal("the fold loop left values with several rows for 5 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	checkCountsExact(t, s, acct)

	if err := saveInBatches(ctx, s, changed(apps[:10], time.Hour, 1), 10); err != nil {
		t.Fatal(err)
	}
	stop()
	if n := unfoldedValues(t, s, acct); n != 0 {
		t.Errorf("after stop, %d values still have several rows", n)
	}
	checkCountsExact(t, s, acct)
}

// TestCountFoldPlansReadTheIndex: the fold of an account's counts reads
// the count tables by the account's index, not by sequential scans, and
// joins the values to fold to their rows by hashing, even when the
// statistics were taken before the account had a row, as they are right
// after a bulk load: a nested loop over sequential scans folded a new
// account's 18,000 profile rows in 100 s, and one that grouped the
// account's rows again for each of them ran for over 4 minutes on 57,816
// rows in 6,298 values.
func TestCountFoldPlansReadTheIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.Store(t)
	acct := storetest.NewAccount(t, s, "A").AccountID
	if _, err := s.DB().ExecContext(ctx, `ANALYZE application_counts, application_location_counts, application_profile_counts,
		application_day_counts, application_location_profile_counts, job_title_profile_counts,
		application_status_profile_counts`); err != nil {
		t.Fatal(err)
	}
	if err := saveInBatches(ctx, s, demo.Applications(acct, 600, 1, time.Now().UTC(), nil, "p."), 200); err != nil {
		t.Fatal(err)
	}
	plans, err := s.FoldPlans(ctx, acct)
	if err != nil {
		t.Fatal(err)
	}
	for _, plan := range plans {
		if strings.Contains(plan, "Seq Scan") {
			t.Errorf("a fold reads a count table in full:\n%s", plan)
		}
		if strings.Contains(plan, "Nested Loop") {
			t.Errorf("a fold joins by a nested loop:\n%s", plan)
		}
	}
}

// TestCountFoldRetriedAfterSkip: an account whose fold found another fold
// holding its lock (another replica's, which may leave this one's latest
// rows) is folded again in a later round, not forgotten until its next
// write.
func TestCountFoldRetriedAfterSkip(t *testing.T) {
	ctx := context.Background()
	s := storetest.Store(t)
	acct := storetest.NewAccount(t, s, "A").AccountID
	if _, err := s.UpsertJobs(ctx, acct, []store.JobFields{job("J2")}, store.UpsertOptions{MaxActive: 10, Today: day1}); err != nil {
		t.Fatal(err)
	}
	apps := demo.Applications(acct, 20, 1, time.Now().UTC(), []string{"J2"}, "f.")
	if err := saveInBatches(ctx, s, apps, 10); err != nil {
		t.Fatal(err)
	}
	// Another fold of the account, as far as the lock says.
	other, err := s.DB().BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Rollback() //nolint:errcheck // released below
	if _, err := other.ExecContext(ctx, `SELECT pg_advisory_xact_lock(180001, $1::int4)`, acct); err != nil {
		t.Fatal(err)
	}
	stop := s.StartCountFolding(ctx)
	defer stop()
	time.Sleep(1500 * time.Millisecond) // a round or two, each skipping the account
	if unfoldedValues(t, s, acct) == 0 {
		t.Fatal("the account was folded while another fold held its lock")
	}
	if err := other.Rollback(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for unfoldedValues(t, s, acct) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the account skipped while locked was not folded within 5 s of the lock's release")
		}
		time.Sleep(50 * time.Millisecond)
	}
	checkCountsExact(t, s, acct)
}

// TestCountBackfillWithWritesBetween: applications stored before migration
// 0015 are counted after it, account by account, while writes go on: the
// writes made between the triggers and an account's fill (new
// applications, newer ones that change every counted column, deletes), on
// the account about to be filled and on the others, finish without
// waiting, and every count equals count(*) afterwards, none counted twice.
func TestCountBackfillWithWritesBetween(t *testing.T) {
	ctx := context.Background()
	s := storetest.Store(t)
	if _, err := s.DB().ExecContext(ctx, `DROP SCHEMA public CASCADE; CREATE SCHEMA public`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MigrateUpTo(ctx, 14); err != nil {
		t.Fatal(err)
	}
	refs := []string{"J1", "J2"}
	accounts := []int64{storetest.NewAccount(t, s, "A").AccountID, storetest.NewAccount(t, s, "B").AccountID}
	now := time.Now().UTC()
	for i, acct := range accounts {
		if err := postOldJobs(ctx, s, acct, job("J1"), job("J2")); err != nil {
			t.Fatal(err)
		}
		if err := saveInBatches(ctx, s, demo.Applications(acct, 120, uint64(i+1), now, refs, "old."), 40); err != nil {
			t.Fatal(err)
		}
	}
	var filled int
	store.SetBeforeCountBackfill(func(_ context.Context, id int64) {
		filled++
		// A write held by a lock on applications would end here.
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		for _, acct := range accounts {
			base := demo.Applications(acct, 120, uint64(acct), now, refs, "old.")
			err := errors.Join(
				saveInBatches(wctx, s, demo.Applications(acct, 15, uint64(10*id+acct), now, refs, fmt.Sprintf("new%d.", id)), 5),
				saveInBatches(wctx, s, changed(base[:30], time.Duration(id)*time.Hour, int(id)), 6),
				deleteSome(wctx, s, acct),
				changeStatuses(wctx, s, acct))
			if err != nil {
				t.Errorf("a write before the fill of account %d: %v", id, err)
			}
		}
	})
	t.Cleanup(func() { store.SetBeforeCountBackfill(nil) })
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if filled != len(accounts) {
		t.Errorf("%d accounts filled, want %d", filled, len(accounts))
	}
	for _, acct := range accounts {
		checkCountsExact(t, s, acct)
		checkTitleCountsExact(t, s, acct)
	}
	var left bool
	if err := s.DB().GetContext(ctx, &left, `SELECT to_regclass('application_counts_backfill') IS NOT NULL`); err != nil || left {
		t.Errorf("the list of accounts to fill is still there (%v)", err)
	}
}

// TestStatusCountBackfill: statuses set before migration 0034 counted
// them, or before migration 0038 counted them with their profiles, are
// counted by the fills, with the changes made between the migration and
// the fill (applications and statuses, which the triggers count), and the
// lists of accounts to fill go.
func TestStatusCountBackfill(t *testing.T) {
	for _, tt := range []struct {
		name  string
		upTo  int
		lists []string
	}{
		{"from before 0034", 33, []string{"application_status_counts_backfill", "application_status_profile_counts_backfill"}},
		{"from before 0038", 37, []string{"application_status_profile_counts_backfill"}},
	} {
		t.Run(tt.name, func(t *testing.T) { checkStatusCountBackfill(t, tt.upTo, tt.lists) })
	}
}

// checkStatusCountBackfill migrates a new schema up to upTo, stores
// applications of several statuses, then migrates the rest of the way,
// writing before each account's fill of each of lists.
func checkStatusCountBackfill(t *testing.T, upTo int, lists []string) {
	ctx := context.Background()
	s := storetest.Store(t)
	if _, err := s.DB().ExecContext(ctx, `DROP SCHEMA public CASCADE; CREATE SCHEMA public`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MigrateUpTo(ctx, upTo); err != nil {
		t.Fatal(err)
	}
	accounts := []int64{storetest.NewAccount(t, s, "A").AccountID, storetest.NewAccount(t, s, "B").AccountID}
	now := time.Now().UTC()
	for i, acct := range accounts {
		if err := saveInBatches(ctx, s, demo.Applications(acct, 90, uint64(i+1), now, nil, "old."), 30); err != nil {
			t.Fatal(err)
		}
		if err := changeStatuses(ctx, s, acct); err != nil {
			t.Fatal(err)
		}
	}
	var filled int
	store.SetBeforeStatusCountBackfill(func(_ context.Context, id int64) {
		filled++
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		for _, acct := range accounts {
			prefix := fmt.Sprintf("between%d.%d.", filled, id)
			err := errors.Join(
				saveInBatches(wctx, s, demo.Applications(acct, 10, uint64(100*filled)+uint64(id+acct), now, nil, prefix), 5),
				changeStatuses(wctx, s, acct))
			if err != nil {
				t.Errorf("a write before the status fill of account %d: %v", id, err)
			}
		}
	})
	t.Cleanup(func() { store.SetBeforeStatusCountBackfill(nil) })
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if want := len(accounts) * len(lists); filled != want {
		t.Errorf("%d account fills, want %d", filled, want)
	}
	for _, acct := range accounts {
		var statuses int
		if err := s.DB().GetContext(ctx, &statuses, `SELECT count(DISTINCT status) FROM applications
			WHERE account_id = $1`, acct); err != nil || statuses < 3 {
			t.Fatalf("account %d holds %d statuses (%v): the test needs several", acct, statuses, err)
		}
		checkCountsExact(t, s, acct)
	}
	for _, list := range lists {
		var left bool
		if err := s.DB().GetContext(ctx, &left, `SELECT to_regclass($1) IS NOT NULL`, list); err != nil || left {
			t.Errorf("the list %s of accounts whose statuses to count is still there (%v)", list, err)
		}
	}
}

// runTogether runs the writers at once and fails the test with their
// errors once all have returned.
func runTogether(t *testing.T, writers []func() error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, len(writers))
	for i, w := range writers {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = w() }()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

// TestDateRangeCountQuery: a date range is counted from the days' counts,
// alone from application_counts and with state, driver type or job
// applications from application_day_counts, its part days at the ends in
// applications with the same filters; with any other filter, in
// applications.
func TestDateRangeCountQuery(t *testing.T) {
	s := storetest.Store(t)
	yes := true
	midnight := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	morning := midnight.Add(6 * time.Hour)
	later := midnight.AddDate(0, 0, 9)
	for _, tt := range []struct {
		name      string
		f         store.DriverFilter
		want, not []string
	}{
		{"alone", store.DriverFilter{SentFrom: &midnight},
			[]string{"FROM application_counts WHERE account_id = $1 AND dimension = 'sent' AND value >= $2"},
			[]string{"application_day_counts", "FROM applications"}},
		{"with a state", store.DriverFilter{SentFrom: &midnight, State: "TX"},
			[]string{"FROM application_day_counts WHERE account_id = $1 AND state = $2 AND day >= "},
			[]string{"FROM applications"}},
		{"with a driver type and job applications, from a morning",
			store.DriverFilter{SentFrom: &morning, SentBefore: &later, DriverType: "Student", HasJobApps: &yes},
			[]string{"FROM application_day_counts WHERE account_id = $1 AND driver_type = $2 AND has_job_apps = $3 AND day >= ",
				"FROM applications a WHERE a.account_id = $1 AND a.sent >= $4 AND a.sent < $5 AND a.driver_type = $2 AND a.has_job_apps = $3"},
			nil},
		{"with a certification", store.DriverFilter{SentFrom: &midnight, State: "TX", Certification: "X"},
			[]string{"FROM applications a WHERE"}, []string{"_counts"}},
		{"within a day", store.DriverFilter{SentFrom: &morning, SentBefore: &morning, State: "TX"},
			[]string{"FROM applications a WHERE"}, []string{"_counts"}},
	} {
		checkCountSQL(t, s, tt.name, tt.f, tt.want, tt.not)
	}
}

// TestRadiusCountQuery: a radius is counted from the centroids' counts,
// alone from application_location_counts and with a driver type or job
// applications from application_location_profile_counts; with any other
// filter, in applications.
func TestRadiusCountQuery(t *testing.T) {
	s := storetest.Store(t)
	yes := true
	r := &store.Radius{Latitude: 40.74, Longitude: -74.03, Miles: 50}
	for _, tt := range []struct {
		name      string
		f         store.DriverFilter
		want, not []string
	}{
		{"alone", store.DriverFilter{Radius: r},
			[]string{"FROM application_location_counts a WHERE a.account_id = $1 AND a.latitude BETWEEN"},
			[]string{"application_location_profile_counts", "FROM applications"}},
		{"with a driver type", store.DriverFilter{Radius: r, DriverType: "Student"},
			[]string{"FROM application_location_profile_counts a WHERE a.account_id = $1 AND a.latitude BETWEEN",
				"AND a.driver_type = $"},
			[]string{"FROM applications", "has_job_apps"}},
		{"with job applications", store.DriverFilter{Radius: r, HasJobApps: &yes},
			[]string{"FROM application_location_profile_counts a WHERE", "AND a.has_job_apps = $"},
			[]string{"FROM applications", "driver_type"}},
		{"with both", store.DriverFilter{Radius: r, DriverType: "Student", HasJobApps: &yes},
			[]string{"FROM application_location_profile_counts a WHERE", "AND a.driver_type = $", "AND a.has_job_apps = $"},
			[]string{"FROM applications"}},
		{"with a state", store.DriverFilter{Radius: r, DriverType: "Student", State: "NJ"},
			[]string{"FROM applications a WHERE"}, []string{"_counts"}},
	} {
		checkCountSQL(t, s, tt.name, tt.f, tt.want, tt.not)
	}
}

// TestStatusCountQuery: lead statuses are counted alone from
// application_counts, with state, driver type or job applications from
// application_status_profile_counts, and with any other filter in
// applications.
func TestStatusCountQuery(t *testing.T) {
	s := storetest.Store(t)
	yes := true
	newOnly := []string{"new"}
	for _, tt := range []struct {
		name      string
		f         store.DriverFilter
		want, not []string
	}{
		{"alone", store.DriverFilter{Statuses: newOnly},
			[]string{"FROM application_counts WHERE account_id = $1 AND dimension = 'status'"},
			[]string{"application_status_profile_counts", "FROM applications"}},
		{"with a state", store.DriverFilter{Statuses: []string{"new", "hired"}, State: "TX"},
			[]string{"FROM application_status_profile_counts WHERE account_id = $1 AND status = ANY ($2::text[]) AND state = $3"},
			[]string{"FROM applications", "driver_type"}},
		{"with a driver type and job applications",
			store.DriverFilter{Statuses: newOnly, DriverType: "Company Driver", HasJobApps: &yes},
			[]string{"FROM application_status_profile_counts WHERE", "AND driver_type = $3 AND has_job_apps = $4"},
			[]string{"FROM applications", "state"}},
		{"with a certification", store.DriverFilter{Statuses: newOnly, State: "TX", Certification: "X"},
			[]string{"FROM applications a WHERE"}, []string{"_counts"}},
		{"with experience", store.DriverFilter{Statuses: newOnly, DriverType: "Student", MinExperience: new(float64)},
			[]string{"FROM applications a WHERE"}, []string{"_counts"}},
	} {
		checkCountSQL(t, s, tt.name, tt.f, tt.want, tt.not)
	}
}

// checkCountSQL checks that the count statement of f, its spaces made
// single, holds each of want and none of not.
func checkCountSQL(t *testing.T, s *store.Store, name string, f store.DriverFilter, want, not []string) {
	t.Helper()
	_, count, err := s.DriverListQueries(context.Background(), 7, f)
	if err != nil {
		t.Fatal(err)
	}
	sql := strings.Join(strings.Fields(count.SQL), " ")
	for _, w := range want {
		if !strings.Contains(sql, w) {
			t.Errorf("%s: count %s, want %q in it", name, sql, w)
		}
	}
	for _, n := range not {
		if strings.Contains(sql, n) {
			t.Errorf("%s: count %s, want no %q in it", name, sql, n)
		}
	}
}
