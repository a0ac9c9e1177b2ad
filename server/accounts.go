package server

import (
	"time"

	"context"

	"github.com/truckjobs/jobboard/internal/apikey"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/webhook"
)

// Credentials are an account's secrets, shown once when it is created.
type Credentials struct {
	AccountID     int64  `json:"id"`
	Name          string `json:"name"`
	APIKey        string `json:"apiKey"`
	WebhookSecret string `json:"webhookSecret"`
}

// CreateAccount stores a new account with a first API key and a webhook
// signing secret and returns them; the key cannot be read back later.
func CreateAccount(ctx context.Context, st *store.Store, name string) (Credentials, error) {
	c := Credentials{Name: name, APIKey: apikey.New(), WebhookSecret: webhook.NewSecret()}
	id, err := st.CreateAccount(ctx, store.NewAccount{
		Name:          name,
		WebhookSecret: c.WebhookSecret,
		KeyHash:       apikey.Hash(c.APIKey),
		KeyPrefix:     apikey.Prefix(c.APIKey),
	})
	c.AccountID = id
	return c, err
}

// RotateWebhookSecret gives an account a new signing secret and returns it;
// callbacks sent from then on are signed with it, and for
// AccountSecretOverlap with the one it replaces too, so the employer's
// receiver can move to the new secret without a callback failing.
func RotateWebhookSecret(ctx context.Context, st *store.Store, accountID int64) (string, error) {
	secret := webhook.NewSecret()
	return secret, st.RotateWebhookSecret(ctx, accountID, secret, AccountSecretOverlap)
}

// AccountSecretOverlap is how long an account's replaced callback secret
// goes on signing beside the new one, as a webhook endpoint's does.
const AccountSecretOverlap = 24 * time.Hour

// NewKey is a key created for an existing account, shown once.
type NewKey struct {
	AccountID int64  `json:"accountId"`
	APIKey    string `json:"apiKey"`
	Prefix    string `json:"prefix"`
}

// CreateAPIKey adds a key to an account.
func CreateAPIKey(ctx context.Context, st *store.Store, accountID int64) (NewKey, error) {
	key := apikey.New()
	k := NewKey{AccountID: accountID, APIKey: key, Prefix: apikey.Prefix(key)}
	return k, st.AddAPIKey(ctx, accountID, apikey.Hash(key), k.Prefix)
}
