package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/truckjobs/jobboard/domain"
)

// JobFields is the content of a job that the employer controls, already
// validated and in canonical form. Two jobs with equal fields are the same
// posting (SameJob), which is how an upsert tells "updated" from
// "unchanged".
type JobFields = domain.JobFields

// Job is a stored, active job.
type Job = domain.Job

// jobColumns selects the JobFields columns, by name.
var jobColumns = joinFields(func(f jobField) string { return f.read })

var jobSelect = `SELECT id, ` + jobColumns + `, to_char(posted_on, 'YYYY-MM-DD') AS posted_on FROM jobs`

// jobByID is Job's query, built once: it is the key of its prepared statement.
var jobByID = jobSelect + ` WHERE account_id = $1 AND id = $2 AND deleted_at IS NULL`

// jobScanDest lists where each column of jobSelect goes in j, in order.
func jobScanDest(j *Job) []any {
	dest := make([]any, 0, len(jobFieldTable)+2)
	dest = appendScanDest(dest, &j.ID, &j.JobFields)
	return append(dest, &j.PostedOn)
}

// appendScanDest appends where the id and each jobColumns column go, in
// order.
func appendScanDest(dest []any, id *int64, j *JobFields) []any {
	dest = append(dest, id)
	for _, f := range jobFieldTable {
		dest = append(dest, f.dest(j))
	}
	return dest
}

// ListJobs returns the account's active jobs ordered by id.
func (s *Store) ListJobs(ctx context.Context, accountID int64) ([]Job, error) {
	rows, err := s.db.QueryContext(ctx, jobSelect+` WHERE account_id = $1 AND deleted_at IS NULL ORDER BY id`, accountID)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	defer rows.Close()
	jobs := []Job{}
	var row Job
	dest := jobScanDest(&row)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("list jobs: %w", err)
		}
		jobs = append(jobs, row)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	return jobs, nil
}

// jobSize estimates, in bytes, what a job takes in memory and on the wire:
// its texts, and a fixed share for the rest.
const jobSize = `(octet_length(description) + coalesce(octet_length(requirements), 0) + octet_length(title)
	+ coalesce(octet_length(city), 0) + octet_length(reference_number) + 256)`

// listJobsPage takes up to $3 jobs after id $2 (one more, to tell whether
// more follow), then keeps the prefix of them whose sizes add up to at
// most $4 bytes, and always the first; followed says whether another of
// those comes after a row. Every row taken is weighed, kept or not, so a
// caller that knows about how many jobs fit passes about that many as $3
// (EachOfWholeListPage of package jobs): weighing 10,000 rows to keep 3,000
// made a list of three pages weigh 18,700 rows for its 10,000 jobs. The
// account's active jobs are named by the expression of jobs_listed_idx
// (migration 0017), whose statistics count them apart from the account's
// withdrawn jobs: with account_id and deleted_at tested apart, an account
// of many withdrawn jobs was planned as a walk of every account's jobs in
// id order.
var listJobsPage = `SELECT ` + jobPageColumns + `, size, followed FROM (
	SELECT c.*, coalesce(sum(size) OVER w, 0) - size AS before, lead(id) OVER w IS NOT NULL AS followed
	FROM (SELECT id, ` + jobColumns + `, to_char(posted_on, 'YYYY-MM-DD') AS posted_on, ` + jobSize + ` AS size
		FROM jobs WHERE ` + activeJobOf + ` = $1 AND id > $2 ORDER BY id LIMIT $3 + 1) c
	WINDOW w AS (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
) p WHERE before = 0 OR before + size <= $4 ORDER BY id`

// activeJobOf is the account of an active job, NULL for a withdrawn one:
// the key of jobs_listed_idx, written as the index has it.
const activeJobOf = `(CASE WHEN deleted_at IS NULL THEN account_id END)`

var jobPageColumns = `id, ` + joinFields(func(f jobField) string { return f.column }) + `, posted_on`

// PageEnd is what reading a page of jobs tells besides its jobs.
type PageEnd struct {
	// More says whether further jobs follow the page.
	More bool
	// Bytes is the page's jobs' size as the page weighed them (jobSize),
	// by which a caller tells how many of the next jobs fit a page.
	Bytes int64
}

// EachJobOfPage reads the account's active jobs after the one with id
// after (0: from the first), in id order: at most limit of them, and no
// more than fit in about maxBytes (at least one, whatever its size). A
// list read page by page therefore needs memory for one page, however many
// and however large the jobs are. Pages are read apart, so a job posted or
// deleted meanwhile may or may not appear; none appears twice.
//
// It hands each job to each as its row arrives, so that the caller can use
// a page's first jobs while PostgreSQL still sends the rest. The job is
// read into the same place each time: each copies what it keeps. It stops
// at each's first error, which it returns.
func (s *Store) EachJobOfPage(ctx context.Context, accountID, after int64, limit, maxBytes int, each func(*Job) error) (PageEnd, error) {
	rows, err := s.db.QueryxContext(ctx, listJobsPage, accountID, after, limit, maxBytes)
	if err != nil {
		return PageEnd{}, fmt.Errorf("list jobs after %d: %w", after, err)
	}
	defer rows.Close()
	var row Job
	var size int64
	// followed says another job comes after this one.
	var followed bool
	dest := append(jobScanDest(&row), &size, &followed)
	var end PageEnd
	for n := 0; rows.Next(); n++ {
		if n == limit { // the one more row: more follow
			end.More = true
			return end, nil
		}
		if err := rows.Scan(dest...); err != nil {
			return PageEnd{}, fmt.Errorf("list jobs after %d: %w", after, err)
		}
		if err := each(&row); err != nil {
			return PageEnd{}, err
		}
		end.More = followed
		end.Bytes += size
	}
	if err := rows.Err(); err != nil {
		return PageEnd{}, fmt.Errorf("list jobs after %d: %w", after, err)
	}
	return end, nil
}

// Job returns one active job of the account, or ErrNotFound.
func (s *Store) Job(ctx context.Context, accountID, id int64) (Job, error) {
	var j Job
	err := s.scanPrepared(ctx, jobScanDest(&j), jobByID, accountID, id)
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
	err := s.InRetriedTx(ctx, "upsert jobs", func(tx *Tx) error {
		var err error
		outcomes, err = tx.UpsertJobs(ctx, accountID, jobs, opts)
		return err
	})
	return outcomes, err
}

// Checked is what a caller's checks made of the jobs of an upsert: the
// valid jobs, and the digest of the input each was made from (nil for
// none; Digests may be nil for all).
type Checked struct {
	Jobs    []JobFields
	Digests [][]byte
}

// digest is the i-th job's input digest, or nil.
func (c Checked) digest(i int) []byte {
	if c.Digests == nil {
		return nil
	}
	return c.Digests[i]
}

// UpsertJobsWhileChecked is UpsertJobs of the jobs ready returns, which
// the caller is still checking as it is called: the transaction locks the
// account and reads its stored jobs with the references refs meanwhile,
// and waits on ready only to write. Every job ready returns has its
// reference among refs (or is read then, in a statement more); refs may
// hold more, of jobs that fail their checks.
//
// digests returns the digests of the inputs the caller checks (nil, or
// one per reference, nil for none; a nil func for none), as its checks
// give them to the jobs they accept. It is called once the account is
// locked, so the caller may still be taking them as the transaction
// begins. A reference whose active stored job was written from the same
// input is unchanged: the transaction tells the caller which with known,
// before it reads the other references' stored jobs, and the caller
// leaves those jobs out of ready's, unchecked. A job is written with its
// digest, and a stored job found unchanged by its content gains the
// digest it lacked.
//
// digests, known and ready are called once each, even when the
// transaction is retried.
func (s *Store) UpsertJobsWhileChecked(ctx context.Context, accountID int64, refs []string, digests func() [][]byte,
	known func(unchanged []bool), ready func() Checked, opts UpsertOptions) ([]Outcome, error) {
	jobs := sync.OnceValue(ready)
	sums := func() [][]byte { return nil }
	if digests != nil {
		sums = sync.OnceValue(digests)
	}
	var told sync.Once
	var verdict []bool // what known told
	var outcomes []Outcome
	err := s.InRetriedTx(ctx, "upsert jobs", func(tx *Tx) error {
		if err := lockAccount(ctx, tx.tx, accountID); err != nil {
			return err
		}
		unchanged, stored, err := sameInputs(ctx, tx.tx, accountID, refs, sums())
		if err != nil {
			return err
		}
		told.Do(func() { verdict = unchanged; known(unchanged) })
		// Only the stored jobs not told unchanged are read: without
		// digests, every reference's. A retried transaction goes by what
		// the caller was told, whatever another writer did between the
		// two: a job left unchecked is not written (this post found it
		// unchanged before that write), and a job checked is read afresh.
		toRead := make([]string, 0, len(refs))
		for i, ref := range refs {
			if (stored == nil || stored[i]) && !verdict[i] {
				toRead = append(toRead, ref)
			}
		}
		// A post found unchanged throughout reads nothing more.
		var read storedForUpsert
		if len(toRead) > 0 {
			if read, err = readLocked(ctx, tx.tx, accountID, toRead); err != nil {
				return err
			}
		}
		checked := jobs()
		if len(checked.Jobs) == 0 {
			outcomes = []Outcome{}
			return nil
		}
		if len(toRead) == 0 {
			if read, err = readLocked(ctx, tx.tx, accountID, nil); err != nil {
				return err
			}
		}
		// Every reference of refs has been looked up, found or not.
		if err := read.readMissing(ctx, tx.tx, refs, checked.Jobs); err != nil {
			return err
		}
		// Only a post that writes jobs moves their counts: one found
		// unchanged throughout leaves the fold loop nothing to fold.
		tx.jobsWritten(accountID)
		outcomes, err = read.upsert(ctx, tx.tx, checked, opts)
		return err
	})
	return outcomes, err
}

// digestsWritten tells the jobs_input_digest_cleared trigger (migration
// 0047) that the transaction's updates of jobs write their input digests
// themselves: any other update clears a job's digest.
func digestsWritten(ctx context.Context, tx *sqlx.Tx) error {
	if _, err := tx.ExecContext(ctx, `SET LOCAL jobboard.input_digests TO written`); err != nil {
		return fmt.Errorf("update jobs: %w", err)
	}
	return nil
}

// sameInputs tells, for each reference, whether the account has a job
// with that reference (stored), and whether that job is active and was
// written from the input whose digest is the reference's (unchanged).
// Without digests, stored is nil (not looked up) and none is unchanged.
func sameInputs(ctx context.Context, tx *sqlx.Tx, accountID int64, refs []string, digests [][]byte) (unchanged, stored []bool, err error) {
	unchanged = make([]bool, len(refs))
	if digests == nil {
		return unchanged, nil, nil
	}
	packed, err := packDigests(digests)
	if err != nil {
		return nil, nil, err
	}
	var found []struct {
		I    int  `db:"i"`
		Same bool `db:"same"`
	}
	if err := tx.SelectContext(ctx, &found, sameInputsQuery, accountID, pq.StringArray(refs), packed); err != nil {
		return nil, nil, fmt.Errorf("read input digests: %w", err)
	}
	stored = make([]bool, len(refs))
	for _, f := range found {
		stored[f.I-1], unchanged[f.I-1] = true, f.Same
	}
	return unchanged, stored, nil
}

// InputDigestSize is the length of an input digest: a SHA-256 sum.
const InputDigestSize = sha256.Size

// packDigests is the digests as one statement parameter: laid end to
// end, the i-th at i*InputDigestSize, zeros for none (no SHA-256 sum is
// all zeros), or NULL when none has one (an import's jobs, a gRPC post's).
// As one bytea they cost PostgreSQL one hex decoding: as a bytea[] of
// 1,000 digests, parsing the array took 0.9 ms of a post's lookup of 3.5
// (EXECUTE of the statement in psql, both ways). digestAt reads them.
func packDigests(digests [][]byte) (any, error) {
	if !slices.ContainsFunc(digests, func(d []byte) bool { return d != nil }) {
		return nil, nil
	}
	packed := make([]byte, len(digests)*InputDigestSize)
	for i, d := range digests {
		if d != nil && len(d) != InputDigestSize {
			return nil, fmt.Errorf("input digest %d is %d bytes, not %d", i, len(d), InputDigestSize)
		}
		copy(packed[i*InputDigestSize:], d)
	}
	return packed, nil
}

// digestAt is the digest at the 1-based place of the packed digests of
// parameter param (packDigests), NULL for none.
func digestAt(param, place string) string {
	return fmt.Sprintf(`nullif(substring(%[1]s::bytea FROM (%[2]s::int - 1) * %[3]d + 1 FOR %[3]d), decode(repeat('00', %[3]d), 'hex'))`,
		param, place, InputDigestSize)
}

// sameInputsQuery finds the job of each reference as existingJobsQuery
// does and returns the (1-based) place of each reference found, and
// whether its job is active and was written from the reference's input,
// whose digest is the place's in the packed digests $3 (packDigests).
var sameInputsQuery = `
	SELECT r.i, (j.deleted_at IS NULL AND j.input_digest = ` + digestAt("$3", "r.i") + `) IS TRUE AS same
	  FROM unnest($2::text[]) WITH ORDINALITY AS r(ref, i)
	 CROSS JOIN LATERAL (
	       SELECT input_digest, deleted_at FROM jobs
	        WHERE account_id = $1 AND reference_number = r.ref LIMIT 1) j`

// UpsertJobs is UpsertJobs in the transaction, among other writes (an
// import's).
func (t *Tx) UpsertJobs(ctx context.Context, accountID int64, jobs []JobFields, opts UpsertOptions) ([]Outcome, error) {
	t.jobsWritten(accountID)
	return upsertJobs(ctx, t.tx, accountID, jobs, opts)
}

// jobsWritten notes that the transaction writes the account's jobs: a
// renamed job moves its applicants between titles' counts, to be folded
// after the commit.
func (t *Tx) jobsWritten(accountID int64) { t.compact = append(t.compact, accountID) }

// existingJob is a stored job, active or deleted, matched by reference.
type existingJob struct {
	ID int64 `db:"id"`
	JobFields
	Deleted bool `db:"deleted"`
	// Digest is the digest of the input the job was written from, or nil.
	Digest []byte `db:"input_digest"`
}

// upsertJobs does the work of UpsertJobs inside tx with a fixed number of
// statements whatever the number of jobs: lock, read, count, insert, lock
// and update.
func upsertJobs(ctx context.Context, tx *sqlx.Tx, accountID int64, jobs []JobFields, opts UpsertOptions) ([]Outcome, error) {
	if len(jobs) == 0 {
		return []Outcome{}, nil
	}
	stored, err := readForUpsert(ctx, tx, accountID, referenceNumbers(jobs))
	if err != nil {
		return nil, err
	}
	return stored.upsert(ctx, tx, Checked{Jobs: jobs}, opts)
}

// storedForUpsert is what an upsert reads before it decides: the
// account's stored jobs by reference, and how many are active, with the
// account locked.
type storedForUpsert struct {
	accountID int64
	byRef     map[string]existingJob
	active    int
}

// readForUpsert locks the account and reads its stored jobs with the
// references refs, and its number of active jobs.
func readForUpsert(ctx context.Context, tx *sqlx.Tx, accountID int64, refs []string) (storedForUpsert, error) {
	// Writers to one account's jobs take turns on the account row, so two
	// concurrent posts cannot both see room under the active-job maximum.
	if err := lockAccount(ctx, tx, accountID); err != nil {
		return storedForUpsert{}, err
	}
	return readLocked(ctx, tx, accountID, refs)
}

// readLocked is readForUpsert once the account is locked.
func readLocked(ctx context.Context, tx *sqlx.Tx, accountID int64, refs []string) (storedForUpsert, error) {
	stored := storedForUpsert{accountID: accountID}
	var err error
	if stored.byRef, err = existingJobs(ctx, tx, accountID, refs); err != nil {
		return stored, err
	}
	// The active jobs as job_facet_counts keeps them (facet "all" of
	// sample 1, written in each writer's transaction): a few index
	// entries. Counted over jobs, the count read every active job, and
	// once withdrawn rows outnumbered them the planner chose a sequential
	// scan of the table: 58 ms of a 1,000-job post in a table of 79,000
	// jobs, 60,000 of them the account's withdrawn ones.
	if err := tx.GetContext(ctx, &stored.active, `SELECT coalesce(sum(n), 0)::bigint FROM job_facet_counts
		 WHERE account_id = $1 AND facet = 'all' AND sample = 1 AND value = ''`, accountID); err != nil {
		return stored, fmt.Errorf("count active jobs: %w", err)
	}
	return stored, nil
}

// upsert writes jobs given what was stored: insert, then lock and update.
func (stored storedForUpsert) upsert(ctx context.Context, tx *sqlx.Tx, checked Checked, opts UpsertOptions) ([]Outcome, error) {
	if len(checked.Jobs) == 0 {
		return []Outcome{}, nil
	}
	accountID := stored.accountID
	p := planUpsert(checked, stored.byRef, stored.active, opts.MaxActive)

	today := opts.Today.UTC().Format(time.DateOnly)
	if p.inserts > 0 {
		digests, err := packDigests(p.insertDigests)
		if err != nil {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, insertJobBatch, p.insertArrays.params(accountID, today, digests)...); err != nil {
			return nil, fmt.Errorf("insert jobs: %w", err)
		}
	}
	if written := append(slices.Clip(p.updateIDs), p.noteIDs...); len(written) > 0 {
		if err := lockJobsInOrder(ctx, tx, accountID, written); err != nil {
			return nil, err
		}
		if err := digestsWritten(ctx, tx); err != nil {
			return nil, err
		}
	}
	if len(p.updateIDs) > 0 {
		digests, err := packDigests(p.updateDigests)
		if err != nil {
			return nil, err
		}
		args := p.updateArrays.params(today, digests, pq.Array(p.updateIDs))
		if _, err := tx.ExecContext(ctx, updateJobBatch, args...); err != nil {
			return nil, fmt.Errorf("update jobs: %w", err)
		}
	}
	if len(p.noteIDs) > 0 {
		// The digest alone: the content, and updated_at, stay as they are.
		digests, err := packDigests(p.noteDigests)
		if err != nil {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE jobs AS j SET input_digest = `+digestAt("$2", "u.i")+`
			  FROM unnest($1::bigint[]) WITH ORDINALITY AS u(id, i) WHERE j.id = u.id`,
			pq.Array(p.noteIDs), digests); err != nil {
			return nil, fmt.Errorf("note input digests: %w", err)
		}
	}
	return p.outcomes, nil
}

// readMissing reads the stored jobs of the references of jobs that were
// not among refs, those read (a caller's references differing from its
// checked jobs'), so that no stored job is taken for a new one.
func (stored storedForUpsert) readMissing(ctx context.Context, tx *sqlx.Tx, refs []string, jobs []JobFields) error {
	read := make(map[string]bool, len(refs))
	for _, ref := range refs {
		read[ref] = true
	}
	var missing []string
	for i := range jobs {
		if !read[jobs[i].ReferenceNumber] {
			missing = append(missing, jobs[i].ReferenceNumber)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	more, err := existingJobs(ctx, tx, stored.accountID, missing)
	if err != nil {
		return err
	}
	maps.Copy(stored.byRef, more)
	return nil
}

// existingJobs reads the account's stored jobs, active or deleted, with the
// references refs, by reference.
//
// Each reference is looked up on its own (one probe of the account's
// unique reference index each) rather than with reference_number =
// ANY(...): for an account the table's statistics do not know yet, a new
// one or one past the most common values, the planner expects one row for
// account_id = $1 and so reads every job the account ever had, deleted ones
// included, filtering the references (in bench scenario 1, 11 ms for
// 1,000 references among 20,000 of the account's jobs, 21 ms among 34,000,
// growing with each post). The LIMIT keeps the subquery from being
// flattened into that plan.
//
// The rows are scanned by position: through sqlx's reflection, a post of
// 1,000 unchanged jobs made 9,000 more allocations here (75,000 in all).
func existingJobs(ctx context.Context, tx *sqlx.Tx, accountID int64, refs []string) (map[string]existingJob, error) {
	if len(refs) == 0 {
		return map[string]existingJob{}, nil
	}
	rows, err := tx.QueryContext(ctx, existingJobsQuery, accountID, pq.StringArray(refs))
	if err != nil {
		return nil, fmt.Errorf("read existing jobs: %w", err)
	}
	defer rows.Close()
	byRef := make(map[string]existingJob, len(refs))
	dest := make([]any, 0, len(jobFieldTable)+3)
	for rows.Next() {
		var e existingJob
		dest = appendScanDest(dest[:0], &e.ID, &e.JobFields)
		if err := rows.Scan(append(dest, &e.Deleted, &e.Digest)...); err != nil {
			return nil, fmt.Errorf("read existing jobs: %w", err)
		}
		byRef[e.ReferenceNumber] = e
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read existing jobs: %w", err)
	}
	return byRef, nil
}

// referenceNumbers are the jobs' references.
func referenceNumbers(jobs []JobFields) []string {
	refs := make([]string, len(jobs))
	for i, j := range jobs {
		refs[i] = j.ReferenceNumber
	}
	return refs
}

var existingJobsQuery = `
	SELECT j.* FROM unnest($2::text[]) AS r(ref) -- j.*: id, the jobFieldTable columns in order, deleted, input_digest
	 CROSS JOIN LATERAL (
	       SELECT id, ` + jobColumns + `, deleted_at IS NOT NULL AS deleted, input_digest
	         FROM jobs WHERE account_id = $1 AND reference_number = r.ref LIMIT 1) j`

// upsertPlan is what an upsert writes: new jobs to insert, stored ones
// (active or deleted) to overwrite by id, and the outcome of each job.
type upsertPlan struct {
	outcomes      []Outcome
	inserts       int // how many jobs insertArrays holds
	insertArrays  jobArrays
	insertDigests [][]byte
	updateIDs     []int64
	updateArrays  jobArrays
	updateDigests [][]byte
	// noteIDs are unchanged jobs stored without the digest of the input
	// they were posted with again, noteDigests those digests.
	noteIDs     []int64
	noteDigests [][]byte
}

// planUpsert decides each job's outcome given the stored jobs by reference
// and the number of active ones, keeping under maxActive.
func planUpsert(checked Checked, byRef map[string]existingJob, active, maxActive int) upsertPlan {
	jobs := checked.Jobs
	p := upsertPlan{
		outcomes:     make([]Outcome, len(jobs)),
		insertArrays: newJobArrays(max(len(jobs)-len(byRef), 0)),
		updateArrays: newJobArrays(len(byRef)),
	}
	for i := range jobs {
		j, digest := &jobs[i], checked.digest(i)
		e, ok := byRef[j.ReferenceNumber]
		switch {
		case ok && !e.Deleted && SameJob(e.JobFields, *j):
			p.outcomes[i] = Unchanged
			if digest != nil && !bytes.Equal(digest, e.Digest) {
				p.noteIDs = append(p.noteIDs, e.ID)
				p.noteDigests = append(p.noteDigests, digest)
			}
		case ok && !e.Deleted:
			p.outcomes[i] = Updated
			p.update(e.ID, j, digest)
		case active >= maxActive:
			p.outcomes[i] = OverActiveLimit
		case ok: // deleted: bring the same job back
			active++
			p.outcomes[i] = Added
			p.update(e.ID, j, digest)
		default:
			active++
			p.outcomes[i] = Added
			p.inserts++
			p.insertArrays.add(j)
			p.insertDigests = append(p.insertDigests, digest)
		}
	}
	return p
}

func (p *upsertPlan) update(id int64, j *JobFields, digest []byte) {
	p.updateIDs = append(p.updateIDs, id)
	p.updateArrays.add(j)
	p.updateDigests = append(p.updateDigests, digest)
}

// The batch statements. The insert's $1 is the account, $2 the posting
// day, $3 the packed input digests (packDigests), then the jobArrays. The
// update's $1 is the posting day of jobs brought back, $2 the packed input
// digests, $3 the ids (checked to be the account's jobs by
// lockJobsInOrder), then the jobArrays.
var (
	insertJobBatch = `
		INSERT INTO jobs (account_id, posted_on, input_digest, ` + jobBatchColumns + `)
		SELECT $1, $2::date, ` + digestAt("$3", "u.i") + `, ` + jobBatchValues + `
		  FROM unnest(` + unnestParams(4) + `) WITH ORDINALITY
		    AS u(` + jobBatchNames + `, i)`
	updateJobBatch = `
		UPDATE jobs AS j SET (` + jobBatchColumns + `) = (` + jobBatchValues + `),
		       input_digest = ` + digestAt("$2", "u.i") + `,
		       posted_on  = CASE WHEN j.deleted_at IS NULL THEN j.posted_on ELSE $1::date END,
		       deleted_at = NULL,
		       updated_at = now()
		  FROM unnest(` + unnestParams(3, "bigint[]") + `) WITH ORDINALITY
		    AS u(id, ` + jobBatchNames + `, i)
		 WHERE j.id = u.id`
)

// The columns a batch writes, the names of the unnest columns, and the
// expressions that turn those back into column values.
var (
	jobBatchColumns = joinFields(func(f jobField) string { return f.column })
	jobBatchNames   = joinFields(func(f jobField) string { return f.unnest })
	jobBatchValues  = joinFields(func(f jobField) string { return f.write })
)

// lockJobsInOrder locks the jobs with ids for an update, in id order. The
// update would lock them in the order of its plan, and an intake holding
// some of them FOR SHARE (lockAppliedJobs) while waiting for others would
// deadlock with it; in one order, one waits for the other.
//
// It also checks that every job is the account's, in Go rather than with
// account_id = $1 in SQL, for the reason given at existingJobs: the update
// that follows then finds its rows by id alone.
func lockJobsInOrder(ctx context.Context, tx *sqlx.Tx, accountID int64, ids []int64) error {
	var owners []int64
	if err := tx.SelectContext(ctx, &owners, `SELECT account_id FROM jobs WHERE id = ANY($1::bigint[]) ORDER BY id FOR NO KEY UPDATE`,
		pq.Array(ids)); err != nil {
		return fmt.Errorf("lock jobs to update: %w", err)
	}
	// ids may repeat (two jobs of a batch with one reference); rows do not.
	if want := len(slices.Compact(slices.Sorted(slices.Values(ids)))); len(owners) != want {
		return fmt.Errorf("lock jobs to update: %d of %d jobs found", len(owners), want)
	}
	for _, owner := range owners {
		if owner != accountID {
			return fmt.Errorf("lock jobs to update: a job of account %d is not account %d's", owner, accountID)
		}
	}
	return nil
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

// DeleteJobsByID soft-deletes the account's active jobs with the given ids
// and returns the ids it deleted.
func (s *Store) DeleteJobsByID(ctx context.Context, accountID int64, ids []int64) ([]int64, error) {
	deleted, err := softDeleteJobs[int64](ctx, s, accountID, "id", "bigint", pq.Array(ids))
	if err != nil {
		return nil, fmt.Errorf("delete jobs: %w", err)
	}
	return deleted, nil
}

// DeleteJobsByReference soft-deletes the account's active jobs with the given
// reference numbers and returns the references it deleted.
func (s *Store) DeleteJobsByReference(ctx context.Context, accountID int64, refs []string) ([]string, error) {
	deleted, err := softDeleteJobs[string](ctx, s, accountID, "reference_number", "text", pq.StringArray(refs))
	if err != nil {
		return nil, fmt.Errorf("delete jobs by reference: %w", err)
	}
	return deleted, nil
}

// softDeleteJobs soft-deletes the account's active jobs whose column is one
// of keys, an array of SQL type keyType, and returns the column of those it
// deleted. column and keyType are constants of the callers. The statement
// locks the jobs in its own order while an intake holds some of them FOR
// SHARE and waits for others, so it too is run again after a deadlock.
//
// Unlike existingJobsQuery it keeps = ANY: for an account the statistics
// do not know, the planner reads the account's active jobs through the
// partial jobs_active_idx and filters the keys, and active jobs are
// bounded by the account's maximum, withdrawn ones are not read (beside
// 20,000 withdrawn jobs, the scan for 1,000 of 1,000 active ones took
// 0.4-0.5 ms of EXPLAIN ANALYZE, by reference or by id).
func softDeleteJobs[K int64 | string](ctx context.Context, s *Store, accountID int64, column, keyType string, keys any) ([]K, error) {
	var deleted []K
	err := retryDeadlocks(ctx, "delete jobs", deadlockAttempts, func() error {
		deleted = []K{} // sqlx appends to what a failed run read
		return s.db.SelectContext(ctx, &deleted, `
			UPDATE jobs SET deleted_at = now(), updated_at = now()
			 WHERE account_id = $1 AND `+column+` = ANY($2::`+keyType+`[]) AND deleted_at IS NULL
			RETURNING `+column, accountID, keys)
	})
	if err == nil && len(deleted) > 0 {
		// The delete wrote count rows of the job facets (migration 0036):
		// the fold loop folds them.
		s.compactions.note(accountID)
	}
	return deleted, err
}
