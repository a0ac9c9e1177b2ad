package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/lib/pq"

	"github.com/truckjobs/jobboard/domain"
)

// ErrIdempotencyMismatch is an idempotency key reused with another request.
var ErrIdempotencyMismatch = errors.New("idempotency key reused with a different request")

// IdempotencyWindow is how long an idempotency key names its import.
const IdempotencyWindow = 24 * time.Hour

// JobImport is a queued import without its payload.
type JobImport struct {
	ID          string              `db:"id"`
	AccountID   int64               `db:"account_id"`
	Status      domain.ImportStatus `db:"status"`
	RequestedAt time.Time           `db:"requested_at"`
	CompletedAt *time.Time          `db:"completed_at"`
	Results     *ImportResults      `db:"results"`
	CallbackURL *string             `db:"callback_url"`
	DeleteJobs  bool                `db:"delete_jobs"`
	BaseURL     string              `db:"base_url"`
	// RequestID is the X-Request-Id of the request that created the import.
	RequestID *string `db:"request_id"`
}

const importColumns = `id, account_id, status, requested_at, completed_at, results, callback_url, delete_jobs, base_url, request_id`

// NewImport is an import to create.
type NewImport struct {
	AccountID      int64
	Payload        ImportPayload
	CallbackURL    *string
	DeleteJobs     bool
	BaseURL        string
	IdempotencyKey string // optional
	RequestHash    string
	RequestID      string // optional
}

// ImportByIdempotencyKey finds the account's import created with key in
// the last IdempotencyWindow: found is false when there is none, and the
// error is ErrIdempotencyMismatch when there is one for another request
// (requestHash). A key whose window has passed is released, free for the
// import about to be created. The account's row is held until the
// transaction ends, so two requests racing with one key take turns: the
// second finds the import the first created.
func (t *Tx) ImportByIdempotencyKey(ctx context.Context, accountID int64, key, requestHash string) (imp JobImport, found bool, err error) {
	if err := lockAccount(ctx, t.tx, accountID); err != nil {
		return JobImport{}, false, err
	}
	var prior struct {
		JobImport
		Hash  *string `db:"request_hash"`
		Fresh bool    `db:"fresh"`
	}
	// The window is measured on the database's clock, which set requested_at.
	err = t.tx.GetContext(ctx, &prior, `SELECT `+importColumns+`, request_hash,
		requested_at > now() - make_interval(secs => $3) AS fresh
		FROM job_imports WHERE account_id = $1 AND idempotency_key = $2`,
		accountID, key, IdempotencyWindow.Seconds())
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return JobImport{}, false, nil
	case err != nil:
		return JobImport{}, false, fmt.Errorf("look up idempotency key: %w", err)
	case !prior.Fresh:
		if _, err := t.tx.ExecContext(ctx, `UPDATE job_imports SET idempotency_key = NULL WHERE id = $1`, prior.ID); err != nil {
			return JobImport{}, false, fmt.Errorf("release idempotency key: %w", err)
		}
		return JobImport{}, false, nil
	case prior.Hash == nil || *prior.Hash != requestHash:
		return JobImport{}, false, ErrIdempotencyMismatch
	}
	return prior.JobImport, true, nil
}

// InsertImport stores a new import, pending. An idempotency key must have
// been looked up first in the same transaction (ImportByIdempotencyKey).
func (t *Tx) InsertImport(ctx context.Context, n NewImport) (JobImport, error) {
	var key, requestID *string
	if n.IdempotencyKey != "" {
		key = &n.IdempotencyKey
	}
	if n.RequestID != "" {
		requestID = &n.RequestID
	}
	var imp JobImport
	if err := t.tx.GetContext(ctx, &imp, `INSERT INTO job_imports
		(account_id, payload, payload_form, callback_url, delete_jobs, base_url, idempotency_key, request_hash, request_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING `+importColumns,
		n.AccountID, n.Payload.data, n.Payload.form, n.CallbackURL, n.DeleteJobs, n.BaseURL, key, n.RequestHash, requestID); err != nil {
		return JobImport{}, fmt.Errorf("insert job import: %w", err)
	}
	return imp, nil
}

// IsImportID reports whether id has the form of an import id, a UUID;
// a query with another would fail in PostgreSQL's uuid parsing.
func IsImportID(id string) bool { return uuidPattern.MatchString(id) }

var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// JobImport returns an import of the account, or ErrNotFound (also for an
// id that is not a UUID).
func (s *Store) JobImport(ctx context.Context, accountID int64, id string) (JobImport, error) {
	if !uuidPattern.MatchString(id) {
		return JobImport{}, ErrNotFound
	}
	var imp JobImport
	err := s.db.GetContext(ctx, &imp, `SELECT `+importColumns+` FROM job_imports WHERE account_id = $1 AND id = $2`, accountID, id)
	if errors.Is(err, sql.ErrNoRows) {
		return JobImport{}, ErrNotFound
	}
	if err != nil {
		return JobImport{}, fmt.Errorf("get job import: %w", err)
	}
	return imp, nil
}

// JobImportWindow is JobImport with only w's entries of its result lists
// decoded, and the lists' lengths: what one page of them needs.
func (s *Store) JobImportWindow(ctx context.Context, accountID int64, id string, w ResultsWindow) (JobImport, ResultsLengths, error) {
	if !uuidPattern.MatchString(id) {
		return JobImport{}, ResultsLengths{}, ErrNotFound
	}
	var row struct {
		JobImport
		RawResults []byte `db:"raw_results"`
	}
	err := s.db.GetContext(ctx, &row, `SELECT `+importColumnsRawResults+` FROM job_imports WHERE account_id = $1 AND id = $2`, accountID, id)
	if errors.Is(err, sql.ErrNoRows) {
		return JobImport{}, ResultsLengths{}, ErrNotFound
	}
	if err != nil {
		return JobImport{}, ResultsLengths{}, fmt.Errorf("get job import: %w", err)
	}
	imp := row.JobImport
	if row.RawResults == nil {
		return imp, ResultsLengths{}, nil
	}
	results, lengths, err := decodeResultsWindow(row.RawResults, w)
	if err != nil {
		return JobImport{}, ResultsLengths{}, err
	}
	imp.Results = results
	return imp, lengths, nil
}

// importColumnsRawResults are importColumns with the results as their
// text, raw_results, for decodeResultsWindow to read.
var importColumnsRawResults = strings.Replace(importColumns, "results", "results AS raw_results", 1)

// StartImport marks an import running (unless it is complete) and returns
// it with its payload.
func (s *Store) StartImport(ctx context.Context, id string) (JobImport, ImportPayload, error) {
	var row importWithPayload
	err := s.db.GetContext(ctx, &row, `UPDATE job_imports
		SET status = CASE WHEN status = 'complete' THEN status ELSE 'running' END
		WHERE id = $1 RETURNING `+importColumns+`, payload, payload_form`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return JobImport{}, ImportPayload{}, ErrNotFound
	}
	if err != nil {
		return JobImport{}, ImportPayload{}, fmt.Errorf("start job import: %w", err)
	}
	return row.JobImport, row.payload(), nil
}

// importWithPayload is a row of job_imports with its payload.
type importWithPayload struct {
	JobImport
	Payload     []byte `db:"payload"`
	PayloadForm string `db:"payload_form"`
}

func (r importWithPayload) payload() ImportPayload {
	return ImportPayload{form: r.PayloadForm, data: r.Payload}
}

// DeleteJobsExcept deletes the account's active jobs whose reference is not
// in keep and returns how many it deleted.
func (t *Tx) DeleteJobsExcept(ctx context.Context, accountID int64, keep []string) (int, error) {
	t.jobsWritten(accountID)
	res, err := t.tx.ExecContext(ctx, `UPDATE jobs SET deleted_at = now(), updated_at = now()
		WHERE account_id = $1 AND deleted_at IS NULL AND NOT (reference_number = ANY($2::text[]))`,
		accountID, pq.StringArray(keep))
	if err != nil {
		return 0, fmt.Errorf("delete unlisted jobs: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// LockImport returns an import, holding its row until the transaction
// ends: the one transaction that completes it runs while no other can;
// ErrNotFound when there is none.
func (t *Tx) LockImport(ctx context.Context, id string) (JobImport, error) {
	var imp JobImport
	err := t.tx.GetContext(ctx, &imp, `SELECT `+importColumns+` FROM job_imports WHERE id = $1 FOR UPDATE`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return JobImport{}, ErrNotFound
	}
	if err != nil {
		return JobImport{}, fmt.Errorf("lock job import: %w", err)
	}
	return imp, nil
}

// LockImportWithPayload is LockImport with the import's stored jobs.
func (t *Tx) LockImportWithPayload(ctx context.Context, id string) (JobImport, ImportPayload, error) {
	var row importWithPayload
	err := t.tx.GetContext(ctx, &row, `SELECT `+importColumns+`, payload, payload_form FROM job_imports WHERE id = $1 FOR UPDATE`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return JobImport{}, ImportPayload{}, ErrNotFound
	}
	if err != nil {
		return JobImport{}, ImportPayload{}, fmt.Errorf("lock job import: %w", err)
	}
	return row.JobImport, row.payload(), nil
}

// liveStates are the states of a queue job the queue may still run:
// waiting, running or to be retried.
const liveStates = `('available', 'pending', 'running', 'retryable', 'scheduled')`

// liveQueueJob is true while the queue holds a live job of kind $2 for the
// import $1. The containment test is answered by River's GIN index on args.
const liveQueueJob = `EXISTS (SELECT 1 FROM river_job j WHERE j.kind = $2
	AND j.args @> jsonb_build_object('import_id', $1::text) AND j.state IN ` + liveStates + `)`

// ImportQueueJobLive says whether the queue holds a job of kind for the
// import that it may still run: waiting, running or to be retried.
func (t *Tx) ImportQueueJobLive(ctx context.Context, id, kind string) (bool, error) {
	var live bool
	if err := t.tx.GetContext(ctx, &live, `SELECT `+liveQueueJob, id, kind); err != nil {
		return false, fmt.Errorf("look up the queue job of import %s: %w", id, err)
	}
	return live, nil
}

// CompleteImport records imp complete, with its CompletedAt and Results,
// and drops its payload, which a complete import no longer needs.
func (t *Tx) CompleteImport(ctx context.Context, imp JobImport) error {
	if imp.Status != domain.ImportComplete || imp.CompletedAt == nil || imp.Results == nil {
		return fmt.Errorf("complete job import %s: status %q, completed at %v, results %v: not a completed import",
			imp.ID, imp.Status, imp.CompletedAt, imp.Results != nil)
	}
	_, err := t.tx.ExecContext(ctx, `UPDATE job_imports
		SET status = 'complete', completed_at = $3, results = $2, payload = ''
		WHERE id = $1`, imp.ID, imp.Results, *imp.CompletedAt)
	if err != nil {
		return fmt.Errorf("complete job import %s: %w", imp.ID, err)
	}
	return nil
}

// StrandedImport is an import still pending or running that no live queue
// job will run: the queue gave up on it, or its job is gone.
type StrandedImport struct {
	ID string `db:"id"`
	// Attempts is how many times the queue ran its last job; nil when
	// there is no job any more.
	Attempts *int `db:"attempts"`
	// State is the last job's final state; nil when there is none.
	State *string `db:"state"`
}

// StrandedImports lists up to limit stranded imports, oldest first, whose
// queue jobs are of kind. The partial index of unfinished imports keeps
// this from reading the finished ones.
func (s *Store) StrandedImports(ctx context.Context, kind string, limit int) ([]StrandedImport, error) {
	out := []StrandedImport{}
	err := s.db.SelectContext(ctx, &out, `SELECT i.id, last.attempt AS attempts, last.state::text AS state
		FROM job_imports i
		LEFT JOIN LATERAL (SELECT j.attempt, j.state FROM river_job j
			WHERE j.kind = $1 AND j.args @> jsonb_build_object('import_id', i.id::text)
			ORDER BY j.id DESC LIMIT 1) last ON true
		WHERE i.status <> 'complete' AND NOT EXISTS (SELECT 1 FROM river_job j WHERE j.kind = $1
			AND j.args @> jsonb_build_object('import_id', i.id::text)
			AND j.state IN `+liveStates+`)
		ORDER BY i.requested_at LIMIT $2`, kind, limit)
	if err != nil {
		return nil, fmt.Errorf("list stranded job imports: %w", err)
	}
	return out, nil
}

// ImportByIDAnyAccount returns an import whatever its account, for the
// queue's workers and the operator commands; a client's request goes
// through JobImport, which only finds the client's own account's imports.
func (s *Store) ImportByIDAnyAccount(ctx context.Context, id string) (JobImport, error) {
	if !IsImportID(id) {
		return JobImport{}, ErrNotFound
	}
	var imp JobImport
	err := s.db.GetContext(ctx, &imp, `SELECT `+importColumns+` FROM job_imports WHERE id = $1`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return JobImport{}, ErrNotFound
	}
	if err != nil {
		return JobImport{}, fmt.Errorf("get job import %s: %w", id, err)
	}
	return imp, nil
}

// CallbackAttempt is one delivery attempt of a completion callback.
// The JSON names are those `jobboard imports show` prints.
type CallbackAttempt struct {
	ImportID    string    `db:"import_id" json:"import_id"`
	WebhookID   string    `db:"webhook_id" json:"webhook_id"`
	Attempt     int       `db:"attempt" json:"attempt"`
	AttemptedAt time.Time `db:"attempted_at" json:"attempted_at"`
	StatusCode  *int      `db:"status_code" json:"status_code"`
	Error       *string   `db:"error" json:"error"`
	DurationMS  int       `db:"duration_ms" json:"duration_ms"`
}

// RecordCallbackAttempt stores one delivery attempt.
func (s *Store) RecordCallbackAttempt(ctx context.Context, a CallbackAttempt) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO callback_attempts
		(import_id, webhook_id, attempt, attempted_at, status_code, error, duration_ms)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		a.ImportID, a.WebhookID, a.Attempt, a.AttemptedAt, a.StatusCode, a.Error, a.DurationMS)
	if err != nil {
		return fmt.Errorf("record callback attempt: %w", err)
	}
	return nil
}

// CallbackAttempts lists an import's delivery attempts, oldest first.
func (s *Store) CallbackAttempts(ctx context.Context, importID string) ([]CallbackAttempt, error) {
	out := []CallbackAttempt{}
	if !uuidPattern.MatchString(importID) {
		return out, nil
	}
	err := s.db.SelectContext(ctx, &out, `SELECT import_id, webhook_id, attempt, attempted_at, status_code, error, duration_ms
		FROM callback_attempts WHERE import_id = $1 ORDER BY id`, importID)
	if err != nil {
		return nil, fmt.Errorf("list callback attempts: %w", err)
	}
	return out, nil
}

// QueueJobs is how many queue jobs of a kind are in a state, and the age
// of the oldest in seconds (metrics.QueueJobs says from when).
type QueueJobs struct {
	Kind          string  `db:"kind"`
	State         string  `db:"state"`
	Count         int64   `db:"count"`
	OldestSeconds float64 `db:"oldest_seconds"`
}

// QueueDepth counts the queue's jobs waiting or under way, by kind and
// state, with the age of the oldest, for the metrics scrape. The state
// filter keeps it on River's state index: finished jobs, the bulk of the
// table, are never read.
func (s *Store) QueueDepth(ctx context.Context) ([]QueueJobs, error) {
	var out []QueueJobs
	err := s.db.SelectContext(ctx, &out, `
		SELECT kind, state::text AS state, count(*) AS count,
		       greatest(extract(epoch FROM now() - min(CASE state
		           WHEN 'available' THEN scheduled_at
		           WHEN 'running' THEN attempted_at
		           ELSE created_at END)), 0)::float8 AS oldest_seconds
		  FROM river_job
		 WHERE state IN ('available', 'scheduled', 'running', 'retryable') GROUP BY kind, state`)
	if err != nil {
		return nil, fmt.Errorf("queue depth: %w", err)
	}
	return out, nil
}
