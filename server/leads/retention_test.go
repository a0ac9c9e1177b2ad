package leads

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/truckjobs/jobboard/domain"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// TestEventRetention back-dates events and delivery attempts: the clean-up
// removes those past 30 days in batches, keeps the rest, and a removed
// event is no longer a position in the feed.
func TestEventRetention(t *testing.T) {
	st := storetest.Store(t)
	ctx := context.Background()
	acct := storetest.NewAccount(t, st, "A")
	db := st.DB()
	var news []store.NewEvent
	for range 7 {
		news = append(news, store.NewEvent{Type: domain.EventApplicationReceived, Data: []byte(`{"id": 1}`)})
	}
	events := storetest.InsertEvents(t, st, acct.AccountID, news)
	now := time.Now()
	// Five events and three attempts past the retention, by a day; the
	// rest a day within it.
	for i, e := range events {
		age := 29 * 24 * time.Hour
		if i < 5 {
			age = EventRetention + 24*time.Hour
		}
		id, _ := store.ParseEventID(e.ID)
		if _, err := db.Exec(`UPDATE events SET created_at = $1 WHERE id = $2`, now.Add(-age), id); err != nil {
			t.Fatal(err)
		}
	}
	var endpoint string
	if err := db.QueryRow(`INSERT INTO webhook_endpoints (account_id, url, events, secret)
		VALUES ($1, 'https://example.com/hook', '{}', 'whsec_x') RETURNING id`, acct.AccountID).Scan(&endpoint); err != nil {
		t.Fatal(err)
	}
	for i, days := range []int{45, 31, 31, 2} {
		id, _ := store.ParseEventID(events[i].ID)
		if _, err := db.Exec(`INSERT INTO webhook_attempts (endpoint_id, event_id, event_type, attempt, attempted_at, duration_ms)
			VALUES ($1, $2, 'driver.application.received', 1, $3, 5)`, endpoint, id, now.AddDate(0, 0, -days)); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := st.RemoveOldEvents(ctx, now.Add(-EventRetention), 2)
	if err != nil || removed != 8 {
		t.Fatalf("removed %d rows (%v), want 5 events and 3 attempts", removed, err)
	}
	var left, attempts int
	if err := db.QueryRow(`SELECT count(*) FROM events`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM webhook_attempts`).Scan(&attempts); err != nil {
		t.Fatal(err)
	}
	if left != 2 || attempts != 1 {
		t.Errorf("%d events and %d attempts left, want 2 and 1", left, attempts)
	}
	feed := &EventService{store: st}
	ctxA := call.WithCaller(ctx, call.Caller{AccountID: acct.AccountID})
	page, err := feed.ListEvents(ctxA, &restv2.ListEventsRequest{})
	if err != nil || len(page.Data) != 2 || page.Data[0].Id != events[5].ID {
		t.Errorf("the feed after the clean-up: %v %v", page, err)
	}
	if _, err := feed.ListEvents(ctxA, &restv2.ListEventsRequest{After: events[0].ID}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("a removed event as after: %v, want InvalidArgument", err)
	}
	// Two days on, the queue's worker removes the two events then 31 days
	// old, and keeps the 4-day-old attempt.
	w := &eventCleaner{store: st, now: func() time.Time { return now.Add(2 * 24 * time.Hour) }}
	if err := w.Work(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM events`).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d events left after the worker (%v), want 0", left, err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM webhook_attempts`).Scan(&attempts); err != nil || attempts != 1 {
		t.Errorf("%d attempts left after the worker (%v), want 1", attempts, err)
	}
}
