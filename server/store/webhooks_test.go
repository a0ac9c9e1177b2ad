package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/domain"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
	"github.com/truckjobs/jobboard/server/webhook"
)

// TestWebhookURLChangeClearsFailures: a new url starts with a clean
// record; other changes, and the same url again, keep the run of failures.
func TestWebhookURLChangeClearsFailures(t *testing.T) {
	t.Parallel()
	st := storetest.Store(t)
	ctx := context.Background()
	account := storetest.NewAccount(t, st, "A").AccountID
	e, err := st.CreateWebhookEndpoint(ctx, account, store.NewWebhookEndpoint{URL: "https://1.1.1.1/a",
		Events: []string{string(domain.EventApplicationReceived)}, Secret: webhook.NewSecret()})
	if err != nil {
		t.Fatal(err)
	}
	fail := func() {
		t.Helper()
		if _, err := st.DB().Exec(`UPDATE webhook_endpoints SET failing_since = now() - interval '1 day' WHERE id = $1`, e.ID); err != nil {
			t.Fatal(err)
		}
	}
	same, other, desc := "https://1.1.1.1/a", "https://1.1.1.1/b", "new"
	tests := []struct {
		name    string
		change  store.WebhookEndpointChange
		cleared bool
	}{
		{"description", store.WebhookEndpointChange{SetDescription: true, Description: &desc}, false},
		{"same url", store.WebhookEndpointChange{URL: &same}, false},
		{"events", store.WebhookEndpointChange{Events: []string{string(domain.EventImportCompleted)}}, false},
		{"new url", store.WebhookEndpointChange{URL: &other}, true},
	}
	for _, tt := range tests {
		fail()
		got, err := st.UpdateWebhookEndpoint(ctx, account, e.ID, tt.change)
		if err != nil {
			t.Fatal(err)
		}
		if cleared := got.FailingSince == nil; cleared != tt.cleared {
			t.Errorf("%s: failing_since %v, want cleared %v", tt.name, got.FailingSince, tt.cleared)
		}
	}
}

// TestWebhookCreateDoesNotWaitForImport: a create does not wait for a
// transaction holding the account's row, as a running import does.
func TestWebhookCreateDoesNotWaitForImport(t *testing.T) {
	t.Parallel()
	st := storetest.Store(t)
	account := storetest.NewAccount(t, st, "A").AccountID
	tx, err := st.DB().Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`SELECT id FROM accounts WHERE id = $1 FOR NO KEY UPDATE`, account); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err = st.CreateWebhookEndpoint(ctx, account, store.NewWebhookEndpoint{URL: "https://1.1.1.1/a",
		Events: []string{string(domain.EventApplicationReceived)}, Secret: webhook.NewSecret()})
	if err != nil {
		t.Errorf("create while the account's row is held: %v", err)
	}
}
