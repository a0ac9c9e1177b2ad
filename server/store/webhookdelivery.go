package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/truckjobs/jobboard/domain"
)

// DeliveryEndpoint is what a delivery needs of a webhook endpoint.
type DeliveryEndpoint struct {
	// ID is the endpoint's UUID.
	ID         string  `db:"id"`
	AccountID  int64   `db:"account_id"`
	URL        string  `db:"url"`
	Enabled    bool    `db:"enabled"`
	Generation int     `db:"generation"`
	Secret     string  `db:"secret"`
	AuthType   *string `db:"auth_type"`
	// AuthUsername and AuthSecret are the Basic credentials, or AuthSecret
	// the bearer token.
	AuthUsername            *string    `db:"auth_username"`
	AuthSecret              *string    `db:"auth_secret"`
	PreviousSecret          *string    `db:"previous_secret"`
	PreviousSecretExpiresAt *time.Time `db:"previous_secret_expires_at"`
}

// SigningSecrets are the secrets a delivery at now is signed with: the
// current one, and the one before the last rotation until it expires.
func (e DeliveryEndpoint) SigningSecrets(now time.Time) []string {
	secrets := []string{e.Secret}
	if e.PreviousSecret != nil && e.PreviousSecretExpiresAt != nil && now.Before(*e.PreviousSecretExpiresAt) {
		secrets = append(secrets, *e.PreviousSecret)
	}
	return secrets
}

// DeliveryEndpointByID returns the endpoint with UUID id whatever its
// account, or ErrNotFound.
func (s *Store) DeliveryEndpointByID(ctx context.Context, id string) (DeliveryEndpoint, error) {
	var e DeliveryEndpoint
	err := s.db.GetContext(ctx, &e, `SELECT id, account_id, url, enabled, generation, secret, auth_type,
		auth_username, auth_secret, previous_secret, previous_secret_expires_at
		FROM webhook_endpoints WHERE id = $1`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return e, ErrNotFound
	}
	if err != nil {
		return e, fmt.Errorf("webhook endpoint: %w", err)
	}
	return e, nil
}

// AccountEndpoint returns the account's endpoint with public id
// we_…: its UUID, whether it is enabled and its generation. A malformed id
// or another account's endpoint is ErrNotFound.
func (t *Tx) AccountEndpoint(ctx context.Context, accountID int64, publicID string) (DeliveryTarget, bool, error) {
	id, ok := ParseEndpointID(publicID)
	if !ok {
		return DeliveryTarget{}, false, ErrNotFound
	}
	target := DeliveryTarget{EndpointID: id}
	var enabled bool
	err := t.tx.QueryRowContext(ctx, `SELECT generation, enabled FROM webhook_endpoints
		WHERE id = $1 AND account_id = $2`, id, accountID).Scan(&target.Generation, &enabled)
	if errors.Is(err, sql.ErrNoRows) {
		return target, false, ErrNotFound
	}
	if err != nil {
		return target, false, fmt.Errorf("webhook endpoint: %w", err)
	}
	return target, enabled, nil
}

// EventByUUID returns the event with UUID id whatever its account, or
// ErrNotFound (the clean-up may have removed it).
func (s *Store) EventByUUID(ctx context.Context, id string) (Event, error) {
	return scanEvent(s.db.QueryRowContext(ctx, `SELECT id, account_id, seq, type, created_at, data
		FROM events WHERE id = $1`, id))
}

// AccountEvent returns the account's event with public id evt_…;
// a malformed id or another account's event is ErrNotFound.
func (t *Tx) AccountEvent(ctx context.Context, accountID int64, publicID string) (Event, error) {
	id, ok := ParseEventID(publicID)
	if !ok {
		return Event{}, ErrNotFound
	}
	return scanEvent(t.tx.QueryRowContext(ctx, `SELECT id, account_id, seq, type, created_at, data
		FROM events WHERE id = $1 AND account_id = $2`, id, accountID))
}

func scanEvent(row *sql.Row) (Event, error) {
	var e Event
	var data string
	err := row.Scan(&e.ID, &e.AccountID, &e.Seq, &e.Type, &e.CreatedAt, &data)
	if errors.Is(err, sql.ErrNoRows) {
		return e, ErrNotFound
	}
	if err != nil {
		return e, fmt.Errorf("event: %w", err)
	}
	e.ID, e.Data = EventID(e.ID), []byte(data)
	return e, nil
}

// WebhookAttempt is one delivery attempt of an event to an endpoint.
type WebhookAttempt struct {
	// EndpointID and EventID are UUIDs.
	EndpointID  string
	EventID     string
	EventType   domain.EventType
	Attempt     int
	AttemptedAt time.Time
	// StatusCode is nil when no answer came; Error is nil after an answer.
	StatusCode *int
	Error      *string
	DurationMS int
}

// RecordWebhookAttempt logs one delivery attempt.
func (s *Store) RecordWebhookAttempt(ctx context.Context, a WebhookAttempt) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO webhook_attempts
		(endpoint_id, event_id, event_type, attempt, attempted_at, status_code, error, duration_ms)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		a.EndpointID, a.EventID, a.EventType, a.Attempt, a.AttemptedAt, a.StatusCode, a.Error, a.DurationMS)
	if err != nil {
		return fmt.Errorf("record webhook attempt: %w", err)
	}
	return nil
}

// WebhookAttempts returns the latest limit attempts to the account's
// endpoint with public id we_…, newest first; ErrNotFound when the account
// has no such endpoint.
func (s *Store) WebhookAttempts(ctx context.Context, accountID int64, publicID string, limit int) ([]WebhookAttempt, error) {
	id, ok := ParseEndpointID(publicID)
	if !ok {
		return nil, ErrNotFound
	}
	var exists bool
	if err := s.db.GetContext(ctx, &exists, `SELECT EXISTS (SELECT 1 FROM webhook_endpoints
		WHERE id = $1 AND account_id = $2)`, id, accountID); err != nil {
		return nil, fmt.Errorf("webhook attempts: %w", err)
	}
	if !exists {
		return nil, ErrNotFound
	}
	rows, err := s.db.QueryContext(ctx, `SELECT event_id, event_type, attempt, attempted_at, status_code, error, duration_ms
		FROM webhook_attempts WHERE endpoint_id = $1 ORDER BY id DESC LIMIT $2`, id, limit)
	if err != nil {
		return nil, fmt.Errorf("webhook attempts: %w", err)
	}
	defer rows.Close()
	out := []WebhookAttempt{}
	for rows.Next() {
		a := WebhookAttempt{EndpointID: id}
		if err := rows.Scan(&a.EventID, &a.EventType, &a.Attempt, &a.AttemptedAt, &a.StatusCode, &a.Error, &a.DurationMS); err != nil {
			return nil, fmt.Errorf("webhook attempts: %w", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("webhook attempts: %w", err)
	}
	return out, nil
}

// WebhookDelivered ends the endpoint's run of failures after a success.
func (s *Store) WebhookDelivered(ctx context.Context, endpointID string) error {
	if _, err := s.db.ExecContext(ctx, `UPDATE webhook_endpoints SET failing_since = NULL
		WHERE id = $1 AND failing_since IS NOT NULL`, endpointID); err != nil {
		return fmt.Errorf("webhook delivered: %w", err)
	}
	return nil
}

// WebhookFailed records a failed attempt at now on the endpoint, under the
// generation its delivery was queued in: its run of failures starts now
// unless one is under way, and when that run began at or before
// disableBefore, the endpoint is disabled as failing. It reports whether
// this call disabled it; one statement, so of two workers failing at once
// only one does.
func (s *Store) WebhookFailed(ctx context.Context, endpointID string, generation int, now, disableBefore time.Time) (bool, error) {
	var disabled bool
	// Columns on the right of SET are the row as locked, so a concurrent
	// update is seen, not a stale read.
	err := s.db.QueryRowContext(ctx, `UPDATE webhook_endpoints
		SET failing_since = COALESCE(failing_since, $3),
		    enabled = COALESCE(failing_since, $3) > $4,
		    disabled_at = CASE WHEN COALESCE(failing_since, $3) <= $4 THEN $3::timestamptz END,
		    disabled_reason = CASE WHEN COALESCE(failing_since, $3) <= $4 THEN 'failing' END
		WHERE id = $1 AND enabled AND generation = $2
		RETURNING NOT enabled`, endpointID, generation, now, disableBefore).Scan(&disabled)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("webhook failed: %w", err)
	}
	return disabled, nil
}

// DisableWebhookGone disables the endpoint after its receiver answered 410
// to a delivery of the given generation; it reports whether this call did.
func (s *Store) DisableWebhookGone(ctx context.Context, endpointID string, generation int, now time.Time) (bool, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE webhook_endpoints
		SET enabled = false, disabled_at = $3, disabled_reason = 'gone'
		WHERE id = $1 AND enabled AND generation = $2`, endpointID, generation, now)
	if err != nil {
		return false, fmt.Errorf("disable webhook endpoint: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// endpointActionLock is the class (first key) of the advisory locks that
// serialise the test and redeliver actions of one endpoint; the second key
// is a hash of the endpoint's UUID.
const endpointActionLock = 17_0002

// QueuedEndpointActions takes, for the rest of the transaction, the lock of the actions
// of the endpoint with UUID endpointID and counts its action deliveries
// still queued: jobs of kind whose args name the endpoint (endpoint_id) and
// an action (action), not yet completed, cancelled or discarded. Queue an
// action in the same transaction: a concurrent one waits for the lock, then its
// count (a new snapshot, as every statement under READ COMMITTED takes)
// sees this one's job. An advisory lock, not the endpoint's row: deliveries
// update that row after each attempt and would wait on the action.
func (t *Tx) QueuedEndpointActions(ctx context.Context, kind, endpointID string) (int, error) {
	// Two endpoints whose hashes collide only take turns.
	if _, err := t.tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, endpointActionLock, endpointID); err != nil {
		return 0, fmt.Errorf("lock the actions of webhook endpoint %s: %w", EndpointID(endpointID), err)
	}
	var n int
	// The containment test is answered by River's index of args.
	err := t.tx.QueryRowContext(ctx, `SELECT count(*) FROM river_job
		WHERE args @> jsonb_build_object('endpoint_id', $2::text) AND kind = $1 AND args ? 'action'
		AND state IN ('available', 'pending', 'running', 'retryable', 'scheduled')`, kind, endpointID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count the queued actions of webhook endpoint %s: %w", EndpointID(endpointID), err)
	}
	return n, nil
}
