// Package testfix holds the fixtures several packages' tests share: an
// account with an API key, waiting for something another goroutine or
// process does, a buffer written concurrently and read by the test, a
// folder a test's PostgreSQL can use, and watching that server's process.
// Only tests import it.
package testfix

import (
	"context"
	"testing"
	"time"

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

// pollEvery is how often Eventually checks: short next to the waits it
// serves, long enough not to busy a core.
const pollEvery = 10 * time.Millisecond

// Eventually checks cond until it holds or timeout passes, and reports
// whether it held. A caller that can say more than "timed out" ignores the
// result and checks the state cond left behind, so a failure shows the
// real values.
func Eventually(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollEvery)
	}
	return true
}
