package main

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
)

// TestDeliveryReplica: a server with JOBBOARD_WEBHOOK_WORKERS=0 stores
// applications with their deliveries queued but sends none; a second
// process on the same database, with workers, sends each of them once.
func TestDeliveryReplica(t *testing.T) {
	env := migratedEnv(t, "JOBBOARD_CALLBACK_ALLOW_PRIVATE=true")
	acct := createAccount(t, env, "Split Deliveries")
	receiver := newHookReceiver(t)
	api := startService(t, append(env, "JOBBOARD_WEBHOOK_WORKERS=0"))
	code, _, body := api.request("basic", acct.APIKey, "POST", "/api/v2.0/webhooks",
		`{"url":"`+receiver.srv.URL+`/hook","events":["driver.application.received"]}`)
	if code != 201 {
		t.Fatalf("endpoint: %d %s", code, body)
	}
	intake := jobboardv2.NewDriverIntakeServiceClient(api.grpcConn())
	resp, err := intake.SubmitApplications(withKey(internalToken),
		&jobboardv2.SubmitApplicationsRequest{AccountId: acct.ID, Applications: batchOf("split", 5)})
	if err != nil || len(resp.DriverIds) != 5 {
		t.Fatalf("SubmitApplications: %v %v", resp, err)
	}
	_, _, feed := api.request("basic", acct.APIKey, "GET", "/api/v2.0/events?type=driver.application.received", "")
	var events struct{ Data []struct{ ID string } }
	if err := json.Unmarshal([]byte(feed), &events); err != nil || len(events.Data) != 5 {
		t.Fatalf("feed: %s %v", feed, err)
	}

	// Several polls of the queue pass; the deliveries wait in the database.
	hooks := openHookDB(t, env)
	deadline := time.Now().Add(10 * time.Second)
	for queued := 0; queued < 5; {
		if err := hooks.db.Get(&queued, `SELECT count(*) FROM river_job
			WHERE kind = 'webhook_delivery' AND queue = 'webhooks' AND state = 'available'`); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d deliveries queued, want 5", queued)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second)
	receiver.mu.Lock()
	sent := len(receiver.ids)
	receiver.mu.Unlock()
	if sent != 0 {
		t.Fatalf("the server with 0 workers sent %d deliveries", sent)
	}

	startService(t, env)
	receiver.wait(t, 5)
	time.Sleep(500 * time.Millisecond) // room for a duplicate to show
	receiver.mu.Lock()
	got := append([]string(nil), receiver.ids...)
	receiver.mu.Unlock()
	var want []string
	for _, e := range events.Data {
		want = append(want, e.ID)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("deliveries sent by the second process: %v, want each event once: %v", got, want)
	}
}
