package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/internal/testfix"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// keysOf lists an object's keys, sorted.
func keysOf(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestImportsShowShape: imports show prints one camelCase shape: the API's
// import object, every count included (zeros too), then the operator's
// fields and the callback attempts. It used to mix snake_case attempts with
// camelCase fields and print the stored results, which leave zeros out. The
// callback URL is shown by its scheme and host only, as in logs: its path and
// query may carry the receiver's secret.
func TestImportsShowShape(t *testing.T) {
	env := []string{"DATABASE_URL=" + storetest.URL(t)}
	svc := startService(t, append(env, "JOBBOARD_CALLBACK_ALLOW_PRIVATE=true"))
	a := createAccount(t, env, "Shown Carrier")
	delivered := make(chan struct{}, 1)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		delivered <- struct{}{}
	}))
	defer receiver.Close()
	// One job added and one failed: unchanged, updated and deleted are 0.
	body := `{"jobs": [{"referenceNumber": "S1", "title": "Yard Jockey", "state": "OH", "driverType": "Company Driver",
	  "freightType": "Yard Spotter", "description": "<p>Nights.</p>"}, {"referenceNumber": "S2"}],
	  "callbackUrl": "` + receiver.URL + `/hook/s3cret?token=s3cret"}`
	code, _, created := svc.request("basic", a.APIKey, "POST", "/api/v2.0/job-imports", body)
	var imp struct {
		Data  map[string]any
		Links struct{ Self string }
	}
	if err := json.Unmarshal([]byte(created), &imp); err != nil || code != 202 {
		t.Fatalf("create: %d %s", code, created)
	}
	select {
	case <-delivered:
	case <-time.After(20 * time.Second):
		t.Fatal("callback did not arrive")
	}
	id := imp.Data["id"].(string)
	var shown map[string]any
	testfix.Eventually(10*time.Second, func() bool {
		shown = nil
		_ = json.Unmarshal([]byte(runCommand(t, env, "imports", "show", id)), &shown)
		attempts, _ := shown["callbackAttempts"].([]any)
		return len(attempts) == 1
	})
	_, _, got := svc.request("basic", a.APIKey, "GET", strings.TrimPrefix(imp.Links.Self, svc.httpBase), "")
	var api struct{ Data map[string]any }
	if err := json.Unmarshal([]byte(got), &api); err != nil {
		t.Fatalf("get: %s", got)
	}
	attempts, _ := shown["callbackAttempts"].([]any)
	if len(attempts) != 1 {
		t.Fatalf("imports show: %v", shown)
	}
	attempt, _ := attempts[0].(map[string]any)
	results, _ := shown["results"].(map[string]any)
	attemptedAt, _ := attempt["attemptedAt"].(string)
	tests := []struct {
		name      string
		got, want any
	}{
		{"top-level keys", keysOf(shown), []string{"accountId", "callbackAttempts", "callbackUrl", "completedAt", "deleteJobs",
			"id", "requestId", "requestedAt", "results", "status"}},
		{"attempt keys", keysOf(attempt), []string{"attempt", "attemptedAt", "durationMs", "error", "statusCode", "webhookId"}},
		{"result keys, zero counts included", keysOf(results), []string{"added", "deleted", "errors", "failed", "ignoredValues",
			"processed", "unchanged", "updated"}},
		{"zero count", results["deleted"], 0.0},
		{"count", results["added"], 1.0},
		{"the API's import object", map[string]any{"id": shown["id"], "requestedAt": shown["requestedAt"],
			"completedAt": shown["completedAt"], "results": shown["results"], "status": shown["status"]}, api.Data},
		{"account", shown["accountId"], float64(a.ID)},
		{"callback URL: scheme and host only", shown["callbackUrl"], receiver.URL + "/..."},
		{"attempt's status code", attempt["statusCode"], 200.0},
		{"attempt's time in the API's format", len(attemptedAt), len("2006-01-02T15:04:05.000000Z")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !reflect.DeepEqual(tt.got, tt.want) {
				t.Errorf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
}
