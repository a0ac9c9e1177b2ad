package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// JobFields is the content of a job that the employer controls, already
// validated and in canonical form. Two jobs with equal fields are the same
// posting, which is how an upsert tells "updated" from "unchanged".
type JobFields struct {
	ReferenceNumber string         `db:"reference_number"`
	Title           string         `db:"title"`
	City            *string        `db:"city"`
	State           string         `db:"state"`
	PostalCode      *string        `db:"postal_code"`
	DriverType      string         `db:"driver_type"`
	Preference      *string        `db:"preference"`
	FreightType     string         `db:"freight_type"`
	PayAmountMin    *string        `db:"pay_amount_min"` // decimal text with two places
	PayAmountMax    *string        `db:"pay_amount_max"`
	PayFrequency    *string        `db:"pay_frequency"`
	EmploymentType  pq.StringArray `db:"employment_type"`
	RouteType       pq.StringArray `db:"route_type"`
	Description     string         `db:"description"`
	Requirements    *string        `db:"requirements"`
	TwicOnly        bool           `db:"twic_only"`
	LicenseClass    *string        `db:"license_class"`
}

// Job is a stored, active job.
type Job struct {
	ID int64 `db:"id"`
	JobFields
	// PostedOn is the UTC day the job was added, as YYYY-MM-DD.
	PostedOn string `db:"posted_on"`
}

// jobColumns lists the JobFields columns in the order of the struct; numeric
// columns are read as text so the two decimal places survive.
const jobColumns = `reference_number, title, city, state, postal_code, driver_type, preference,
	freight_type, pay_amount_min::text AS pay_amount_min, pay_amount_max::text AS pay_amount_max,
	pay_frequency, employment_type, route_type, description, requirements, twic_only, license_class`

const jobSelect = `SELECT id, ` + jobColumns + `, to_char(posted_on, 'YYYY-MM-DD') AS posted_on FROM jobs`

// ListJobs returns the account's active jobs ordered by id.
func (s *Store) ListJobs(ctx context.Context, accountID int64) ([]Job, error) {
	jobs := []Job{}
	err := s.db.SelectContext(ctx, &jobs,
		jobSelect+` WHERE account_id = $1 AND deleted_at IS NULL ORDER BY id`, accountID)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	return jobs, nil
}

// JobsPage is one page of an account's active jobs.
type JobsPage struct {
	Jobs []Job
	// More is true when further jobs follow the last one.
	More bool
}

// jobSize estimates, in bytes, what a job takes in memory and on the wire:
// its texts, and a fixed share for the rest.
const jobSize = `(octet_length(description) + coalesce(octet_length(requirements), 0) + octet_length(title)
	+ coalesce(octet_length(city), 0) + octet_length(reference_number) + 256)`

// listJobsPage takes up to $3 jobs after id $2 (one more, to tell whether
// more follow), then keeps the prefix of them whose sizes add up to at most
// $4 bytes, and always the first; followed says whether another of those
// comes after a row.
const listJobsPage = `SELECT ` + jobPageColumns + `, followed FROM (
	SELECT c.*, coalesce(sum(size) OVER w, 0) - size AS before, lead(id) OVER w IS NOT NULL AS followed
	FROM (SELECT id, ` + jobColumns + `, to_char(posted_on, 'YYYY-MM-DD') AS posted_on, ` + jobSize + ` AS size
		FROM jobs WHERE account_id = $1 AND deleted_at IS NULL AND id > $2 ORDER BY id LIMIT $3 + 1) c
	WINDOW w AS (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
) p WHERE before = 0 OR before + size <= $4 ORDER BY id`

const jobPageColumns = `id, reference_number, title, city, state, postal_code, driver_type, preference, freight_type,
	pay_amount_min, pay_amount_max, pay_frequency, employment_type, route_type, description, requirements, twic_only,
	license_class, posted_on`

// ListJobsPage returns the account's active jobs after the one with id
// after (0: from the first), in id order: at most limit of them, and no
// more than fit in about maxBytes (at least one, whatever its size). A
// list read page by page therefore needs memory for one page, however many
// and however large the jobs are. Pages are read apart, so a job posted or
// deleted meanwhile may or may not appear; none appears twice.
func (s *Store) ListJobsPage(ctx context.Context, accountID, after int64, limit, maxBytes int) (JobsPage, error) {
	rows, err := s.db.QueryxContext(ctx, listJobsPage, accountID, after, limit, maxBytes)
	if err != nil {
		return JobsPage{}, fmt.Errorf("list jobs after %d: %w", after, err)
	}
	defer rows.Close()
	// Scanned row by row into a slice made once: a list is read a page at
	// a time, and sqlx's Select would grow the slice, and copy every row
	// into it, for each page again.
	var row struct {
		Job
		// Followed says another job comes after this one.
		Followed bool `db:"followed"`
	}
	page := JobsPage{Jobs: make([]Job, 0, limit)}
	for rows.Next() {
		if len(page.Jobs) == limit { // the one more row: more follow
			page.More = true
			break
		}
		if err := rows.StructScan(&row); err != nil {
			return JobsPage{}, fmt.Errorf("list jobs after %d: %w", after, err)
		}
		page.Jobs = append(page.Jobs, row.Job)
		page.More = row.Followed
	}
	if err := rows.Err(); err != nil {
		return JobsPage{}, fmt.Errorf("list jobs after %d: %w", after, err)
	}
	return page, nil
}

// Job returns one active job of the account, or ErrNotFound.
func (s *Store) Job(ctx context.Context, accountID, id int64) (Job, error) {
	var j Job
	err := s.getPrepared(ctx, &j, jobSelect+` WHERE account_id = $1 AND id = $2 AND deleted_at IS NULL`, accountID, id)
	if errors.Is(err, sql.ErrNoRows) {
		return Job{}, ErrNotFound
	}
	if err != nil {
		return Job{}, fmt.Errorf("get job %d: %w", id, err)
	}
	return j, nil
}

// Outcome is what an upsert did with one job.
type Outcome int

// The outcomes of an upsert.
const (
	// Added: the reference was new, or its job had been deleted and is back.
	Added Outcome = iota + 1
	// Updated: an active job with that reference had different content.
	Updated
	// Unchanged: an active job with that reference had the same content.
	Unchanged
	// OverActiveLimit: adding the job would have exceeded the active-job maximum.
	OverActiveLimit
)

// UpsertOptions tune UpsertJobs.
type UpsertOptions struct {
	// MaxActive is the most active jobs the account may have afterwards.
	MaxActive int
	// Today is the UTC day recorded as the posting date of added jobs.
	Today time.Time
}

// UpsertJobs adds or updates jobs keyed by reference number in one
// transaction and returns the outcome of each, in input order. Reference
// numbers must be unique within jobs.
func (s *Store) UpsertJobs(ctx context.Context, accountID int64, jobs []JobFields, opts UpsertOptions) ([]Outcome, error) {
	var outcomes []Outcome
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		var err error
		outcomes, err = upsertJobs(ctx, tx, accountID, jobs, opts)
		return err
	})
	return outcomes, err
}

// existingJob is a stored job, active or deleted, matched by reference.
type existingJob struct {
	ID int64 `db:"id"`
	JobFields
	Deleted bool `db:"deleted"`
}

// upsertJobs does the work of UpsertJobs inside tx with a fixed number of
// statements whatever the number of jobs: lock, read, count, insert, update.
func upsertJobs(ctx context.Context, tx *sqlx.Tx, accountID int64, jobs []JobFields, opts UpsertOptions) ([]Outcome, error) {
	outcomes := make([]Outcome, len(jobs))
	if len(jobs) == 0 {
		return outcomes, nil
	}
	// Writers to one account's jobs take turns on the account row, so two
	// concurrent posts cannot both see room under the active-job maximum.
	if err := lockAccount(ctx, tx, accountID); err != nil {
		return nil, err
	}

	refs := make([]string, len(jobs))
	for i, j := range jobs {
		refs[i] = j.ReferenceNumber
	}
	var found []existingJob
	if err := tx.SelectContext(ctx, &found,
		`SELECT id, `+jobColumns+`, deleted_at IS NOT NULL AS deleted
		   FROM jobs WHERE account_id = $1 AND reference_number = ANY($2::text[])`,
		accountID, pq.StringArray(refs)); err != nil {
		return nil, fmt.Errorf("read existing jobs: %w", err)
	}
	byRef := make(map[string]existingJob, len(found))
	for _, e := range found {
		byRef[e.ReferenceNumber] = e
	}
	var active int
	if err := tx.GetContext(ctx, &active,
		`SELECT count(*) FROM jobs WHERE account_id = $1 AND deleted_at IS NULL`, accountID); err != nil {
		return nil, fmt.Errorf("count active jobs: %w", err)
	}

	var inserts, updates jobBatch
	var updateIDs []int64
	for i, j := range jobs {
		e, ok := byRef[j.ReferenceNumber]
		switch {
		case ok && !e.Deleted && e.JobFields.Equal(j):
			outcomes[i] = Unchanged
		case ok && !e.Deleted:
			outcomes[i] = Updated
			updates.add(j)
			updateIDs = append(updateIDs, e.ID)
		case active >= opts.MaxActive:
			outcomes[i] = OverActiveLimit
		case ok: // deleted: bring the same job back
			active++
			outcomes[i] = Added
			updates.add(j)
			updateIDs = append(updateIDs, e.ID)
		default:
			active++
			outcomes[i] = Added
			inserts.add(j)
		}
	}

	today := opts.Today.UTC().Format(time.DateOnly)
	if len(inserts.ref) > 0 {
		args := append([]any{accountID, today}, inserts.columns()...)
		if _, err := tx.ExecContext(ctx, `
			INSERT INTO jobs (account_id, posted_on, `+jobBatchColumns+`)
			SELECT $1, $2::date, `+jobBatchValues+`
			  FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
			              $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[],
			              $15::text[], $16::text[], $17::text[], $18::boolean[], $19::text[])
			    AS u(`+jobBatchNames+`)`, args...); err != nil {
			return nil, fmt.Errorf("insert jobs: %w", err)
		}
	}
	if len(updateIDs) > 0 {
		args := append([]any{accountID, today, pq.Array(updateIDs)}, updates.columns()...)
		if _, err := tx.ExecContext(ctx, `
			UPDATE jobs AS j SET (`+jobBatchColumns+`) = (`+jobBatchValues+`),
			       posted_on  = CASE WHEN j.deleted_at IS NULL THEN j.posted_on ELSE $2::date END,
			       deleted_at = NULL,
			       updated_at = now()
			  FROM unnest($3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
			              $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[],
			              $15::text[], $16::text[], $17::text[], $18::text[], $19::boolean[], $20::text[])
			    AS u(id, `+jobBatchNames+`)
			 WHERE j.id = u.id AND j.account_id = $1`, args...); err != nil {
			return nil, fmt.Errorf("update jobs: %w", err)
		}
	}
	return outcomes, nil
}

func lockAccount(ctx context.Context, tx *sqlx.Tx, accountID int64) error {
	var id int64
	err := tx.GetContext(ctx, &id, `SELECT id FROM accounts WHERE id = $1 FOR NO KEY UPDATE`, accountID)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("account %d: %w", accountID, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("lock account %d: %w", accountID, err)
	}
	return nil
}

// The columns a batch writes, the names of the unnest columns, and the
// expressions that turn those back into column values.
const (
	jobBatchColumns = `reference_number, title, city, state, postal_code, driver_type, preference,
		freight_type, pay_amount_min, pay_amount_max, pay_frequency, employment_type, route_type,
		description, requirements, twic_only, license_class`
	jobBatchNames  = `ref, title, city, state, postal, dtype, pref, ftype, pmin, pmax, pfreq, emp, route, descr, req, twic, lic`
	jobBatchValues = `u.ref, u.title, u.city, u.state, u.postal, u.dtype, u.pref, u.ftype,
		u.pmin::numeric, u.pmax::numeric, u.pfreq, string_to_array(u.emp, ','),
		string_to_array(u.route, ','), u.descr, u.req, u.twic, u.lic`
)

// jobBatch holds jobs column by column, the shape unnest takes. List fields
// travel comma-joined because unnest flattens nested arrays; their values are
// canonical enum spellings, none of which contains a comma.
type jobBatch struct {
	ref, title, state, dtype, ftype, emp, route, descr []string
	city, postal, pref, pmin, pmax, pfreq, req, lic    []sql.NullString
	twic                                               []bool
}

func nullString(p *string) sql.NullString {
	if p == nil {
		return sql.NullString{}
	}
	return sql.NullString{String: *p, Valid: true}
}

func (b *jobBatch) add(j JobFields) {
	b.ref = append(b.ref, j.ReferenceNumber)
	b.title = append(b.title, j.Title)
	b.city = append(b.city, nullString(j.City))
	b.state = append(b.state, j.State)
	b.postal = append(b.postal, nullString(j.PostalCode))
	b.dtype = append(b.dtype, j.DriverType)
	b.pref = append(b.pref, nullString(j.Preference))
	b.ftype = append(b.ftype, j.FreightType)
	b.pmin = append(b.pmin, nullString(j.PayAmountMin))
	b.pmax = append(b.pmax, nullString(j.PayAmountMax))
	b.pfreq = append(b.pfreq, nullString(j.PayFrequency))
	b.emp = append(b.emp, strings.Join(j.EmploymentType, ","))
	b.route = append(b.route, strings.Join(j.RouteType, ","))
	b.descr = append(b.descr, j.Description)
	b.req = append(b.req, nullString(j.Requirements))
	b.twic = append(b.twic, j.TwicOnly)
	b.lic = append(b.lic, nullString(j.LicenseClass))
}

// columns returns the arrays in jobBatchNames order.
func (b *jobBatch) columns() []any {
	return []any{
		pq.Array(b.ref), pq.Array(b.title), pq.Array(b.city), pq.Array(b.state),
		pq.Array(b.postal), pq.Array(b.dtype), pq.Array(b.pref), pq.Array(b.ftype), pq.Array(b.pmin),
		pq.Array(b.pmax), pq.Array(b.pfreq), pq.Array(b.emp), pq.Array(b.route), pq.Array(b.descr),
		pq.Array(b.req), pq.Array(b.twic), pq.Array(b.lic),
	}
}

// Equal reports whether two jobs have the same content.
func (f JobFields) Equal(o JobFields) bool {
	eq := func(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	return f.ReferenceNumber == o.ReferenceNumber && f.Title == o.Title && eq(f.City, o.City) &&
		f.State == o.State && eq(f.PostalCode, o.PostalCode) && f.DriverType == o.DriverType &&
		eq(f.Preference, o.Preference) && f.FreightType == o.FreightType &&
		eq(f.PayAmountMin, o.PayAmountMin) && eq(f.PayAmountMax, o.PayAmountMax) &&
		eq(f.PayFrequency, o.PayFrequency) && slices.Equal(f.EmploymentType, o.EmploymentType) &&
		slices.Equal(f.RouteType, o.RouteType) && f.Description == o.Description &&
		eq(f.Requirements, o.Requirements) && f.TwicOnly == o.TwicOnly && eq(f.LicenseClass, o.LicenseClass)
}

// DeleteJobsByID soft-deletes the account's active jobs with the given ids
// and returns the ids it deleted.
func (s *Store) DeleteJobsByID(ctx context.Context, accountID int64, ids []int64) ([]int64, error) {
	deleted := []int64{}
	err := s.db.SelectContext(ctx, &deleted, `
		UPDATE jobs SET deleted_at = now(), updated_at = now()
		 WHERE account_id = $1 AND id = ANY($2::bigint[]) AND deleted_at IS NULL
		RETURNING id`, accountID, pq.Array(ids))
	if err != nil {
		return nil, fmt.Errorf("delete jobs: %w", err)
	}
	return deleted, nil
}

// DeleteJobsByReference soft-deletes the account's active jobs with the given
// reference numbers and returns the references it deleted.
func (s *Store) DeleteJobsByReference(ctx context.Context, accountID int64, refs []string) ([]string, error) {
	deleted := []string{}
	err := s.db.SelectContext(ctx, &deleted, `
		UPDATE jobs SET deleted_at = now(), updated_at = now()
		 WHERE account_id = $1 AND reference_number = ANY($2::text[]) AND deleted_at IS NULL
		RETURNING reference_number`, accountID, pq.StringArray(refs))
	if err != nil {
		return nil, fmt.Errorf("delete jobs by reference: %w", err)
	}
	return deleted, nil
}
