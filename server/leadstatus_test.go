package server

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/domain"
	"github.com/truckjobs/jobboard/server/store"
)

// TestWithdrawnDriverAppliesAgainEvent: a new application from a driver
// who withdrew makes the driver new again, and the account's feed has its
// driver.status.changed event after the application's own; the driver's
// first application and the same application sent again have none.
func TestWithdrawnDriverAppliesAgainEvent(t *testing.T) {
	f := newEventsFixture(t)
	ctx := context.Background()
	ann := applicant("Ann", "Lee", "NY", "10001", "Company Driver", "0.5", "2026-01-05T10:00:00Z", "T")
	if err := f.submit(t, f.a.AccountID, ann); err != nil {
		t.Fatal(err)
	}
	var driver int64
	if err := f.st.DB().GetContext(ctx, &driver, `SELECT driver_id FROM applications WHERE account_id = $1`, f.a.AccountID); err != nil {
		t.Fatal(err)
	}
	withdrew := time.Now().UTC().Add(-time.Hour).Truncate(time.Microsecond)
	if err := f.st.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.SetDriverStatuses(ctx, f.a.AccountID, []store.StatusUpdate{{DriverID: driver,
			StatusChange: domain.StatusChange{Status: domain.LeadWithdrawn, Note: "took another offer", ChangedAt: withdrew}}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := f.submit(t, f.a.AccountID, ann); err != nil { // the same again: no event
		t.Fatal(err)
	}
	again := applicant("Ann", "Lee", "NJ", "07030", "Company Driver", "1", "2026-01-09T10:00:00Z", "T")
	if err := f.submit(t, f.a.AccountID, again); err != nil {
		t.Fatal(err)
	}
	page := f.feed(t, f.a.APIKey, "/api/v2.0/events")
	var types []string
	for _, e := range page.Data {
		types = append(types, e.Type)
	}
	want := []string{"driver.application.received", "driver.application.received", "driver.status.changed"}
	if fmt.Sprint(types) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v", types, want)
	}
	st, err := f.st.DriverStatus(ctx, f.a.AccountID, driver)
	if err != nil {
		t.Fatal(err)
	}
	wantData := fmt.Sprintf(`{"driverId":%d,"status":"new","previousStatus":"withdrawn","reason":null,"note":null,"changedAt":%q}`,
		driver, st.ChangedAt.UTC().Format("2006-01-02T15:04:05.000000Z"))
	if got := string(page.Data[2].Data); got != wantData {
		t.Errorf("event data\n%s\nwant\n%s", got, wantData)
	}
	if st.Status != domain.LeadNew || !st.ChangedAt.After(withdrew) {
		t.Errorf("status %+v, want new after %s", st.StatusChange, withdrew)
	}
	// Another account's feed has none of it.
	if other := f.feed(t, f.b.APIKey, "/api/v2.0/events"); len(other.Data) != 0 {
		t.Errorf("B's feed: %d events", len(other.Data))
	}
}
