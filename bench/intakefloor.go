package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/truckjobs/jobboard/server/store"
)

// The intake's floor: the least a program of its own, knowing the schema
// and nothing of the service's code, does to write the same applications.
// One transaction of five set-based statements over arrays: the drivers;
// the applications with the columns the filters read (ZIP centroid,
// phone digits, case-folded keys, experience in years, a hash of the
// application), so the counting triggers do their work; the employment
// history; the job applications, with the title the job has; and one
// driver.application.received event each, numbered by the account's
// sequence, whose data is the driver as JSON with its employment and job
// applications, built in SQL. What it leaves out is what the service adds
// for its callers: the checks of every field, the newest-wins rule and
// repeat detection, the REST shape of an event's data, the deliveries to
// endpoints (the bench account has none) and the gRPC call itself.

// intakeFloorStatements are the floor's statements, in order; but for the
// first, $1 is the account and the arrays follow (intakeFloorArgs).
var intakeFloorStatements = []string{
	`INSERT INTO drivers (email_key) SELECT lower(e) FROM unnest($1::text[]) AS u(e)
	 ON CONFLICT (email_key) DO NOTHING`,
	`INSERT INTO applications (account_id, driver_id, sent, email, first_name, last_name, address, city, zip, phone,
	        experience, license_state, license_class, date_of_birth, state, driver_type, endorsements, email_key,
	        phone_digits, first_name_key, last_name_key, experience_years, latitude, longitude, received_hash, has_job_apps)
	 SELECT $1, d.id, u.sent, u.email, u.first_name, u.last_name, u.address, u.city, u.zip, u.phone,
	        u.experience, u.license_state, u.license_class, u.date_of_birth, u.state, u.driver_type,
	        string_to_array(u.endorsements, ','), lower(u.email),
	        regexp_replace(regexp_replace(u.phone, '\D', '', 'g'), '^1(\d{10})$', '\1'),
	        lower(u.first_name), lower(u.last_name),
	        CASE WHEN u.experience ~ '^\d+(\.\d+)?$' THEN u.experience::numeric END,
	        z.latitude, z.longitude, sha256(convert_to(u::text, 'UTF8')), u.applied
	   FROM unnest($2::text[], $3::timestamptz[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
	               $9::text[], $10::text[], $11::text[], $12::text[], $13::date[], $14::text[], $15::text[],
	               $16::text[], $17::boolean[])
	        AS u(email, sent, first_name, last_name, address, city, zip, phone, experience, license_state,
	             license_class, date_of_birth, state, driver_type, endorsements, applied)
	   JOIN drivers d ON d.email_key = lower(u.email)
	   LEFT JOIN zip_centroids z ON z.zip = left(u.zip, 5)`,
	`INSERT INTO employment_history (account_id, driver_id, position, company, state, phone, start_date, end_date)
	 SELECT $1, d.id, 1, u.company, u.state, u.phone, u.start_date, u.end_date
	   FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::date[], $7::date[])
	        AS u(email, company, state, phone, start_date, end_date)
	   JOIN drivers d ON d.email_key = lower(u.email)`,
	`INSERT INTO job_applications (account_id, driver_id, job_id, is_direct_app, created_at, job_title_lower)
	 SELECT $1, d.id, j.id, u.direct, u.created, lower(j.title)
	   FROM unnest($2::text[], $3::text[], $4::boolean[], $5::timestamptz[]) AS u(email, ref, direct, created)
	   JOIN drivers d ON d.email_key = lower(u.email)
	   JOIN jobs j ON j.account_id = $1 AND j.reference_number = u.ref`,
	`WITH batch AS (
	        SELECT a.* FROM unnest($2::text[]) WITH ORDINALITY AS u(email, n)
	          JOIN drivers d ON d.email_key = lower(u.email)
	          JOIN applications a ON a.account_id = $1 AND a.driver_id = d.id
	         ORDER BY u.n),
	      s AS (
	        INSERT INTO event_sequences AS s (account_id, last_seq) VALUES ($1, cardinality($2::text[]))
	        ON CONFLICT (account_id) DO UPDATE SET last_seq = s.last_seq + cardinality($2::text[])
	        RETURNING last_seq - cardinality($2::text[]) AS before)
	 INSERT INTO events (account_id, seq, type, data, created_at)
	 SELECT $1, s.before + row_number() OVER (), 'driver.application.received',
	        json_build_object('driver', to_json(b),
	          'employmentHistory', (SELECT json_agg(e ORDER BY e.position) FROM employment_history e
	                                 WHERE e.account_id = $1 AND e.driver_id = b.driver_id),
	          'jobApplications', (SELECT json_agg(ja) FROM job_applications ja
	                               WHERE ja.account_id = $1 AND ja.driver_id = b.driver_id)),
	        clock_timestamp()
	   FROM batch b, s`,
}

// intakeFloor writes apps (to one account, each of a new driver with at
// most one employment entry) in one transaction of intakeFloorStatements
// and times it, arrays built included.
func intakeFloor(ctx context.Context, db *sqlx.DB, accountID int64, apps []store.Application) (time.Duration, error) {
	start := time.Now()
	args := intakeFloorArgs(accountID, apps)
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback() }()
	for i, q := range intakeFloorStatements {
		if _, err := tx.ExecContext(ctx, q, args[i]...); err != nil {
			return 0, fmt.Errorf("floor statement %d: %w", i+1, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// intakeFloorArgs are each floor statement's arguments: the account, then
// the applications by column (the drivers', the applications' and the
// events' statements take the same), the employment entries by column, the
// job applications by column.
func intakeFloorArgs(accountID int64, apps []store.Application) [][]any {
	var email, sent, first, last, address, city, zip, phone, experience, endorsements []string
	var licenseState, licenseClass, dob, state, driverType []sql.NullString
	var applied []bool
	var eEmail, company, eState, ePhone, eStart []string
	var eEnd []sql.NullString
	var jEmail, ref []string
	var direct []bool
	var created []string
	text := func(p *string) sql.NullString {
		if p == nil {
			return sql.NullString{}
		}
		return sql.NullString{String: *p, Valid: true}
	}
	for _, a := range apps {
		p := a.Profile
		email, sent = append(email, p.Email), append(sent, a.Sent.Format(time.RFC3339Nano))
		first, last, address, city = append(first, p.FirstName), append(last, p.LastName), append(address, p.Address), append(city, p.City)
		zip, phone, experience = append(zip, p.Zip), append(phone, p.Phone), append(experience, p.Experience)
		endorsements = append(endorsements, strings.Join(p.Endorsements, ","))
		licenseState, licenseClass, dob = append(licenseState, text(p.LicenseState)), append(licenseClass, text(p.LicenseClass)), append(dob, text(p.DateOfBirth))
		state, driverType = append(state, sql.NullString{String: p.State, Valid: true}), append(driverType, sql.NullString{String: p.DriverType, Valid: true})
		applied = append(applied, len(a.JobApps) > 0)
		for _, e := range a.Employment {
			eEmail, company, eState, ePhone, eStart = append(eEmail, p.Email), append(company, e.Company), append(eState, e.State), append(ePhone, e.Phone), append(eStart, e.StartDate)
			eEnd = append(eEnd, text(e.EndDate))
		}
		for _, j := range a.JobApps {
			jEmail, ref = append(jEmail, p.Email), append(ref, j.Reference)
			direct, created = append(direct, j.IsDirectApp), append(created, j.CreatedAt.Format(time.RFC3339Nano))
		}
	}
	emails := pq.Array(email)
	return [][]any{
		{emails},
		{accountID, emails, pq.Array(sent), pq.Array(first), pq.Array(last), pq.Array(address),
			pq.Array(city), pq.Array(zip), pq.Array(phone), pq.Array(experience), pq.Array(licenseState),
			pq.Array(licenseClass), pq.Array(dob), pq.Array(state), pq.Array(driverType), pq.Array(endorsements),
			pq.Array(applied)},
		{accountID, pq.Array(eEmail), pq.Array(company), pq.Array(eState), pq.Array(ePhone), pq.Array(eStart), pq.Array(eEnd)},
		{accountID, pq.Array(jEmail), pq.Array(ref), pq.Array(direct), pq.Array(created)},
		{accountID, emails},
	}
}
