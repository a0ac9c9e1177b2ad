package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/truckjobs/jobboard/internal/rules"
)

// DriverBasics are the profile fields the drivers list shows.
type DriverBasics struct {
	Email      string  `db:"email"`
	FirstName  string  `db:"first_name"`
	LastName   string  `db:"last_name"`
	Address    string  `db:"address"`
	Address2   *string `db:"address2"`
	City       string  `db:"city"`
	State      string  `db:"state"`
	Zip        string  `db:"zip"`
	Phone      string  `db:"phone"`
	DriverType string  `db:"driver_type"`
	Experience string  `db:"experience"`
}

// DriverProfile is a driver's person-level data, validated. Optional text
// keeps the difference between absent (nil) and empty.
type DriverProfile struct {
	DriverBasics
	Endorsements            pq.StringArray `db:"endorsements"` // codes in T, H, N, X order
	FreightExperience       *string        `db:"freight_experience"`
	FreightPreferences      *string        `db:"freight_preferences"`
	LicenseState            *string        `db:"license_state"`
	PreferredAssignments    *string        `db:"preferred_assignments"`
	PreferredRegions        *string        `db:"preferred_regions"`
	HasTeam                 *string        `db:"has_team"`
	LicenseClass            *string        `db:"license_class"`
	DateOfBirth             *string        `db:"date_of_birth"` // YYYY-MM-DD
	TwicCard                *string        `db:"twic_card"`
	Accidents               *string        `db:"accidents"`
	MovingViolations        *string        `db:"moving_violations"`
	LastLicenseSuspension   *int32         `db:"last_license_suspension"`
	LastDUI                 *int32         `db:"last_dui"`
	InterestedLeasePurchase *string        `db:"interested_lease_purchase"`
	Teams                   *string        `db:"teams"`
	TrucksOwned             *string        `db:"trucks_owned"`
	IsPremium               bool           `db:"is_premium"`
}

// Employment is one past employer; dates are YYYY-MM-DD.
type Employment struct {
	Company   string  `db:"company"`
	State     string  `db:"state"`
	Phone     string  `db:"phone"`
	StartDate string  `db:"start_date"`
	EndDate   *string `db:"end_date"`
}

// JobApplicationInput names one of the account's jobs by reference.
type JobApplicationInput struct {
	Reference   string
	IsDirectApp bool
	CreatedAt   time.Time
}

// Application is a validated driver application to one account.
type Application struct {
	AccountID  int64
	Sent       time.Time
	Profile    DriverProfile
	Employment []Employment
	JobApps    []JobApplicationInput
}

// UnknownJobError is an application naming a job the account does not have.
type UnknownJobError struct {
	Index     int // the application's position in the batch
	JobIndex  int // the job application's position in the application
	Reference string
}

func (e *UnknownJobError) Error() string {
	return fmt.Sprintf("job_applications[%d].reference: account has no job with reference %q", e.JobIndex, e.Reference)
}

// The applications columns that copy the profile's searchable fields in the
// form the filters compare, and the expressions computing them from a
// profile p (with the keys email_key, first_name_key, last_name_key) joined
// to zip_centroids z.
const (
	searchColumns = `state, driver_type, email_key, phone_digits, first_name_key, last_name_key,
		experience_years, endorsements, latitude, longitude`
	searchValues = `p.state, p.driver_type, p.email_key,
		regexp_replace(regexp_replace(p.phone, '\D', '', 'g'), '^1(\d{10})$', '\1'),
		p.first_name_key, p.last_name_key,
		CASE WHEN p.experience ~ '^\d+(\.\d+)?$' THEN p.experience::numeric END,
		p.endorsements, z.latitude, z.longitude`
)

// FoldCase is the case folding of e-mail and name keys and of the filters
// that compare with them.
func FoldCase(s string) string { return strings.ToLower(s) }

// profileFields are the profile columns of applications (migration 0008)
// with their types, in DriverProfile's order; state, driver_type and
// endorsements are also filter columns.
var profileFields = []struct{ column, sqlType string }{
	{"email", "text"}, {"first_name", "text"}, {"last_name", "text"}, {"address", "text"},
	{"address2", "text"}, {"city", "text"}, {"state", "text"}, {"zip", "text"}, {"phone", "text"},
	{"driver_type", "text"}, {"experience", "text"}, {"endorsements", "text[]"},
	{"freight_experience", "text"}, {"freight_preferences", "text"}, {"license_state", "text"},
	{"preferred_assignments", "text"}, {"preferred_regions", "text"}, {"has_team", "text"},
	{"license_class", "text"}, {"date_of_birth", "date"}, {"twic_card", "text"}, {"accidents", "text"},
	{"moving_violations", "text"}, {"last_license_suspension", "integer"}, {"last_dui", "integer"},
	{"interested_lease_purchase", "text"}, {"teams", "text"}, {"trucks_owned", "text"},
	{"is_premium", "boolean"},
}

// profileColumns lists profileFields' columns, each prefixed with prefix.
func profileColumns(prefix string) string {
	cols := make([]string, len(profileFields))
	for i, f := range profileFields {
		cols[i] = prefix + f.column
	}
	return strings.Join(cols, ", ")
}

// profileArgs are the values of profileFields, in order.
func profileArgs(p *DriverProfile) []any {
	return []any{p.Email, p.FirstName, p.LastName, p.Address, p.Address2, p.City, p.State, p.Zip, p.Phone,
		p.DriverType, p.Experience, p.Endorsements, p.FreightExperience, p.FreightPreferences, p.LicenseState,
		p.PreferredAssignments, p.PreferredRegions, p.HasTeam, p.LicenseClass, p.DateOfBirth, p.TwicCard,
		p.Accidents, p.MovingViolations, p.LastLicenseSuspension, p.LastDUI, p.InterestedLeasePurchase,
		p.Teams, p.TrucksOwned, p.IsPremium}
}

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
	saved := SavedApplications{IDs: make([]int64, len(apps))}
	if err := lockAppliedJobs(ctx, t.tx, apps); err != nil {
		return SavedApplications{}, err
	}
	for i, a := range apps {
		id, repeat, err := saveApplication(ctx, t.tx, a)
		var unknown *UnknownJobError
		if errors.As(err, &unknown) {
			unknown.Index = i
		}
		if err != nil {
			return SavedApplications{}, err
		}
		saved.IDs[i] = id
		if !repeat {
			saved.Received, saved.ReceivedIDs = append(saved.Received, a), append(saved.ReceivedIDs, id)
		}
	}
	t.compact = append(t.compact, accountsOf(apps)...)
	return saved, nil
}

// lockAppliedJobs takes FOR SHARE, in id order, the locks on every job
// the batch's applications name, which saveJobApplications would take
// application by application. A rename (upsertJobs) locks the jobs it
// updates in id order too, so the two wait for each other instead of each
// holding a job the other wants, the deadlock that taking them in the
// batch's order made common.
func lockAppliedJobs(ctx context.Context, tx *sqlx.Tx, apps []Application) error {
	var accounts []int64
	var refs []string
	for _, a := range apps {
		for _, j := range a.JobApps {
			accounts, refs = append(accounts, a.AccountID), append(refs, j.Reference)
		}
	}
	if len(refs) == 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `SELECT j.id FROM jobs j
		WHERE (j.account_id, j.reference_number) IN (SELECT * FROM unnest($1::bigint[], $2::text[]))
		ORDER BY j.id FOR SHARE`, pq.Array(accounts), pq.StringArray(refs)); err != nil {
		return fmt.Errorf("lock applied jobs: %w", err)
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

// saveApplicationSQL writes the account's row from one application: the
// profile given as $4 onwards, in profileFields' order, then its three keys
// and the application's hash. An existing row takes it only when it is at
// least as new as the row's sent, so the newest application to that account
// wins whichever arrives first, and an older one leaves the row as it is.
// It returns a row only when it wrote, saying whether the row's last
// application had the same hash: the same application again. The upsert
// compares against the row it locked, the latest committed one, so of two
// identical submissions racing each other the second is the repeat.
var saveApplicationSQL = func() string {
	params := make([]string, 0, len(profileFields)+4)
	var cols, vals []string
	sets := []string{"sent = EXCLUDED.sent",
		// SET reads the row as it was: received_again compares the old hash.
		"received_again = applications.received_hash IS NOT DISTINCT FROM EXCLUDED.received_hash",
		"received_hash = EXCLUDED.received_hash"}
	for i, f := range profileFields {
		params = append(params, fmt.Sprintf("$%d::%s AS %s", i+4, f.sqlType, f.column))
		if !isSearchColumn(f.column) { // those come with searchValues
			cols, vals = append(cols, f.column), append(vals, "p."+f.column)
			sets = append(sets, f.column+" = EXCLUDED."+f.column)
		}
	}
	n := len(profileFields) + 4
	params = append(params, fmt.Sprintf("$%d::text AS email_key, $%d::text AS first_name_key, $%d::text AS last_name_key, $%d::bytea AS received_hash",
		n, n+1, n+2, n+3))
	for _, c := range strings.Split(searchColumns, ",") {
		c = strings.TrimSpace(c)
		sets = append(sets, c+" = EXCLUDED."+c)
	}
	return `WITH p AS (SELECT ` + strings.Join(params, ", ") + `)
		INSERT INTO applications (account_id, driver_id, sent, ` + strings.Join(cols, ", ") + `, ` + searchColumns + `, received_hash)
		SELECT $1, $2, $3, ` + strings.Join(vals, ", ") + `, ` + searchValues + `, p.received_hash
		  FROM p LEFT JOIN zip_centroids z ON z.zip = left(p.zip, 5)
		ON CONFLICT (account_id, driver_id) DO UPDATE SET ` + strings.Join(sets, ", ") + `
		WHERE applications.sent <= EXCLUDED.sent
		RETURNING received_again`
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

// driverID returns the id of the person with this case-folded e-mail,
// adding the person when new. An existing row is locked against deletion
// until the transaction ends: a driver erased by hand between the lookup
// and the application's insert would otherwise fail the insert on its
// foreign key. A row deleted just before the lock is taken is added again.
func driverID(ctx context.Context, tx *sqlx.Tx, key string) (int64, error) {
	const attempts = 3
	var id int64
	for range attempts {
		err := tx.GetContext(ctx, &id, `INSERT INTO drivers (email_key) VALUES ($1)
			ON CONFLICT (email_key) DO NOTHING RETURNING id`, key)
		if errors.Is(err, sql.ErrNoRows) {
			err = tx.GetContext(ctx, &id, `SELECT id FROM drivers WHERE email_key = $1 FOR KEY SHARE`, key)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			if err != nil {
				return 0, fmt.Errorf("save driver: %w", err)
			}
			return id, nil
		}
	}
	return 0, fmt.Errorf("save driver: deleted by another transaction %d times in a row", attempts)
}

// saveApplication stores one application and returns its driver's id, and
// whether it repeats the last one the account's row took.
func saveApplication(ctx context.Context, tx *sqlx.Tx, a Application) (id int64, repeat bool, err error) {
	p := a.Profile
	key := FoldCase(p.Email)
	if id, err = driverID(ctx, tx, key); err != nil {
		return 0, false, err
	}
	args := append([]any{a.AccountID, id, a.Sent}, profileArgs(&p)...)
	hash, err := applicationHash(a)
	if err != nil {
		return 0, false, err
	}
	args = append(args, key, FoldCase(p.FirstName), FoldCase(p.LastName), hash)
	err = tx.GetContext(ctx, &repeat, saveApplicationSQL, args...)
	written := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, false, fmt.Errorf("save application: %w", err)
	}
	if written {
		if err := replaceEmployment(ctx, tx, a.AccountID, id, a.Employment); err != nil {
			return 0, false, err
		}
	}
	if err := saveJobApplications(ctx, tx, a.AccountID, id, a.JobApps); err != nil {
		return 0, false, err
	}
	return id, repeat, nil
}

func replaceEmployment(ctx context.Context, tx *sqlx.Tx, accountID, driverID int64, history []Employment) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM employment_history WHERE account_id = $1 AND driver_id = $2`,
		accountID, driverID); err != nil {
		return fmt.Errorf("replace employment history: %w", err)
	}
	if len(history) == 0 {
		return nil
	}
	var company, state, phone, start []string
	var end []sql.NullString
	for _, e := range history {
		company, state, phone, start = append(company, e.Company), append(state, e.State), append(phone, e.Phone), append(start, e.StartDate)
		end = append(end, nullText(e.EndDate))
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO employment_history (account_id, driver_id, position, company, state, phone, start_date, end_date)
		SELECT $1, $2, u.ord, u.company, u.state, u.phone, u.start_date::date, u.end_date::date
		  FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
		       WITH ORDINALITY AS u(company, state, phone, start_date, end_date, ord)`,
		accountID, driverID, pq.Array(company), pq.Array(state), pq.Array(phone), pq.Array(start), pq.Array(end))
	if err != nil {
		return fmt.Errorf("insert employment history: %w", err)
	}
	return nil
}

// shareJobsByReference finds the account's jobs with the references $2,
// deleted ones included (historical applications may name them), and
// locks them FOR SHARE: that holds back a rename of these jobs until the
// transaction ends, so the title the job applications copy is the one the
// rename's trigger (migration 0007) then finds them with, never a stale
// one.
//
// Each reference is a probe of the account's reference index, as in
// existingJobsQuery and for the same reason: with reference_number =
// ANY($2), an account the table's statistics do not know is planned as
// one row, so every application read all the jobs the account ever had:
// 3.2-3.8 ms for two references among 21,000 jobs, growing with each job
// posted, against 0.06-0.1 ms for the probes (EXPLAIN ANALYZE, the data of
// TestIntakeJobLookupForAnAccountTheStatisticsMiss).
var shareJobsByReference = `
	SELECT j.id, j.reference_number FROM unnest($2::text[]) AS r(ref)
	 CROSS JOIN LATERAL (
	       SELECT id, reference_number FROM jobs
	        WHERE account_id = $1 AND reference_number = r.ref LIMIT 1 FOR SHARE) j`

func saveJobApplications(ctx context.Context, tx *sqlx.Tx, accountID, driverID int64, apps []JobApplicationInput) error {
	if len(apps) == 0 {
		return nil
	}
	refs := make([]string, len(apps))
	for i, a := range apps {
		refs[i] = a.Reference
	}
	// Sorted and once each: the jobs are locked in the order given.
	slices.Sort(refs)
	refs = slices.Compact(refs)
	var found []struct {
		ID  int64  `db:"id"`
		Ref string `db:"reference_number"`
	}
	if err := tx.SelectContext(ctx, &found, shareJobsByReference, accountID, pq.StringArray(refs)); err != nil {
		return fmt.Errorf("resolve job references: %w", err)
	}
	idOf := map[string]int64{}
	for _, f := range found {
		idOf[f.Ref] = f.ID
	}
	var jobIDs []int64
	var direct []bool
	var created []time.Time
	seen := map[int64]bool{}
	for i, a := range apps {
		id, ok := idOf[a.Reference]
		if !ok {
			return &UnknownJobError{JobIndex: i, Reference: a.Reference}
		}
		if seen[id] { // one row per job: the first mention wins
			continue
		}
		seen[id] = true
		jobIDs, direct, created = append(jobIDs, id), append(direct, a.IsDirectApp), append(created, a.CreatedAt)
	}
	createdText := make([]string, len(created))
	for i, c := range created {
		createdText[i] = c.UTC().Format(time.RFC3339Nano)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO job_applications (account_id, driver_id, job_id, is_direct_app, created_at, job_title_lower)
		SELECT $1, $2, u.job_id, u.direct, u.created::timestamptz, lower(j.title)
		  FROM unnest($3::bigint[], $4::boolean[], $5::text[]) AS u(job_id, direct, created)
		  JOIN jobs j ON j.id = u.job_id
		ON CONFLICT (driver_id, job_id) DO UPDATE SET is_direct_app = EXCLUDED.is_direct_app, created_at = EXCLUDED.created_at,
			job_title_lower = EXCLUDED.job_title_lower`,
		accountID, driverID, pq.Array(jobIDs), pq.Array(direct), pq.Array(createdText)); err != nil {
		return fmt.Errorf("save job applications: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE applications SET has_job_apps = true WHERE account_id = $1 AND driver_id = $2 AND NOT has_job_apps`,
		accountID, driverID); err != nil {
		return fmt.Errorf("mark job applications: %w", err)
	}
	return nil
}

// SeedApplications bulk-loads applications to one account that has none
// from these e-mails yet: a handful of statements whatever the count. It is
// for synthetic demo and benchmark data; real applications go through
// SaveApplications, which keeps the newest of a person's applications.
func (s *Store) SeedApplications(ctx context.Context, accountID int64, apps []Application) error {
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		if err := stageSeedProfiles(ctx, tx, apps); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO drivers (email_key) SELECT email_key FROM seed
			ON CONFLICT (email_key) DO NOTHING`); err != nil {
			return fmt.Errorf("seed: drivers: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `
			INSERT INTO applications (account_id, driver_id, sent, email, first_name, last_name, address, city,
			                          zip, phone, experience, license_state, license_class, date_of_birth,
			                          `+searchColumns+`)
			SELECT $1, d.id, p.sent, p.email, p.first_name, p.last_name, p.address, p.city, p.zip, p.phone,
			       p.experience, p.license_state, p.license_class, p.date_of_birth, `+searchValues+`
			  FROM seed p JOIN drivers d ON d.email_key = p.email_key
			  LEFT JOIN zip_centroids z ON z.zip = left(p.zip, 5)`, accountID); err != nil {
			return fmt.Errorf("seed: applications: %w", err)
		}
		return seedJobApplications(ctx, tx, accountID, apps)
	})
	if err != nil {
		return err
	}
	// A seed writes a few rows per value in all: fold them now.
	return s.CompactApplicationCounts(ctx, accountID)
}

// stageSeedProfiles copies the profiles of apps into the temporary table
// seed, dropped at commit, as searchValues reads profiles p.
func stageSeedProfiles(ctx context.Context, tx *sqlx.Tx, apps []Application) error {
	var cols [16][]string
	var sent []time.Time
	var endorsements []string
	for _, a := range apps {
		p := a.Profile
		for i, v := range []string{p.Email, p.FirstName, p.LastName, p.Address, p.City, p.State, p.Zip, p.Phone,
			p.DriverType, p.Experience, rules.OrEmpty(p.LicenseState), rules.OrEmpty(p.LicenseClass), rules.OrEmpty(p.DateOfBirth),
			FoldCase(p.Email), FoldCase(p.FirstName), FoldCase(p.LastName)} {
			cols[i] = append(cols[i], v)
		}
		sent = append(sent, a.Sent)
		endorsements = append(endorsements, strings.Join(p.Endorsements, ","))
	}
	args := []any{pq.Array(sent), pq.Array(endorsements)}
	for _, c := range cols {
		args = append(args, pq.Array(c[:]))
	}
	if _, err := tx.ExecContext(ctx, `
		CREATE TEMP TABLE seed ON COMMIT DROP AS
		SELECT sent, string_to_array(endorsements, ',') AS endorsements, email, first_name, last_name,
		       address, city, state, zip, phone, driver_type, experience, license_state, license_class,
		       NULLIF(date_of_birth, '')::date AS date_of_birth, email_key, first_name_key, last_name_key
		  FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
		              $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[],
		              $13::text[], $14::text[], $15::text[], $16::text[], $17::text[], $18::text[])
		    AS u(sent, endorsements, email, first_name, last_name, address, city, state, zip, phone,
		         driver_type, experience, license_state, license_class, date_of_birth,
		         email_key, first_name_key, last_name_key);
		`, args...); err != nil {
		return fmt.Errorf("seed: stage: %w", err)
	}
	return nil
}

// seedJobApplications stores the job applications of apps, by reference,
// for the drivers that have them.
func seedJobApplications(ctx context.Context, tx *sqlx.Tx, accountID int64, apps []Application) error {
	var drivers, refs []string
	var direct []bool
	var created []time.Time
	for _, a := range apps {
		for _, j := range a.JobApps {
			drivers, refs = append(drivers, FoldCase(a.Profile.Email)), append(refs, j.Reference)
			direct, created = append(direct, j.IsDirectApp), append(created, j.CreatedAt)
		}
	}
	if len(refs) == 0 {
		return nil
	}
	// As in saveJobApplications: no rename of these jobs until commit.
	if _, err := tx.ExecContext(ctx, `SELECT 1 FROM jobs WHERE account_id = $1 AND reference_number = ANY($2::text[]) FOR SHARE`,
		accountID, pq.Array(refs)); err != nil {
		return fmt.Errorf("seed: lock jobs: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `
		INSERT INTO job_applications (account_id, driver_id, job_id, is_direct_app, created_at, job_title_lower)
		SELECT $1, d.id, j.id, u.direct, u.created, lower(j.title)
		  FROM unnest($2::text[], $3::text[], $4::boolean[], $5::timestamptz[]) AS u(email, ref, direct, created)
		  JOIN drivers d ON d.email_key = u.email
		  JOIN jobs j ON j.account_id = $1 AND j.reference_number = u.ref
		ON CONFLICT DO NOTHING`, accountID, pq.Array(drivers), pq.Array(refs), pq.Array(direct), pq.Array(created)); err != nil {
		return fmt.Errorf("seed: job applications: %w", err)
	}
	// Only the batch's drivers, found by e-mail: a condition over the
	// whole account is planned from the statistics of before the seed,
	// which for a new account count almost no rows, and its nested loop
	// over the account's applications then ran for hours.
	_, err := tx.ExecContext(ctx, `UPDATE applications a SET has_job_apps = true
		  FROM drivers d
		 WHERE d.email_key = ANY($2::text[]) AND a.account_id = $1 AND a.driver_id = d.id AND NOT a.has_job_apps
		   AND EXISTS (SELECT 1 FROM job_applications ja WHERE ja.account_id = $1 AND ja.driver_id = d.id)`,
		accountID, pq.Array(drivers))
	if err != nil {
		return fmt.Errorf("seed: mark job applications: %w", err)
	}
	return nil
}
