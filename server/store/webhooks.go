package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// MaxWebhookEndpoints is how many endpoints an account may have.
const MaxWebhookEndpoints = 20

// SecretOverlap is how long a rotated-out secret still signs deliveries,
// beside the new one, so receivers can switch without losing any.
const SecretOverlap = 24 * time.Hour

// ErrTooManyEndpoints is a create beyond MaxWebhookEndpoints.
var ErrTooManyEndpoints = errors.New("too many webhook endpoints")

// WebhookAuth is what a delivery's Authorization header carries.
type WebhookAuth struct {
	// Type is basic or bearer.
	Type string
	// Username is the Basic user name; nil for bearer.
	Username *string
	// Secret is the Basic password or the bearer token: sent, never shown.
	Secret string
}

// WebhookEndpoint is a stored endpoint of an account.
type WebhookEndpoint struct {
	// ID is the UUID; EndpointID(ID) is its public form.
	ID          string         `db:"id"`
	AccountID   int64          `db:"account_id"`
	URL         string         `db:"url"`
	Events      pq.StringArray `db:"events"`
	Description *string        `db:"description"`
	AuthType    *string        `db:"auth_type"`
	// AuthUsername and AuthSecret go with AuthType; AuthSecret is the Basic
	// password or the bearer token.
	AuthUsername            *string    `db:"auth_username"`
	AuthSecret              *string    `db:"auth_secret"`
	Enabled                 bool       `db:"enabled"`
	CreatedAt               time.Time  `db:"created_at"`
	DisabledAt              *time.Time `db:"disabled_at"`
	DisabledReason          *string    `db:"disabled_reason"`
	Secret                  string     `db:"secret"`
	PreviousSecret          *string    `db:"previous_secret"`
	PreviousSecretExpiresAt *time.Time `db:"previous_secret_expires_at"`
	Generation              int        `db:"generation"`
	FailingSince            *time.Time `db:"failing_since"`
}

const endpointColumns = `id, account_id, url, events, description, auth_type, auth_username, auth_secret,
	enabled, created_at, disabled_at, disabled_reason, secret, previous_secret, previous_secret_expires_at,
	generation, failing_since`

// NewWebhookEndpoint is an endpoint to create, already validated.
type NewWebhookEndpoint struct {
	URL         string
	Events      []string
	Description *string
	Auth        *WebhookAuth
	Secret      string
	// Disabled creates it disabled, for reason manual.
	Disabled bool
}

// endpointCreateLock is the class (first key) of the advisory locks that
// serialise the endpoint creates of one account; the account id is the
// second key.
const endpointCreateLock = 17_0001

// CreateWebhookEndpoint adds an endpoint to the account, or fails with
// ErrTooManyEndpoints when it has MaxWebhookEndpoints already. The count is
// taken under an advisory lock of the account's, so concurrent creates
// cannot both pass it. Not the account's row lock: a running import holds
// that for its whole transaction, and a create would wait it out.
func (s *Store) CreateWebhookEndpoint(ctx context.Context, accountID int64, e NewWebhookEndpoint) (WebhookEndpoint, error) {
	var out WebhookEndpoint
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		// The id is folded into the int4 key; two accounts that share a
		// key only take turns creating endpoints.
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1, ($2::bigint & 2147483647)::int4)`,
			endpointCreateLock, accountID); err != nil {
			return fmt.Errorf("lock webhook endpoints of account %d: %w", accountID, err)
		}
		var n int
		if err := tx.GetContext(ctx, &n, `SELECT count(*) FROM webhook_endpoints WHERE account_id = $1`, accountID); err != nil {
			return fmt.Errorf("count webhook endpoints: %w", err)
		}
		if n >= MaxWebhookEndpoints {
			return ErrTooManyEndpoints
		}
		authType, username, secret := authColumns(e.Auth)
		err := tx.GetContext(ctx, &out, `INSERT INTO webhook_endpoints
			(account_id, url, events, description, auth_type, auth_username, auth_secret, secret,
			 enabled, disabled_at, disabled_reason)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NOT $9,
			 CASE WHEN $9 THEN now() END, CASE WHEN $9 THEN 'manual' END) RETURNING `+endpointColumns,
			accountID, e.URL, pq.Array(e.Events), e.Description, authType, username, secret, e.Secret, e.Disabled)
		if err != nil {
			return fmt.Errorf("insert webhook endpoint: %w", err)
		}
		return nil
	})
	return out, err
}

func authColumns(a *WebhookAuth) (authType, username, secret *string) {
	if a == nil {
		return nil, nil, nil
	}
	return &a.Type, a.Username, &a.Secret
}

// WebhookEndpoints returns the account's endpoints, oldest first.
func (s *Store) WebhookEndpoints(ctx context.Context, accountID int64) ([]WebhookEndpoint, error) {
	out := []WebhookEndpoint{}
	err := s.db.SelectContext(ctx, &out, `SELECT `+endpointColumns+` FROM webhook_endpoints
		WHERE account_id = $1 ORDER BY created_at, id`, accountID)
	if err != nil {
		return nil, fmt.Errorf("list webhook endpoints: %w", err)
	}
	return out, nil
}

// WebhookEndpoint returns one endpoint of the account by UUID, or
// ErrNotFound (another account's included).
func (s *Store) WebhookEndpoint(ctx context.Context, accountID int64, id string) (WebhookEndpoint, error) {
	var out WebhookEndpoint
	err := s.db.GetContext(ctx, &out, `SELECT `+endpointColumns+` FROM webhook_endpoints
		WHERE account_id = $1 AND id = $2`, accountID, id)
	return out, endpointError("get webhook endpoint", err)
}

// WebhookEndpointChange is a partial update: nil (or false Set*) leaves a
// field as it is.
type WebhookEndpointChange struct {
	URL    *string
	Events []string
	// SetDescription replaces the description with Description (nil clears it).
	SetDescription bool
	Description    *string
	// SetAuth replaces the credentials with Auth (nil removes them).
	SetAuth bool
	Auth    *WebhookAuth
	// Enabled true on a disabled endpoint enables it under a new
	// generation, clearing why it was disabled and its run of failures;
	// false disables it, for reason manual.
	Enabled *bool
}

// UpdateWebhookEndpoint applies a change to an endpoint of the account and
// returns it as changed, or ErrNotFound. A new url clears the run of
// failures: they were another receiver's.
func (s *Store) UpdateWebhookEndpoint(ctx context.Context, accountID int64, id string, c WebhookEndpointChange) (WebhookEndpoint, error) {
	authType, username, secret := authColumns(c.Auth)
	enable := c.Enabled != nil && *c.Enabled
	disable := c.Enabled != nil && !*c.Enabled
	var events any
	if c.Events != nil {
		events = pq.Array(c.Events)
	}
	// Every right-hand side reads the row as it was before the update.
	var out WebhookEndpoint
	err := s.db.GetContext(ctx, &out, `UPDATE webhook_endpoints SET
		url = COALESCE($3, url),
		events = COALESCE($4::text[], events),
		description = CASE WHEN $5 THEN $6 ELSE description END,
		auth_type = CASE WHEN $7 THEN $8 ELSE auth_type END,
		auth_username = CASE WHEN $7 THEN $9 ELSE auth_username END,
		auth_secret = CASE WHEN $7 THEN $10 ELSE auth_secret END,
		generation = CASE WHEN $11 AND NOT enabled THEN generation + 1 ELSE generation END,
		failing_since = CASE WHEN ($11 AND NOT enabled) OR ($3::text IS NOT NULL AND $3 <> url) THEN NULL
			ELSE failing_since END,
		disabled_reason = CASE WHEN $11 THEN NULL WHEN $12 AND enabled THEN 'manual' ELSE disabled_reason END,
		disabled_at = CASE WHEN $11 THEN NULL WHEN $12 AND enabled THEN now() ELSE disabled_at END,
		enabled = CASE WHEN $11 THEN true WHEN $12 THEN false ELSE enabled END
		WHERE account_id = $1 AND id = $2 RETURNING `+endpointColumns,
		accountID, id, c.URL, events, c.SetDescription, c.Description,
		c.SetAuth, authType, username, secret, enable, disable)
	return out, endpointError("update webhook endpoint", err)
}

// DeleteWebhookEndpoint removes an endpoint of the account and its attempts,
// or fails with ErrNotFound. Its pending deliveries find it gone and stop.
func (s *Store) DeleteWebhookEndpoint(ctx context.Context, accountID int64, id string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM webhook_endpoints WHERE account_id = $1 AND id = $2`, accountID, id)
	if err != nil {
		return fmt.Errorf("delete webhook endpoint: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("delete webhook endpoint: %w", err)
	} else if n == 0 {
		return ErrNotFound
	}
	return nil
}

// RotateEndpointSecret gives an endpoint of the account a new signing
// secret; the old one keeps signing, beside it, for SecretOverlap.
func (s *Store) RotateEndpointSecret(ctx context.Context, accountID int64, id, secret string) (WebhookEndpoint, error) {
	var out WebhookEndpoint
	err := s.db.GetContext(ctx, &out, `UPDATE webhook_endpoints SET
		previous_secret = secret, previous_secret_expires_at = now() + $4 * interval '1 second', secret = $3
		WHERE account_id = $1 AND id = $2 RETURNING `+endpointColumns,
		accountID, id, secret, int64(SecretOverlap/time.Second))
	return out, endpointError("rotate webhook secret", err)
}

func endpointError(what string, err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
