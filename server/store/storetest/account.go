package storetest

import (
	"context"
	"testing"

	"github.com/truckjobs/jobboard/internal/apikey"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/webhook"
)

// Account is an account a test created, with the secrets it was given.
type Account struct {
	AccountID     int64
	APIKey        string
	KeyHash       string // the key as the store holds it
	KeyPrefix     string
	WebhookSecret string
}

// NewAccount stores an account named name in st with one new API key and
// a webhook signing secret, of the forms the service makes, so the key
// authenticates through the service and the gateway.
func NewAccount(t testing.TB, st *store.Store, name string) Account {
	t.Helper()
	a := Account{APIKey: apikey.New(), WebhookSecret: webhook.NewSecret()}
	a.KeyHash, a.KeyPrefix = apikey.Hash(a.APIKey), apikey.Prefix(a.APIKey)
	id, err := st.CreateAccount(context.Background(), store.NewAccount{
		Name: name, WebhookSecret: a.WebhookSecret, KeyHash: a.KeyHash, KeyPrefix: a.KeyPrefix,
	})
	if err != nil {
		t.Fatalf("create account %q: %v", name, err)
	}
	a.AccountID = id
	return a
}
