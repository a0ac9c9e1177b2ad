package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// The intake writes a batch of applications set-based: each table it
// touches takes the whole batch in one statement of arrays, so a call of
// 1,000 applications runs as many statements as a call of one: the jobs'
// lookup, then for each round the drivers (the first round only), the
// applications, the employment history's delete and insert, the job
// applications, and the mark of older applications that named jobs (only
// when there are some). A statement cannot write one row twice, so a
// batch that names one driver several times for an account is written in
// rounds, the driver's first application in the first, its second in the
// second: in the order given, as the newest-wins rule requires.

// SavedApplications are what SaveApplications stored.
type SavedApplications struct {
	// IDs are each application's driver id, in the order given.
	IDs []int64
	// Received are the applications the accounts received, with their
	// driver ids: all but those the same as the last one the account took
	// from that driver (a retried call, a file imported again), which are
	// stored again but not received again.
	Received    []Application
	ReceivedIDs []int64
}

// SaveApplications stores applications in the transaction. An application
// naming an unknown job fails the whole batch with an *UnknownJobError.
// Run it in InRetriedTx: the batch's locks are taken in an order that makes
// deadlocks rare, not impossible.
func (t *Tx) SaveApplications(ctx context.Context, apps []Application) (SavedApplications, error) {
	ids := make([]int64, len(apps))
	repeat := make([]bool, len(apps))
	// Each application's case-folded e-mail, the key its driver goes by.
	keys := make([]string, len(apps))
	for i, a := range apps {
		keys[i] = FoldCase(a.Profile.Email)
	}
	accounts := accountsOf(apps)
	for _, account := range accounts {
		var positions []int
		for i, a := range apps {
			if a.AccountID == account {
				positions = append(positions, i)
			}
		}
		b := intakeBatch{account: account, apps: apps, keys: keys, drivers: map[string]int64{}, repeat: repeat}
		if err := b.saveAll(ctx, t.tx, positions, ids); err != nil {
			return SavedApplications{}, err
		}
	}
	saved := SavedApplications{IDs: ids}
	for i, a := range apps {
		if !repeat[i] {
			saved.Received, saved.ReceivedIDs = append(saved.Received, a), append(saved.ReceivedIDs, ids[i])
		}
	}
	t.compact = append(t.compact, accounts...)
	t.applicationsWritten += int64(len(apps))
	return saved, nil
}

// saveAll saves the applications at positions, all to the batch's
// account, setting their driver ids and whether each repeats the last one
// its row took. The statements name the account, so that each finds its
// rows through the account's indexes whatever the batch's size: a join to
// the batch's arrays is planned for a hundred rows, and for one
// application read the whole of a table it could have probed.
func (b *intakeBatch) saveAll(ctx context.Context, tx *sqlx.Tx, positions []int, ids []int64) error {
	var err error
	if b.jobs, err = lockAppliedJobs(ctx, tx, b.account, b.apps, positions); err != nil {
		return err
	}
	for _, round := range rounds(b.keys, positions) {
		if err := b.save(ctx, tx, round); err != nil {
			return err
		}
	}
	for _, i := range positions {
		ids[i] = b.driverOf(i)
	}
	return nil
}

// accountsOf lists the accounts apps go to, each once.
func accountsOf(apps []Application) []int64 {
	var ids []int64
	for _, a := range apps {
		if !slices.Contains(ids, a.AccountID) {
			ids = append(ids, a.AccountID)
		}
	}
	return ids
}

// rounds splits positions, the applications of one account, so that no
// round holds two of one driver (keys are the applications' drivers' keys):
// the n-th application of a driver goes in round n. A batch of distinct
// drivers is one round.
func rounds(keys []string, positions []int) [][]int {
	seen := make(map[string]int, len(positions))
	var out [][]int
	for _, i := range positions {
		n := seen[keys[i]]
		seen[keys[i]] = n + 1
		if n == len(out) {
			out = append(out, nil)
		}
		out[n] = append(out[n], i)
	}
	return out
}

// appliedJob is a job an application names, as the job application
// copies it.
type appliedJob struct {
	id         int64
	titleLower string
}

// appliedJobsQuery finds the account's jobs with the references $2,
// withdrawn ones included (historical applications may name them), and
// locks them FOR SHARE in id order. The share lock holds back a rename of
// these jobs until the transaction ends, so the title the job applications
// copy is the one the rename's trigger (migration 0007) then finds them
// with, never a stale one; and a rename (upsertJobs) locks the jobs it
// updates in id order too, so the two wait for each other instead of each
// holding a job the other wants.
//
// Each reference is a probe of the account's reference index, as in
// existingJobsQuery and for the same reason: with reference_number =
// ANY($2), an account the table's statistics do not know is planned as
// one row, so every application read all the jobs the account ever had:
// 3.2-3.8 ms for two references among 21,000 jobs, growing with each job
// posted, against 0.06-0.1 ms for the probes (EXPLAIN ANALYZE, the data of
// TestIntakeJobLookupForAnAccountTheStatisticsMiss). The ids found are an
// array, so the locking read probes the primary key with them.
const appliedJobsQuery = `
	SELECT j.id, j.reference_number, lower(j.title) AS title_lower FROM jobs j
	 WHERE j.id = ANY (ARRAY(
	       SELECT f.id FROM unnest($2::text[]) AS r(ref)
	        CROSS JOIN LATERAL (
	              SELECT id FROM jobs WHERE account_id = $1 AND reference_number = r.ref LIMIT 1) f))
	 ORDER BY j.id FOR SHARE`

// lockAppliedJobs finds and locks every job of account the applications at
// positions name (appliedJobsQuery), failing with an *UnknownJobError for
// the first reference, in the order given, that the account has no job
// with.
func lockAppliedJobs(ctx context.Context, tx *sqlx.Tx, account int64, apps []Application, positions []int) (map[string]appliedJob, error) {
	var refs []string
	for _, i := range positions {
		for _, j := range apps[i].JobApps {
			refs = append(refs, j.Reference)
		}
	}
	if len(refs) == 0 {
		return nil, nil
	}
	slices.Sort(refs)
	refs = slices.Compact(refs)
	var found []struct {
		ID         int64  `db:"id"`
		Ref        string `db:"reference_number"`
		TitleLower string `db:"title_lower"`
	}
	if err := tx.SelectContext(ctx, &found, appliedJobsQuery, account, stringArray(refs)); err != nil {
		return nil, fmt.Errorf("lock applied jobs: %w", err)
	}
	jobs := make(map[string]appliedJob, len(found))
	for _, f := range found {
		jobs[f.Ref] = appliedJob{id: f.ID, titleLower: f.TitleLower}
	}
	for _, i := range positions {
		for j, ja := range apps[i].JobApps {
			if _, ok := jobs[ja.Reference]; !ok {
				return nil, &UnknownJobError{Index: i, JobIndex: j, Reference: ja.Reference}
			}
		}
	}
	return jobs, nil
}

// intakeBatch is the applications of a batch to one account, being saved
// round by round.
type intakeBatch struct {
	account int64
	apps    []Application
	// keys are the applications' case-folded e-mails, by position.
	keys []string
	// jobs are the jobs the applications name, by reference.
	jobs map[string]appliedJob
	// drivers are the driver ids by case-folded e-mail, found so far.
	drivers map[string]int64
	// repeat marks the applications that were the same as the last one
	// their account's row took.
	repeat []bool
}

// save writes the applications at positions round, each of a different
// driver or account.
func (b *intakeBatch) save(ctx context.Context, tx *sqlx.Tx, round []int) error {
	if err := b.findDrivers(ctx, tx, round); err != nil {
		return err
	}
	written, err := b.saveApplications(ctx, tx, round)
	if err != nil {
		return err
	}
	if err := b.replaceEmployment(ctx, tx, written); err != nil {
		return err
	}
	return b.saveJobApplications(ctx, tx, round, written)
}

// findDriversQuery adds the people of the case-folded e-mails $1 that are
// new and returns the ids of all of them. An existing row is locked
// against deletion until the transaction ends: a driver erased by hand
// between the lookup and the application's insert would otherwise fail the
// insert on its foreign key. The statement's snapshot does not see a row
// another transaction committed while the insert waited on it; that e-mail
// is missing from the answer and looked up again.
const findDriversQuery = `
	WITH added AS (
		INSERT INTO drivers (email_key) SELECT k FROM unnest($1::text[]) AS u(k) ORDER BY k
		ON CONFLICT (email_key) DO NOTHING RETURNING id, email_key)
	SELECT id, email_key FROM added
	UNION ALL
	SELECT id, email_key FROM (
		SELECT id, email_key FROM drivers WHERE email_key = ANY($1::text[]) ORDER BY email_key FOR KEY SHARE) existing`

// driverOf is the driver id of the application at position i, once found.
func (b *intakeBatch) driverOf(i int) int64 { return b.drivers[b.keys[i]] }

// findDrivers finds, adding them when new, the drivers of the round's
// applications not found in an earlier round.
func (b *intakeBatch) findDrivers(ctx context.Context, tx *sqlx.Tx, round []int) error {
	var keys []string
	for _, i := range round {
		if k := b.keys[i]; b.drivers[k] == 0 {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	// An e-mail is missed only when another transaction inserted or
	// deleted that very driver while the statement ran, so each miss means
	// someone else made progress. Three misses in a row did happen when
	// five intakes of the same drivers raced hand deletes of them (a
	// delete, then another intake's insert, then a delete again); ten is
	// far past what churn of one row produces, yet still bounded.
	const attempts = 10
	for range attempts {
		if len(keys) == 0 {
			return nil
		}
		var found []struct {
			ID  int64  `db:"id"`
			Key string `db:"email_key"`
		}
		if err := tx.SelectContext(ctx, &found, findDriversQuery, stringArray(keys)); err != nil {
			return fmt.Errorf("save drivers: %w", err)
		}
		for _, f := range found {
			b.drivers[f.Key] = f.ID
		}
		keys = slices.DeleteFunc(keys, func(k string) bool { return b.drivers[k] != 0 })
	}
	if len(keys) > 0 {
		return fmt.Errorf("save drivers: %d deleted by other transactions %d times in a row", len(keys), attempts)
	}
	return nil
}

// saveApplications writes the account's row of each application's driver
// (saveApplicationsSQL) and returns the rows it wrote, by driver, each with
// the position of its application; it marks the repeats.
func (b *intakeBatch) saveApplications(ctx context.Context, tx *sqlx.Tx, round []int) (map[int64]int, error) {
	cols := newApplicationColumns(len(round))
	at := make(map[int64]int, len(round))
	for _, i := range round {
		a := b.apps[i]
		id := b.driverOf(i)
		hash, err := applicationHash(a)
		if err != nil {
			return nil, err
		}
		cols.add(a, b.keys[i], id, hash, len(a.JobApps) > 0)
		at[id] = i
	}
	rows, err := tx.QueryContext(ctx, saveApplicationsSQL, cols.params(b.account)...)
	if err != nil {
		return nil, fmt.Errorf("save applications: %w", err)
	}
	defer rows.Close()
	written := make(map[int64]int, len(round))
	for rows.Next() {
		var driver int64
		var again bool
		if err := rows.Scan(&driver, &again); err != nil {
			return nil, fmt.Errorf("save applications: %w", err)
		}
		i := at[driver]
		written[driver] = i
		b.repeat[i] = again
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("save applications: %w", err)
	}
	return written, nil
}

// applicationColumns are a round's applications as the arrays
// saveApplicationsSQL unnests: driver, sent, the profile in profileFields'
// order, the three keys, the hash and whether it names jobs.
type applicationColumns struct {
	drivers    []int64
	sent       []string
	profile    [][]any // by column of profileFields
	emailKeys  []string
	firstKeys  []string
	lastKeys   []string
	hashes     []string
	hasJobApps []bool
}

func newApplicationColumns(n int) *applicationColumns {
	c := &applicationColumns{profile: make([][]any, len(profileFields))}
	for i := range c.profile {
		c.profile[i] = make([]any, 0, n)
	}
	return c
}

func (c *applicationColumns) add(a Application, emailKey string, driverID int64, hash []byte, hasJobApps bool) {
	p := a.Profile
	c.drivers = append(c.drivers, driverID)
	c.sent = append(c.sent, a.Sent.UTC().Format(time.RFC3339Nano))
	for i, v := range profileArgs(&p) {
		c.profile[i] = append(c.profile[i], v)
	}
	c.emailKeys = append(c.emailKeys, emailKey)
	c.firstKeys, c.lastKeys = append(c.firstKeys, FoldCase(p.FirstName)), append(c.lastKeys, FoldCase(p.LastName))
	c.hashes, c.hasJobApps = append(c.hashes, hex.EncodeToString(hash)), append(c.hasJobApps, hasJobApps)
}

// params are the statement's arguments in its parameters' order.
func (c *applicationColumns) params(account int64) []any {
	out := []any{account, pq.Array(c.drivers), stringArray(c.sent)}
	for i, f := range profileFields {
		out = append(out, profileColumnArray(f.sqlType, c.profile[i]))
	}
	return append(out, stringArray(c.emailKeys), stringArray(c.firstKeys), stringArray(c.lastKeys),
		stringArray(c.hashes), boolArray(c.hasJobApps))
}

// profileColumnArray is one profile column as an array parameter; a text
// array (endorsements) goes as its codes joined by commas, which hold none.
func profileColumnArray(sqlType string, values []any) any {
	switch sqlType {
	case "boolean":
		out := make([]bool, len(values))
		for i, v := range values {
			out[i] = v.(bool)
		}
		return boolArray(out)
	case "integer":
		out := make([]sql.NullInt64, len(values))
		for i, v := range values {
			if p := v.(*int32); p != nil {
				out[i] = sql.NullInt64{Int64: int64(*p), Valid: true}
			}
		}
		return nullInt64Array(out)
	}
	out := make([]sql.NullString, len(values))
	for i, v := range values {
		switch v := v.(type) {
		case string:
			out[i] = sql.NullString{String: v, Valid: true}
		case *string:
			out[i] = nullText(v)
		case pq.StringArray:
			out[i] = sql.NullString{String: strings.Join(v, ","), Valid: v != nil}
		default:
			panic(fmt.Sprintf("store: profile value of type %T", v))
		}
	}
	return nullStringArray(out)
}

// saveApplicationsSQL writes the account's ($1) row of each application
// of a round. An existing row takes it only when it is at least as new as
// the row's sent, so the newest application to that account wins
// whichever arrives first, and an older one leaves the row as it is (but
// for the mark of its jobs, in saveJobApplications). It returns the rows it
// wrote, each saying whether the row's last application had the same hash:
// the same application again. The upsert compares against the row it
// locked, the latest committed one, so of two identical submissions racing
// each other the second is the repeat. Rows are written in driver order,
// the order other batches lock them in; each ZIP centroid is a probe of
// its key (a join would be planned for a hundred applications, and read
// the whole table for one).
var saveApplicationsSQL = func() string {
	names := []string{"driver_id", "sent"}
	params := []string{"$2::bigint[]", "$3::timestamptz[]"}
	fields := []string{"u.driver_id", "u.sent"}
	var cols, vals []string
	sets := []string{"sent = EXCLUDED.sent",
		// SET reads the row as it was: received_again compares the old hash.
		"received_again = applications.received_hash IS NOT DISTINCT FROM EXCLUDED.received_hash",
		"received_hash = EXCLUDED.received_hash",
		"has_job_apps = applications.has_job_apps OR EXCLUDED.has_job_apps"}
	for _, f := range profileFields {
		n := len(params) + 2
		switch f.sqlType {
		case "text[]":
			params = append(params, fmt.Sprintf("$%d::text[]", n))
			fields = append(fields, fmt.Sprintf("string_to_array(u.%s, ',') AS %s", f.column, f.column))
		default:
			params = append(params, fmt.Sprintf("$%d::%s[]", n, f.sqlType))
			fields = append(fields, "u."+f.column)
		}
		names = append(names, f.column)
		if !isSearchColumn(f.column) { // those come with searchValues
			cols, vals = append(cols, f.column), append(vals, "p."+f.column)
			sets = append(sets, f.column+" = EXCLUDED."+f.column)
		}
	}
	for _, k := range []struct{ name, sqlType string }{
		{"email_key", "text"}, {"first_name_key", "text"}, {"last_name_key", "text"},
		{"received_hash", "text"}, {"has_job_apps", "boolean"},
	} {
		names, fields = append(names, k.name), append(fields, "u."+k.name)
		params = append(params, fmt.Sprintf("$%d::%s[]", len(params)+2, k.sqlType))
	}
	for _, c := range strings.Split(searchColumns, ",") {
		c = strings.TrimSpace(c)
		sets = append(sets, c+" = EXCLUDED."+c)
	}
	return `WITH p AS (
		SELECT ` + strings.Join(fields, ", ") + `
		  FROM unnest(` + strings.Join(params, ", ") + `) AS u(` + strings.Join(names, ", ") + `))
		INSERT INTO applications (account_id, driver_id, sent, ` + strings.Join(cols, ", ") + `, ` + searchColumns + `,
		                          received_hash, has_job_apps)
		SELECT $1, p.driver_id, p.sent, ` + strings.Join(vals, ", ") + `, ` + searchValues + `,
		       decode(p.received_hash, 'hex'), p.has_job_apps
		  FROM p LEFT JOIN LATERAL (
		       SELECT latitude, longitude FROM zip_centroids WHERE zip = left(p.zip, 5)) z ON true
		 ORDER BY p.driver_id
		ON CONFLICT (account_id, driver_id) DO UPDATE SET ` + strings.Join(sets, ", ") + `
		WHERE applications.sent <= EXCLUDED.sent
		RETURNING driver_id, received_again`
}()

// applicationHash identifies an application's content: the same driver
// sending the same application again (a retried call, a file imported
// twice) has the same hash; any change, a job applied to included, has
// another.
func applicationHash(a Application) ([]byte, error) {
	b, err := json.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("hash application: %w", err)
	}
	sum := sha256.Sum256(b)
	return sum[:], nil
}

// isSearchColumn reports whether a profile column is also one of
// searchColumns, with the same value.
func isSearchColumn(c string) bool { return c == "state" || c == "driver_type" || c == "endorsements" }

// replaceEmployment replaces the employment history of the rows the round
// wrote with their applications'.
func (b *intakeBatch) replaceEmployment(ctx context.Context, tx *sqlx.Tx, written map[int64]int) error {
	if len(written) == 0 {
		return nil
	}
	drivers := slices.Sorted(maps.Keys(written))
	var eDrivers, positions []int64
	var company, state, phone, start []string
	var end []sql.NullString
	for _, d := range drivers {
		for n, e := range b.apps[written[d]].Employment {
			eDrivers, positions = append(eDrivers, d), append(positions, int64(n+1))
			company, state, phone, start = append(company, e.Company), append(state, e.State), append(phone, e.Phone), append(start, e.StartDate)
			end = append(end, nullText(e.EndDate))
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM employment_history WHERE account_id = $1 AND driver_id = ANY($2::bigint[])`,
		b.account, pq.Array(drivers)); err != nil {
		return fmt.Errorf("replace employment history: %w", err)
	}
	if len(positions) == 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO employment_history (account_id, driver_id, position, company, state, phone, start_date, end_date)
		SELECT $1, u.* FROM unnest($2::bigint[], $3::integer[], $4::text[], $5::text[], $6::text[], $7::date[], $8::date[]) AS u`,
		b.account, pq.Array(eDrivers), pq.Array(positions), stringArray(company), stringArray(state),
		stringArray(phone), stringArray(start), nullStringArray(end)); err != nil {
		return fmt.Errorf("insert employment history: %w", err)
	}
	return nil
}

// saveJobApplications stores the job applications of the round's
// applications, one row per driver and job (the first mention in an
// application wins; a later application's replaces it), with the title
// each job had when locked; and marks as naming jobs the rows of
// applications the round did not write (older than the row's): those it
// wrote were marked as they were written.
func (b *intakeBatch) saveJobApplications(ctx context.Context, tx *sqlx.Tx, round []int, written map[int64]int) error {
	var drivers, jobIDs []int64
	var direct []bool
	var created, titles []string
	var older []int64
	for _, i := range round {
		a := b.apps[i]
		if len(a.JobApps) == 0 {
			continue
		}
		driver := b.driverOf(i)
		if _, ok := written[driver]; !ok {
			older = append(older, driver)
		}
		seen := make(map[int64]bool, len(a.JobApps))
		for _, ja := range a.JobApps {
			job := b.jobs[ja.Reference]
			if seen[job.id] {
				continue
			}
			seen[job.id] = true
			drivers, jobIDs, titles = append(drivers, driver), append(jobIDs, job.id), append(titles, job.titleLower)
			direct, created = append(direct, ja.IsDirectApp), append(created, ja.CreatedAt.UTC().Format(time.RFC3339Nano))
		}
	}
	if len(jobIDs) == 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO job_applications (account_id, driver_id, job_id, is_direct_app, created_at, job_title_lower)
		SELECT $1, u.* FROM unnest($2::bigint[], $3::bigint[], $4::boolean[], $5::timestamptz[], $6::text[]) AS u
		 ORDER BY 2, 3
		ON CONFLICT (driver_id, job_id) DO UPDATE SET is_direct_app = EXCLUDED.is_direct_app, created_at = EXCLUDED.created_at,
			job_title_lower = EXCLUDED.job_title_lower`,
		b.account, pq.Array(drivers), pq.Array(jobIDs), boolArray(direct), stringArray(created), stringArray(titles)); err != nil {
		return fmt.Errorf("save job applications: %w", err)
	}
	if len(older) == 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE applications SET has_job_apps = true
		 WHERE account_id = $1 AND driver_id = ANY($2::bigint[]) AND NOT has_job_apps`,
		b.account, pq.Array(older)); err != nil {
		return fmt.Errorf("mark job applications: %w", err)
	}
	return nil
}
