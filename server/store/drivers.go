package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
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
	Reference string
}

func (e *UnknownJobError) Error() string {
	return fmt.Sprintf("job_applications: account has no job with reference %q", e.Reference)
}

// The applications columns that copy the driver's searchable fields, and the
// expressions computing them from drivers d joined to zip_centroids z.
const (
	searchColumns = `state, driver_type, email_lower, phone_digits, first_name_lower, last_name_lower,
		experience_years, endorsements, latitude, longitude`
	searchValues = `d.state, d.driver_type, d.email_key,
		regexp_replace(regexp_replace(d.phone, '\D', '', 'g'), '^1(\d{10})$', '\1'),
		d.first_name_key, d.last_name_key,
		CASE WHEN d.experience ~ '^\d+(\.\d+)?$' THEN d.experience::numeric END,
		d.endorsements, z.latitude, z.longitude`
	searchSource = `drivers d LEFT JOIN zip_centroids z ON z.zip = left(d.zip, 5)`
)

// FoldCase is the case folding of e-mail and name keys and of the filters
// that compare with them.
func FoldCase(s string) string { return strings.ToLower(s) }

const profileColumns = `email, first_name, last_name, address, address2, city, state, zip, phone,
	driver_type, experience, endorsements, freight_experience, freight_preferences, license_state,
	preferred_assignments, preferred_regions, has_team, license_class, date_of_birth, twic_card,
	accidents, moving_violations, last_license_suspension, last_dui, interested_lease_purchase,
	teams, trucks_owned, is_premium`

// SaveApplications stores applications in one transaction: all or none. It
// returns each application's driver id. An application naming an unknown
// job fails the whole batch with an *UnknownJobError.
func (s *Store) SaveApplications(ctx context.Context, apps []Application) ([]int64, error) {
	ids := make([]int64, len(apps))
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		for i, a := range apps {
			id, err := saveApplication(ctx, tx, a)
			var unknown *UnknownJobError
			if errors.As(err, &unknown) {
				unknown.Index = i
			}
			if err != nil {
				return err
			}
			ids[i] = id
		}
		return nil
	})
	return ids, err
}

func saveApplication(ctx context.Context, tx *sqlx.Tx, a Application) (int64, error) {
	p := a.Profile
	args := []any{p.Email, p.FirstName, p.LastName, p.Address, p.Address2, p.City, p.State, p.Zip, p.Phone,
		p.DriverType, p.Experience, p.Endorsements, p.FreightExperience, p.FreightPreferences, p.LicenseState,
		p.PreferredAssignments, p.PreferredRegions, p.HasTeam, p.LicenseClass, p.DateOfBirth, p.TwicCard,
		p.Accidents, p.MovingViolations, p.LastLicenseSuspension, p.LastDUI, p.InterestedLeasePurchase,
		p.Teams, p.TrucksOwned, p.IsPremium, a.Sent, FoldCase(p.Email), FoldCase(p.FirstName), FoldCase(p.LastName)}
	placeholders := make([]string, len(args))
	sets := make([]string, 0, len(args))
	for i := range args {
		placeholders[i] = fmt.Sprintf("$%d", i+1)
	}
	const columns = profileColumns + ", profile_sent, email_key, first_name_key, last_name_key"
	for _, c := range strings.Split(columns, ",") {
		c = strings.TrimSpace(c)
		sets = append(sets, c+" = EXCLUDED."+c)
	}
	// The newest application's profile wins, whichever arrives first.
	var id int64
	err := tx.GetContext(ctx, &id, `INSERT INTO drivers (`+columns+`)
		VALUES (`+strings.Join(placeholders, ", ")+`)
		ON CONFLICT (email_key) DO UPDATE SET `+strings.Join(sets, ", ")+`
		WHERE drivers.profile_sent <= EXCLUDED.profile_sent
		RETURNING id`, args...)
	profileWritten := err == nil
	if errors.Is(err, sql.ErrNoRows) {
		err = tx.GetContext(ctx, &id, `SELECT id FROM drivers WHERE email_key = $1`, FoldCase(p.Email))
	}
	if err != nil {
		return 0, fmt.Errorf("save driver: %w", err)
	}

	if profileWritten {
		if err := replaceEmployment(ctx, tx, id, a.Employment); err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE applications a SET (`+searchColumns+`) =
			(SELECT `+searchValues+` FROM `+searchSource+` WHERE d.id = a.driver_id)
			WHERE a.driver_id = $1`, id); err != nil {
			return 0, fmt.Errorf("refresh driver search fields: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO applications (account_id, driver_id, sent, `+searchColumns+`)
		SELECT $1, d.id, $3, `+searchValues+` FROM `+searchSource+` WHERE d.id = $2
		ON CONFLICT (account_id, driver_id) DO UPDATE SET sent = GREATEST(applications.sent, EXCLUDED.sent)`,
		a.AccountID, id, a.Sent); err != nil {
		return 0, fmt.Errorf("save application: %w", err)
	}
	if err := saveJobApplications(ctx, tx, a.AccountID, id, a.JobApps); err != nil {
		return 0, err
	}
	return id, nil
}

func replaceEmployment(ctx context.Context, tx *sqlx.Tx, driverID int64, history []Employment) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM employment_history WHERE driver_id = $1`, driverID); err != nil {
		return fmt.Errorf("replace employment history: %w", err)
	}
	if len(history) == 0 {
		return nil
	}
	var company, state, phone, start []string
	var end []sql.NullString
	for _, e := range history {
		company, state, phone, start = append(company, e.Company), append(state, e.State), append(phone, e.Phone), append(start, e.StartDate)
		end = append(end, nullString(e.EndDate))
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO employment_history (driver_id, position, company, state, phone, start_date, end_date)
		SELECT $1, u.ord, u.company, u.state, u.phone, u.start_date::date, u.end_date::date
		  FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
		       WITH ORDINALITY AS u(company, state, phone, start_date, end_date, ord)`,
		driverID, pq.Array(company), pq.Array(state), pq.Array(phone), pq.Array(start), pq.Array(end))
	if err != nil {
		return fmt.Errorf("insert employment history: %w", err)
	}
	return nil
}

func saveJobApplications(ctx context.Context, tx *sqlx.Tx, accountID, driverID int64, apps []JobApplicationInput) error {
	if len(apps) == 0 {
		return nil
	}
	refs := make([]string, len(apps))
	for i, a := range apps {
		refs[i] = a.Reference
	}
	var found []struct {
		ID  int64  `db:"id"`
		Ref string `db:"reference_number"`
	}
	// Deleted jobs count: historical applications may name them. FOR SHARE
	// holds back a rename of these jobs until this transaction ends, so the
	// title the job applications copy below is the one the rename's
	// trigger (migration 0007) then finds them with, never a stale one.
	if err := tx.SelectContext(ctx, &found, `SELECT id, reference_number FROM jobs
		WHERE account_id = $1 AND reference_number = ANY($2::text[]) FOR SHARE`, accountID, pq.StringArray(refs)); err != nil {
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
	for _, a := range apps {
		id, ok := idOf[a.Reference]
		if !ok {
			return &UnknownJobError{Reference: a.Reference}
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
	if _, err := tx.ExecContext(ctx, `UPDATE applications SET has_job_apps = true WHERE account_id = $1 AND driver_id = $2`,
		accountID, driverID); err != nil {
		return fmt.Errorf("mark job applications: %w", err)
	}
	return nil
}

// SeedApplications bulk-loads applications of new drivers (e-mails not yet
// in the database) to one account: a handful of statements whatever the
// count. It is for synthetic demo and benchmark data; real applications go
// through SaveApplications, which merges drivers across accounts.
func (s *Store) SeedApplications(ctx context.Context, accountID int64, apps []Application) error {
	return s.inTx(ctx, func(tx *sqlx.Tx) error {
		var cols [16][]string
		var sent []time.Time
		var endorsements []string
		for _, a := range apps {
			p := a.Profile
			for i, v := range []string{p.Email, p.FirstName, p.LastName, p.Address, p.City, p.State, p.Zip, p.Phone,
				p.DriverType, p.Experience, deref(p.LicenseState), deref(p.LicenseClass), deref(p.DateOfBirth),
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
			SELECT * FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
			                     $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[],
			                     $13::text[], $14::text[], $15::text[], $16::text[], $17::text[], $18::text[])
			  AS u(sent, endorsements, email, first_name, last_name, address, city, state, zip, phone,
			       driver_type, experience, license_state, license_class, date_of_birth,
			       email_key, first_name_key, last_name_key);
			`, args...); err != nil {
			return fmt.Errorf("seed: stage: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `
			INSERT INTO drivers (email, email_key, first_name_key, last_name_key, first_name, last_name, address,
			                     city, state, zip, phone, driver_type, experience, endorsements, license_state,
			                     license_class, date_of_birth, profile_sent)
			SELECT email, email_key, first_name_key, last_name_key, first_name, last_name, address, city,
			       state, zip, phone, driver_type, experience,
			       string_to_array(endorsements, ','), license_state, license_class, NULLIF(date_of_birth, '')::date, sent
			  FROM seed`); err != nil {
			return fmt.Errorf("seed: drivers: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `
			INSERT INTO applications (account_id, driver_id, sent, `+searchColumns+`)
			SELECT $1, d.id, s.sent, `+searchValues+`
			  FROM seed s JOIN drivers d ON d.email_key = s.email_key
			  LEFT JOIN zip_centroids z ON z.zip = left(d.zip, 5)`, accountID); err != nil {
			return fmt.Errorf("seed: applications: %w", err)
		}
		// Job applications, by reference, for the drivers that have them.
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
		_, err := tx.ExecContext(ctx, `UPDATE applications a SET has_job_apps = true
			WHERE a.account_id = $1 AND NOT a.has_job_apps
			  AND EXISTS (SELECT 1 FROM job_applications ja WHERE ja.account_id = a.account_id AND ja.driver_id = a.driver_id)`, accountID)
		if err != nil {
			return fmt.Errorf("seed: mark job applications: %w", err)
		}
		return nil
	})
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
