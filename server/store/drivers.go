package store

import (
	"context"
	"fmt"
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
	if err := s.CompactApplicationCounts(ctx, accountID); err != nil {
		return err
	}
	// A seed is a write like the intake's: a bulk load's statistics are
	// refreshed now (AnalyzeAfterBulkWrites), not when autovacuum gets to
	// them; a seed of a few rows into a large table does not pay for an
	// ANALYZE of it.
	s.analyzed.n.Add(int64(len(apps)))
	s.AnalyzeAfterBulkWrites(ctx)
	return nil
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
