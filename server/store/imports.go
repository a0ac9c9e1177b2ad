package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
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

// CreateImport stores an import and, in the same transaction, calls enqueue
// so the queue job exists exactly when the import does. With an
// idempotency key already used in the window, it returns that import (same
// request hash) or ErrIdempotencyMismatch; created says which happened.
func (s *Store) CreateImport(ctx context.Context, n NewImport, enqueue func(ctx context.Context, tx *sql.Tx, id string) error) (imp JobImport, created bool, err error) {
	err = s.inTx(ctx, func(tx *sqlx.Tx) error {
		var key *string
		if n.IdempotencyKey != "" {
			key = &n.IdempotencyKey
			// Keys are per account; holding the account row serialises two
			// requests racing with the same key.
			if err := lockAccount(ctx, tx, n.AccountID); err != nil {
				return err
			}
			var prior struct {
				JobImport
				Hash  *string `db:"request_hash"`
				Fresh bool    `db:"fresh"`
			}
			// The window is measured on the database's clock, which set requested_at.
			err := tx.GetContext(ctx, &prior, `SELECT `+importColumns+`, request_hash,
				requested_at > now() - make_interval(secs => $3) AS fresh
				FROM job_imports WHERE account_id = $1 AND idempotency_key = $2`,
				n.AccountID, n.IdempotencyKey, IdempotencyWindow.Seconds())
			switch {
			case err == nil && prior.Fresh:
				if prior.Hash == nil || *prior.Hash != n.RequestHash {
					return ErrIdempotencyMismatch
				}
				imp = prior.JobImport
				return nil
			case err == nil: // expired: the key is free again
				if _, err := tx.ExecContext(ctx, `UPDATE job_imports SET idempotency_key = NULL WHERE id = $1`, prior.ID); err != nil {
					return fmt.Errorf("release idempotency key: %w", err)
				}
			case !errors.Is(err, sql.ErrNoRows):
				return fmt.Errorf("look up idempotency key: %w", err)
			}
		}
		var requestID *string
		if n.RequestID != "" {
			requestID = &n.RequestID
		}
		if err := tx.GetContext(ctx, &imp, `INSERT INTO job_imports
			(account_id, payload, payload_form, callback_url, delete_jobs, base_url, idempotency_key, request_hash, request_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING `+importColumns,
			n.AccountID, n.Payload.data, n.Payload.form, n.CallbackURL, n.DeleteJobs, n.BaseURL, key, n.RequestHash, requestID); err != nil {
			return fmt.Errorf("insert job import: %w", err)
		}
		created = true
		return enqueue(ctx, tx.Tx, imp.ID)
	})
	return imp, created, err
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

// ImportTx is the transaction an import's jobs are written in.
type ImportTx struct {
	tx        *sqlx.Tx
	accountID int64
}

// UpsertJobs is UpsertJobs inside the import's transaction.
func (t *ImportTx) UpsertJobs(ctx context.Context, jobs []JobFields, opts UpsertOptions) ([]Outcome, error) {
	return upsertJobs(ctx, t.tx, t.accountID, jobs, opts)
}

// DeleteJobsExcept deletes the account's active jobs whose reference is not
// in keep and returns how many it deleted.
func (t *ImportTx) DeleteJobsExcept(ctx context.Context, keep []string) (int, error) {
	res, err := t.tx.ExecContext(ctx, `UPDATE jobs SET deleted_at = now(), updated_at = now()
		WHERE account_id = $1 AND deleted_at IS NULL AND NOT (reference_number = ANY($2::text[]))`,
		t.accountID, pq.StringArray(keep))
	if err != nil {
		return 0, fmt.Errorf("delete unlisted jobs: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// FinishImport runs work and records its results in one transaction, so
// an import's effect is all or nothing. finish is given the import as the
// transaction leaves it and told whether work ran; it returns what to write
// last in the same transaction (the queue marks its job done and queues
// the callback there). When work ran, finish is called while the import's
// row is written, so that what it prepares without the database (the
// completion event, rendered) costs the import no time of its own. An
// import already complete is left alone. A deadlock is not retried here
// but fails the run like any other error: the queue runs the import again
// whole, as one transaction it must be.
func (s *Store) FinishImport(ctx context.Context, id string, work func(ctx context.Context, tx *ImportTx) (*ImportResults, error), finish func(imp JobImport, ran bool) func(tx *sql.Tx) error) (ran bool, err error) {
	var accountID int64
	defer func() {
		if ran && err == nil {
			s.compactions.note(accountID) // renamed jobs move title counts
		}
	}()
	err = s.inTx(ctx, func(tx *sqlx.Tx) error {
		var imp JobImport
		if err := tx.GetContext(ctx, &imp, `SELECT `+importColumns+` FROM job_imports WHERE id = $1 FOR UPDATE`, id); err != nil {
			return fmt.Errorf("lock job import: %w", err)
		}
		accountID = imp.AccountID
		if imp.Status == domain.ImportComplete {
			return finish(imp, false)(tx.Tx)
		}
		results, err := work(ctx, &ImportTx{tx: tx, accountID: imp.AccountID})
		if err != nil {
			return err
		}
		write, err := completeImport(ctx, tx, &imp, results, finish)
		if err != nil {
			return fmt.Errorf("complete job import: %w", err)
		}
		ran = true
		return write(tx.Tx)
	})
	return ran, err
}

// liveStates are the states of a queue job the queue may still run:
// waiting, running or to be retried.
const liveStates = `('available', 'pending', 'running', 'retryable', 'scheduled')`

// completeImport records an import's results and drops its payload, which
// a complete import no longer needs, and completes imp to match the row.
// The completion time is read first, so that the import as completed is
// known before its row is written: finish, if not nil, is called with it
// meanwhile, on a goroutine of its own, and what it returns is
// completeImport's. The stored results are not read back: that would cost
// a transfer and a decode of all of them (6 MB for an import of 40,000
// errors), and they are results, which the caller already holds.
func completeImport(ctx context.Context, tx *sqlx.Tx, imp *JobImport, results *ImportResults, finish func(imp JobImport, ran bool) func(tx *sql.Tx) error) (func(tx *sql.Tx) error, error) {
	var completed time.Time
	if err := tx.GetContext(ctx, &completed, `SELECT clock_timestamp()`); err != nil {
		return nil, err
	}
	imp.Status, imp.CompletedAt, imp.Results = domain.ImportComplete, &completed, results
	var write func(tx *sql.Tx) error
	var panicked any
	var finishing sync.WaitGroup
	if finish != nil {
		finishing.Go(func() {
			defer func() { panicked = recover() }()
			write = finish(*imp, true)
		})
	}
	_, err := tx.ExecContext(ctx, `UPDATE job_imports
		SET status = 'complete', completed_at = $3, results = $2, payload = ''
		WHERE id = $1`, imp.ID, results, completed)
	finishing.Wait()
	if panicked != nil {
		panic(panicked) // on the caller's goroutine, where the queue recovers it
	}
	if err != nil {
		return nil, err
	}
	return write, nil
}

// liveQueueJob is true while the queue holds a live job of kind $2 for the
// import $1. The containment test is answered by River's GIN index on args.
const liveQueueJob = `EXISTS (SELECT 1 FROM river_job j WHERE j.kind = $2
	AND j.args @> jsonb_build_object('import_id', $1::text) AND j.state IN ` + liveStates + `)`

// FailImport completes an import that could not be processed, with the
// results results builds from its stored payload, and runs finish last in
// the same transaction, given the import as the transaction leaves it and
// told whether it was failed. An import
// already complete is left alone, and so is one a live queue job of kind
// still holds when kind is set (the sweep's check, repeated under the
// row's lock). It returns ErrNotFound for an import that does not exist.
func (s *Store) FailImport(ctx context.Context, id, kind string, results func(payload ImportPayload) (*ImportResults, error), finish func(tx *sql.Tx, imp JobImport, failed bool) error) (failed bool, err error) {
	err = s.inTx(ctx, func(tx *sqlx.Tx) error {
		var row importWithPayload
		err := tx.GetContext(ctx, &row, `SELECT `+importColumns+`, payload, payload_form FROM job_imports WHERE id = $1 FOR UPDATE`, id)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("lock job import: %w", err)
		}
		live := false
		if kind != "" && row.Status != domain.ImportComplete {
			if err := tx.GetContext(ctx, &live, `SELECT `+liveQueueJob, id, kind); err != nil {
				return fmt.Errorf("look up the queue job of import %s: %w", id, err)
			}
		}
		if row.Status != domain.ImportComplete && !live {
			res, err := results(row.payload())
			if err != nil {
				return err
			}
			if _, err := completeImport(ctx, tx, &row.JobImport, res, nil); err != nil {
				return fmt.Errorf("fail job import: %w", err)
			}
			failed = true
		}
		return finish(tx.Tx, row.JobImport, failed)
	})
	return failed, err
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

// QueueJobs is how many queue jobs of a kind are in a state.
type QueueJobs struct {
	Kind  string `db:"kind"`
	State string `db:"state"`
	Count int64  `db:"count"`
}

// QueueDepth counts the queue's jobs waiting or under way, by kind and
// state, for the metrics scrape. The state filter keeps it on River's
// state index: finished jobs, the bulk of the table, are never read.
func (s *Store) QueueDepth(ctx context.Context) ([]QueueJobs, error) {
	var out []QueueJobs
	err := s.db.SelectContext(ctx, &out, `SELECT kind, state::text AS state, count(*) AS count FROM river_job
		WHERE state IN ('available', 'scheduled', 'running', 'retryable') GROUP BY kind, state`)
	if err != nil {
		return nil, fmt.Errorf("queue depth: %w", err)
	}
	return out, nil
}
