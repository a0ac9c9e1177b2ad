package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/internal/apikey"
	"github.com/truckjobs/jobboard/internal/tcprelay"
	"github.com/truckjobs/jobboard/internal/testfix"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// TestReadsDuringPrimaryOutage: the service reaches its primary through a
// relay that is cut, while its read database (the same data, as a standby
// caught up) still answers. The drivers list and detail answer, over REST
// and gRPC, with a valid key and for an internal caller; a wrong key and a
// key revoked before the outage are refused; a job post fails at once
// with 503. The outage is logged once and counted, and writes succeed
// again once the primary is back.
func TestReadsDuringPrimaryOutage(t *testing.T) {
	direct := storetest.URL(t)
	u, err := url.Parse(direct)
	if err != nil {
		t.Fatal(err)
	}
	relay := tcprelay.Start(t, u.Host)
	env := []string{"DATABASE_URL=" + strings.Replace(direct, u.Host, relay.Addr(), 1), "JOBBOARD_READ_DATABASE_URL=" + direct}
	runCommand(t, env, "migrate")
	a := createAccount(t, env, "Outage")
	driverID := importOneDriver(t, env, direct, a.ID)
	revoked := createKey(t, env, a.ID)
	svc := startService(t, env)
	if out := runCommand(t, env, "keys", "revoke", revoked); !strings.Contains(out, `"revoked":1`) {
		t.Fatalf("keys revoke printed %s", out)
	}

	relay.Cut()
	checkOutageAnswers(t, svc, a, revoked, driverID)
	_, _, body := svc.scrape()
	if n, ok := parseMetrics(t, body).find("jobboard_read_database_auth_lookups_total", nil); !ok || n < 2 {
		t.Errorf("jobboard_read_database_auth_lookups_total %v (%v), want at least 2 (the wrong and the revoked key)", n, ok)
	}
	restored := time.Now()
	relay.Restore()
	post := `[{"referenceNumber":"BACK","title":"Back","state":"OH","driverType":"Student","freightType":"Box","description":"x"}]`
	if !testfix.Eventually(20*time.Second, func() bool {
		code, _, _ := svc.request("basic", a.APIKey, "POST", "/api/v2.0/jobs.json", post)
		return code == 200
	}) {
		t.Errorf("writes did not resume once the primary was back:\n%s", svc.stderr.String())
	}
	t.Logf("figures: writes resumed %.1f s after the primary was back", time.Since(restored).Seconds())
	logs := svc.stderr.String()
	if lines := logLines(logs, "primary database unreachable; API keys are checked on the read database until it is back, so the drivers list and detail and job search keep answering"); len(lines) != 1 {
		t.Errorf("warnings that the primary is down: %d, want 1\n%s", len(lines), logs)
	}
}

// checkOutageAnswers makes the requests of TestReadsDuringPrimaryOutage
// while the primary is unreachable.
func checkOutageAnswers(t *testing.T, svc *service, a account, revoked string, driverID int64) {
	t.Helper()
	for _, r := range []struct{ key, path string }{
		{a.APIKey, "/api/v2.0/drivers.json"},
		{a.APIKey, "/api/v2.0/drivers.xml?max=5"},
		{a.APIKey, fmt.Sprintf("/api/v2.0/drivers.json/%d", driverID)},
	} {
		if code, _, body := svc.request("basic", r.key, "GET", r.path, ""); code != 200 || !strings.Contains(body, "outage@example.com") {
			t.Errorf("%s during the outage: %d %s", r.path, code, body)
		}
	}
	for name, key := range map[string]string{"wrong": apikey.New(), "revoked": revoked} {
		if code, _, body := svc.request("bearer", key, "GET", "/api/v2.0/drivers.json", ""); code != 401 {
			t.Errorf("a %s key during the outage: %d %s, want 401", name, code, body)
		}
	}
	start := time.Now()
	code, _, body := svc.request("basic", a.APIKey, "POST", "/api/v2.0/jobs.json", `[{"referenceNumber":"X1","title":"T","state":"OH","driverType":"Student","freightType":"Box","description":"x"}]`)
	took := time.Since(start)
	t.Logf("figures: a job post during the outage answered %d in %v", code, took.Round(time.Millisecond))
	if code != 503 || took > 2*time.Second {
		t.Errorf("a job post during the outage: %d after %v, want 503 within 2 s: %s", code, took, body)
	}
	drivers := jobboardv2.NewDriverServiceClient(svc.grpcConn())
	internal := metadata.AppendToOutgoingContext(withKey(internalToken), "x-account-id", fmt.Sprint(a.ID))
	for name, ctx := range map[string]context.Context{"key": withKey(a.APIKey), "internal token": internal} {
		if list, err := drivers.ListDrivers(ctx, &jobboardv2.ListDriversRequest{}); err != nil || len(list.GetDrivers()) != 1 {
			t.Errorf("gRPC ListDrivers with the %s during the outage: %v %v", name, list, err)
		}
		if _, err := drivers.GetDriver(ctx, &jobboardv2.GetDriverRequest{Id: driverID}); err != nil {
			t.Errorf("gRPC GetDriver with the %s during the outage: %v", name, err)
		}
	}
	if _, err := drivers.ListDrivers(withKey(revoked), &jobboardv2.ListDriversRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Errorf("gRPC ListDrivers with the revoked key during the outage: %v, want Unauthenticated", err)
	}
}

// importOneDriver imports one applicant of the account and returns its
// id, read from the database at dbURL.
func importOneDriver(t *testing.T, env []string, dbURL string, account int64) int64 {
	t.Helper()
	file := filepath.Join(t.TempDir(), "drivers.json")
	driver := `[{"first_name": "Out", "last_name": "Age", "address": "1 A St", "city": "Omaha", "state": "NE",
		"zip": "68102", "email": "outage@example.com", "phone": "4025550100", "driver_type": "Student",
		"experience": "1", "sent": "2026-10-01T10:00:00Z"}]`
	if err := os.WriteFile(file, []byte(driver), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := runCommand(t, env, "drivers", "import", "--account", fmt.Sprint(account), file); strings.TrimSpace(out) != `{"imported":1}` {
		t.Fatalf("drivers import printed %q", out)
	}
	db, err := sqlx.Open("postgres", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var id int64
	if err := db.Get(&id, `SELECT driver_id FROM applications WHERE account_id = $1`, account); err != nil {
		t.Fatal(err)
	}
	return id
}
