package server

import (
	"context"
	"crypto/rand"
	"math/big"
	"strings"

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

const (
	apiKeyPrefix = "jb_live_"
	// apiKeyDigits is enough base62 digits for 32 random bytes (62^43 > 2^256).
	apiKeyDigits = 43
	// keyPrefixShown is how much of a key is kept in clear to name it.
	keyPrefixShown = len(apiKeyPrefix) + 6
)

// newAPIKey returns a fresh key: jb_live_ and 32 random bytes in base62.
func newAPIKey() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	digits := new(big.Int).SetBytes(b).Text(62)
	return apiKeyPrefix + strings.Repeat("0", apiKeyDigits-len(digits)) + digits
}

// CreateAccount stores a new account with a first API key and a webhook
// signing secret and returns them; the key cannot be read back later.
func CreateAccount(ctx context.Context, st *store.Store, name string) (Credentials, error) {
	c := Credentials{Name: name, APIKey: newAPIKey(), WebhookSecret: webhook.NewSecret()}
	id, err := st.CreateAccount(ctx, store.NewAccount{
		Name:          name,
		WebhookSecret: c.WebhookSecret,
		KeyHash:       HashAPIKey(c.APIKey),
		KeyPrefix:     KeyPrefix(c.APIKey),
	})
	c.AccountID = id
	return c, err
}

// RotateWebhookSecret gives an account a new signing secret and returns it;
// callbacks sent from then on are signed with it.
func RotateWebhookSecret(ctx context.Context, st *store.Store, accountID int64) (string, error) {
	secret := webhook.NewSecret()
	return secret, st.RotateWebhookSecret(ctx, accountID, secret)
}

// NewKey is a key created for an existing account, shown once.
type NewKey struct {
	AccountID int64  `json:"accountId"`
	APIKey    string `json:"apiKey"`
	Prefix    string `json:"prefix"`
}

// CreateAPIKey adds a key to an account.
func CreateAPIKey(ctx context.Context, st *store.Store, accountID int64) (NewKey, error) {
	key := newAPIKey()
	k := NewKey{AccountID: accountID, APIKey: key, Prefix: KeyPrefix(key)}
	return k, st.AddAPIKey(ctx, accountID, HashAPIKey(key), k.Prefix)
}

// KeyPrefix is the part of a key kept in clear to name it.
func KeyPrefix(key string) string {
	if len(key) < keyPrefixShown {
		return key
	}
	return key[:keyPrefixShown]
}

// IsAPIKey reports whether s has the form of a whole key, as NewAPIKey
// makes them, so that a prefix or a typo is not taken for one.
func IsAPIKey(s string) bool {
	digits, ok := strings.CutPrefix(s, apiKeyPrefix)
	if !ok || len(digits) != apiKeyDigits {
		return false
	}
	for _, r := range digits {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') {
			return false
		}
	}
	return true
}
