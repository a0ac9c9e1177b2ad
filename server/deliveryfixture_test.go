package server

import (
	"context"
	"database/sql"
	"strconv"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/truckjobs/jobboard/domain"
	"github.com/truckjobs/jobboard/gateway/render"
	"github.com/truckjobs/jobboard/internal/metrics"
	"github.com/truckjobs/jobboard/internal/testfix"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
	"github.com/truckjobs/jobboard/server/webhook"
)

// deliveryFixture is the services over a fresh database with two
// accounts, and endpoints and events written straight to the database:
// a test fixture standing in for the endpoint API and the outbox.
type deliveryFixture struct {
	svcs       *Services
	st         *store.Store
	metrics    *metrics.Metrics
	accountA   int64
	accountB   int64
	ctxA, ctxB context.Context
}

// newDeliveryFixture starts the queue with a fast retry schedule (two
// retries), cfg changed by change when not nil.
func newDeliveryFixture(t *testing.T, change func(*Config)) *deliveryFixture {
	t.Helper()
	f := newIdleDeliveryFixture(t, change)
	f.start(t)
	return f
}

func newIdleDeliveryFixture(t *testing.T, change func(*Config)) *deliveryFixture {
	t.Helper()
	st := storetest.Store(t)
	m := metrics.New()
	cfg := Config{Now: nowFunc, RenderCallback: render.JSON, AllowPrivateCallbacks: true,
		CallbackRetrySchedule: []time.Duration{10 * time.Millisecond, 20 * time.Millisecond},
		CallbackTimeout:       500 * time.Millisecond, Metrics: m}
	if change != nil {
		change(&cfg)
	}
	svcs, err := NewServices(st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, b := storetest.NewAccount(t, st, "A"), storetest.NewAccount(t, st, "B")
	ctx := context.Background()
	return &deliveryFixture{svcs: svcs, st: st, metrics: m, accountA: a.AccountID, accountB: b.AccountID,
		ctxA: call.WithCaller(ctx, call.Caller{AccountID: a.AccountID}),
		ctxB: call.WithCaller(ctx, call.Caller{AccountID: b.AccountID})}
}

func (f *deliveryFixture) start(t *testing.T) {
	t.Helper()
	(&importFixture{svcs: f.svcs}).start(t)
}

// testEndpoint is an endpoint row the fixture writes.
type testEndpoint struct {
	// ID is the UUID; PublicID the we_ form.
	ID, PublicID, Secret string
}

// endpointOpts are the optional columns of an endpoint.
type endpointOpts struct {
	events                       []string
	authType, username, password string
}

// addEndpoint stores an enabled endpoint of account to url.
func (f *deliveryFixture) addEndpoint(t *testing.T, account int64, url string, o endpointOpts) testEndpoint {
	t.Helper()
	if o.events == nil {
		o.events = domain.Names(domain.SubscribableEventTypes())
	}
	e := testEndpoint{Secret: webhook.NewSecret()}
	null := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	err := f.st.DB().QueryRow(`INSERT INTO webhook_endpoints (account_id, url, events, secret, auth_type, auth_username, auth_secret)
		VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`, account, url, pq.Array(o.events), e.Secret,
		null(o.authType), null(o.username), null(o.password)).Scan(&e.ID)
	if err != nil {
		t.Fatal(err)
	}
	e.PublicID = store.EndpointID(e.ID)
	return e
}

// exec runs a statement on the fixture's database.
func (f *deliveryFixture) exec(t *testing.T, query string, args ...any) {
	t.Helper()
	if _, err := f.st.DB().Exec(query, args...); err != nil {
		t.Fatal(err)
	}
}

// rotate gives the endpoint a new secret; the old one signs for a day.
func (f *deliveryFixture) rotate(t *testing.T, e *testEndpoint) {
	t.Helper()
	e.Secret = webhook.NewSecret()
	f.exec(t, `UPDATE webhook_endpoints SET previous_secret = secret,
		previous_secret_expires_at = now() + interval '24 hours', secret = $2 WHERE id = $1`, e.ID, e.Secret)
}

// disable and enable are what PATCH enabled false/true does to the row.
func (f *deliveryFixture) disable(t *testing.T, e testEndpoint) {
	f.exec(t, `UPDATE webhook_endpoints SET enabled = false, disabled_at = now(), disabled_reason = 'manual' WHERE id = $1`, e.ID)
}

func (f *deliveryFixture) enable(t *testing.T, e testEndpoint) {
	f.exec(t, `UPDATE webhook_endpoints SET enabled = true, disabled_at = NULL, disabled_reason = NULL,
		generation = generation + 1 WHERE id = $1`, e.ID)
}

// emit writes application events of account and queues their deliveries
// in one transaction, as the outbox does.
func (f *deliveryFixture) emit(t *testing.T, account int64, n int) []store.Event {
	t.Helper()
	ctx := context.Background()
	var news []store.NewEvent
	for i := range n {
		news = append(news, store.NewEvent{Type: domain.EventApplicationReceived,
			Data: []byte(`{"id": ` + strconv.Itoa(i+1) + `, "name": "Dana"}`)})
	}
	var events []store.Event
	err := f.st.InTx(ctx, func(tx *store.Tx) error {
		var err error
		events, err = f.svcs.Outbox.Write(ctx, tx, account, news)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return events
}

// endpointState is the endpoint's row as the worker leaves it.
type endpointState struct {
	Enabled      bool
	Reason       sql.NullString
	FailingSince sql.NullTime
}

func (f *deliveryFixture) state(t *testing.T, e testEndpoint) endpointState {
	t.Helper()
	var s endpointState
	err := f.st.DB().QueryRow(`SELECT enabled, disabled_reason, failing_since FROM webhook_endpoints WHERE id = $1`,
		e.ID).Scan(&s.Enabled, &s.Reason, &s.FailingSince)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// settled waits until no delivery job is waiting or running, and returns
// how many ended in each final state.
func (f *deliveryFixture) settled(t *testing.T) map[string]int {
	t.Helper()
	var counts map[string]int
	testfix.Eventually(20*time.Second, func() bool {
		counts = map[string]int{}
		rows, err := f.st.DB().Query(`SELECT state, count(*) FROM river_job WHERE kind = 'webhook_delivery' GROUP BY state`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var state string
			var n int
			if err := rows.Scan(&state, &n); err != nil {
				t.Fatal(err)
			}
			counts[state] = n
		}
		return counts["available"]+counts["scheduled"]+counts["running"]+counts["retryable"]+counts["pending"] == 0
	})
	return counts
}

// attempts lists the endpoint's attempts, newest first, once there are n.
func (f *deliveryFixture) attempts(t *testing.T, account int64, e testEndpoint, n int) []store.WebhookAttempt {
	t.Helper()
	var got []store.WebhookAttempt
	testfix.Eventually(20*time.Second, func() bool {
		var err error
		if got, err = f.st.WebhookAttempts(context.Background(), account, e.PublicID, 1000); err != nil {
			t.Fatal(err)
		}
		return len(got) >= n
	})
	return got
}
