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

// Account is an employer account.
type Account struct {
	ID            int64  `db:"id"`
	Name          string `db:"name"`
	WebhookSecret string `db:"webhook_secret"`
	// PreviousWebhookSecret is the secret the last rotation replaced while
	// it still signs beside WebhookSecret; empty once that has ended.
	PreviousWebhookSecret string `db:"previous_webhook_secret"`
}

// SigningSecrets are the secrets a callback is signed with: the current
// one, and the previous one while a rotation's overlap lasts.
func (a Account) SigningSecrets() []string {
	if a.PreviousWebhookSecret == "" {
		return []string{a.WebhookSecret}
	}
	return []string{a.WebhookSecret, a.PreviousWebhookSecret}
}

// NewAccount is what CreateAccount stores: the account and its first key.
type NewAccount struct {
	Name          string
	WebhookSecret string
	KeyHash       string
	KeyPrefix     string
}

// CreateAccount stores an account with its first API key and returns its id.
func (s *Store) CreateAccount(ctx context.Context, a NewAccount) (int64, error) {
	var id int64
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		if err := tx.GetContext(ctx, &id,
			`INSERT INTO accounts (name, webhook_secret) VALUES ($1, $2) RETURNING id`,
			a.Name, a.WebhookSecret); err != nil {
			return fmt.Errorf("insert account: %w", err)
		}
		return insertKey(ctx, tx, id, a.KeyHash, a.KeyPrefix)
	})
	return id, err
}

func insertKey(ctx context.Context, tx *sqlx.Tx, accountID int64, hash, prefix string) error {
	_, err := tx.ExecContext(ctx,
		`INSERT INTO api_keys (account_id, key_hash, key_prefix) VALUES ($1, $2, $3)`,
		accountID, hash, prefix)
	if err != nil {
		return fmt.Errorf("insert api key: %w", err)
	}
	return nil
}

// Account returns one account, or ErrNotFound.
func (s *Store) Account(ctx context.Context, id int64) (Account, error) {
	var a Account
	err := s.db.GetContext(ctx, &a, `
		SELECT id, name, webhook_secret,
		       CASE WHEN previous_webhook_secret_until > now() THEN previous_webhook_secret ELSE '' END AS previous_webhook_secret
		  FROM accounts WHERE id = $1`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return Account{}, ErrNotFound
	}
	if err != nil {
		return Account{}, fmt.Errorf("get account %d: %w", id, err)
	}
	return a, nil
}

// RotateWebhookSecret gives an account a new signing secret; the one it
// replaces goes on signing beside it for overlap.
func (s *Store) RotateWebhookSecret(ctx context.Context, accountID int64, secret string, overlap time.Duration) error {
	res, err := s.db.ExecContext(ctx, `
		UPDATE accounts SET previous_webhook_secret = webhook_secret,
		       previous_webhook_secret_until = now() + $3 * interval '1 microsecond', webhook_secret = $2
		 WHERE id = $1`, accountID, secret, overlap.Microseconds())
	if err != nil {
		return fmt.Errorf("rotate webhook secret: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// AccountSummary is an account as operators list it.
type AccountSummary struct {
	ID         int64     `db:"id" json:"id"`
	Name       string    `db:"name" json:"name"`
	CreatedAt  time.Time `db:"created_at" json:"createdAt"`
	ActiveKeys []string  `db:"-" json:"activeKeys"` // prefixes of unrevoked keys
}

// ListAccounts returns every account with the prefixes of its active keys.
func (s *Store) ListAccounts(ctx context.Context) ([]AccountSummary, error) {
	var rows []struct {
		AccountSummary
		Prefixes pq.StringArray `db:"prefixes"`
	}
	err := s.db.SelectContext(ctx, &rows, `SELECT a.id, a.name, a.created_at,
		coalesce(array_agg(k.key_prefix ORDER BY k.id) FILTER (WHERE k.id IS NOT NULL), '{}') AS prefixes
		FROM accounts a LEFT JOIN api_keys k ON k.account_id = a.id AND k.revoked_at IS NULL
		GROUP BY a.id ORDER BY a.id`)
	if err != nil {
		return nil, fmt.Errorf("list accounts: %w", err)
	}
	out := make([]AccountSummary, len(rows))
	for i, r := range rows {
		out[i] = r.AccountSummary
		out[i].ActiveKeys = []string(r.Prefixes)
	}
	return out, nil
}

// AddAPIKey gives an account another key, so a client can switch keys
// without a moment in which none works.
func (s *Store) AddAPIKey(ctx context.Context, accountID int64, hash, prefix string) error {
	return s.inTx(ctx, func(tx *sqlx.Tx) error {
		if err := lockAccount(ctx, tx, accountID); err != nil {
			return err
		}
		return insertKey(ctx, tx, accountID, hash, prefix)
	})
}

// APIKey is a key as operators list it: never the key, only its id,
// prefix and dates.
type APIKey struct {
	ID        int64      `db:"id" json:"id"`
	Prefix    string     `db:"key_prefix" json:"prefix"`
	CreatedAt time.Time  `db:"created_at" json:"createdAt"`
	RevokedAt *time.Time `db:"revoked_at" json:"revokedAt"`
}

// APIKeys lists an account's keys, revoked ones included, oldest first;
// ErrNotFound when there is no such account.
func (s *Store) APIKeys(ctx context.Context, accountID int64) ([]APIKey, error) {
	if _, err := s.Account(ctx, accountID); err != nil {
		return nil, err
	}
	keys := []APIKey{}
	err := s.db.SelectContext(ctx, &keys, `SELECT id, key_prefix, created_at, revoked_at FROM api_keys
		WHERE account_id = $1 ORDER BY id`, accountID)
	if err != nil {
		return nil, fmt.Errorf("list api keys of account %d: %w", accountID, err)
	}
	return keys, nil
}

// KeyHashesInUse returns the hash of every key not revoked, for the key
// cache to answer wrong keys without a lookup (keycache.KnowAll).
func (s *Store) KeyHashesInUse(ctx context.Context) ([]string, error) {
	var hashes []string
	err := s.db.SelectContext(ctx, &hashes, `SELECT key_hash FROM api_keys WHERE revoked_at IS NULL`)
	return hashes, err
}
