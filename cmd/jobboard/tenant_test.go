package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/internal/testfix"
)

// TestTenantIsolationSweep: account B, holding account A's ids, reference
// numbers and import id, calls every REST route and every gRPC method with
// its own key (and the internal token acting for B). Each answer is a 404,
// a missingErrors entry or a list without A's records; no answer carries
// A's data; and A's records read the same afterwards. The gRPC methods are
// taken from the registered descriptors, so a new method without a case
// fails the test.
func TestTenantIsolationSweep(t *testing.T) {
	env := migratedEnv(t)
	a := createAccount(t, env, "Alpha")
	b := createAccount(t, env, "Bravo")
	svc := startService(t, append(env, "JOBBOARD_CALLBACK_ALLOW_PRIVATE=true"))

	// A's records: a job, an applicant who applied to it, an import.
	const secretTitle, secretEmail = "Alpha Secret Route", "alpha.only@example.com"
	code, _, body := svc.request("basic", a.APIKey, "POST", "/api/v2.0/jobs.json",
		`[{"referenceNumber":"ALPHA1","title":"`+secretTitle+`","state":"TX","driverType":"Student","freightType":"Box","description":"x"}]`)
	if code != 200 || !strings.Contains(body, `"added":1`) {
		t.Fatalf("A's post: %d %s", code, body)
	}
	var jobs []struct{ ID int64 }
	_, _, body = svc.request("basic", a.APIKey, "GET", "/api/v2.0/jobs.json", "")
	if err := json.Unmarshal([]byte(body), &jobs); err != nil || len(jobs) != 1 {
		t.Fatalf("A's jobs: %s", body)
	}
	jobID := jobs[0].ID
	file := filepath.Join(t.TempDir(), "drivers.json")
	app := `[{"first_name":"Al","last_name":"Pha","address":"1 A St","city":"Omaha","state":"NE","zip":"68102",
		"email":"` + secretEmail + `","phone":"4025550100","driver_type":"Student","experience":"1",
		"sent":"2026-10-01T10:00:00+00:00","job_applications":[{"reference":"ALPHA1","is_direct_app":true,
		"created_at":"2026-10-01T11:00:00+00:00"}]}]`
	if err := os.WriteFile(file, []byte(app), 0o644); err != nil {
		t.Fatal(err)
	}
	runCommand(t, env, "drivers", "import", "--account", fmt.Sprint(a.ID), file)
	_, _, body = svc.request("basic", a.APIKey, "GET", "/api/v2.0/drivers.json", "")
	var drivers []struct{ ID int64 }
	if err := json.Unmarshal([]byte(body), &drivers); err != nil || len(drivers) != 1 {
		t.Fatalf("A's drivers: %s", body)
	}
	driverID := drivers[0].ID
	code, hdr, body := svc.request("basic", a.APIKey, "POST", "/api/v2.0/job-imports",
		`{"jobs":[{"referenceNumber":"ALPHA2","title":"`+secretTitle+`","state":"TX","driverType":"Student","freightType":"Box","description":"x"}],"callbackUrl":"http://127.0.0.1:9/alpha-callback"}`)
	if code != 202 {
		t.Fatalf("A's import: %d %s", code, body)
	}
	importPath := strings.TrimPrefix(hdr.Get("Location"), svc.httpBase)
	importID := importPath[strings.LastIndex(importPath, "/")+1:]

	// A's webhook endpoint, and A's first event (the application's).
	code, _, body = svc.request("basic", a.APIKey, "POST", "/api/v2.0/webhooks",
		`{"url":"http://127.0.0.1:9/alpha-hook","description":"alpha hook"}`)
	var endpoint struct{ Data struct{ ID string } }
	if code != 201 || json.Unmarshal([]byte(body), &endpoint) != nil {
		t.Fatalf("A's endpoint: %d %s", code, body)
	}
	webhookID := endpoint.Data.ID
	_, _, body = svc.request("basic", a.APIKey, "GET", "/api/v2.0/events?type=driver.application.received", "")
	var feed struct{ Data []struct{ ID string } }
	if err := json.Unmarshal([]byte(body), &feed); err != nil || len(feed.Data) != 1 {
		t.Fatalf("A's events: %s", body)
	}
	eventID := feed.Data[0].ID

	aState := func() string {
		var out []string
		for _, p := range []string{"/api/v2.0/jobs.json", "/api/v2.0/drivers.json", fmt.Sprintf("/api/v2.0/drivers.json/%d", driverID),
			fmt.Sprintf("/api/v2.0/drivers/%d/status", driverID), "/api/v2.0/webhooks", "/api/v2.0/events"} {
			code, _, body := svc.request("basic", a.APIKey, "GET", p, "")
			out = append(out, fmt.Sprintf("%s %d %s", p, code, body))
		}
		return strings.Join(out, "\n")
	}
	// A's own import runs to its end before the sweep, so that what
	// changes A's records during the sweep can only be B's calls.
	testfix.Eventually(30*time.Second, func() bool {
		_, _, body := svc.request("basic", a.APIKey, "GET", importPath, "")
		return strings.Contains(body, `"status":"complete"`)
	})
	before := aState()
	// What B never sent and must never see: A's job title, applicant,
	// import contents. Ids and references B sent may be echoed back in a
	// not-found message.
	leaks := func(t *testing.T, what, answer string) {
		t.Helper()
		for _, secret := range []string{secretTitle, secretEmail, "4025550100", "ALPHA2", "alpha-callback", "alpha-hook", "alpha hook", eventID} {
			if strings.Contains(answer, secret) {
				t.Errorf("%s shows A's %q: %.400s", what, secret, answer)
			}
		}
	}

	t.Run("REST", func(t *testing.T) {
		for _, f := range []string{"json", "xml"} {
			jobsPath, driversPath := "/api/v2.0/jobs."+f, "/api/v2.0/drivers."+f
			list := func(v any) string {
				if f == "json" {
					b, _ := json.Marshal([]any{v})
					return string(b)
				}
				return fmt.Sprintf("<jobs><job>%v</job></jobs>", v)
			}
			for _, c := range []struct {
				method, path, body string
				want               int
				missing            bool // a summary with a missingErrors entry
			}{
				{"GET", jobsPath, "", 200, false},
				{"GET", fmt.Sprintf("%s/%d", jobsPath, jobID), "", 404, false},
				{"DELETE", fmt.Sprintf("%s/%d", jobsPath, jobID), "", 200, true},
				{"DELETE", jobsPath, list(jobID), 200, true},
				{"DELETE", jobsPath + "/reference/ALPHA1", "", 200, true},
				{"DELETE", jobsPath + "/reference", list("ALPHA1"), 200, true},
				{"GET", driversPath, "", 200, false},
				{"GET", driversPath + "?email=" + secretEmail, "", 200, false},
				{"GET", driversPath + "?job_title=" + strings.ReplaceAll(secretTitle, " ", "+"), "", 200, false},
				{"GET", fmt.Sprintf("%s/%d", driversPath, driverID), "", 404, false},
			} {
				code, _, body := svc.request("bearer", b.APIKey, c.method, c.path, c.body)
				what := c.method + " " + c.path
				if code != c.want {
					t.Errorf("%s as B: %d, want %d: %.300s", what, code, c.want, body)
				}
				if c.missing && (!strings.Contains(body, "missingErrors") || strings.Contains(body, `"deleted":1`) || strings.Contains(body, "<deleted>1</deleted>")) {
					t.Errorf("%s as B: want a missingErrors entry and nothing deleted: %.300s", what, body)
				}
				leaks(t, what, body)
			}
		}
		// Lead events are JSON only; B holds A's endpoint and event ids.
		hook := "/api/v2.0/webhooks/" + webhookID
		for _, c := range []struct {
			method, path, body string
			want               int
		}{
			{"GET", "/api/v2.0/webhooks", "", 200},
			{"GET", hook, "", 404},
			{"PATCH", hook, `{"enabled":false}`, 404},
			{"POST", hook + "/rotate-secret", "", 404},
			{"POST", hook + "/test", "", 404},
			{"GET", hook + "/deliveries", "", 404},
			{"POST", hook + "/deliveries/" + eventID + "/redeliver", "", 404},
			{"DELETE", hook, "", 404},
			{"GET", "/api/v2.0/events", "", 200},
			{"GET", "/api/v2.0/events?after=" + eventID, "", 400},
			{"GET", fmt.Sprintf("/api/v2.0/drivers/%d/status", driverID), "", 404},
			{"PUT", fmt.Sprintf("/api/v2.0/drivers/%d/status", driverID), `{"status":"hired"}`, 404},
			{"DELETE", fmt.Sprintf("/api/v2.0/drivers/%d", driverID), "", 404},
			// A batch naming A's driver answers 200 with that entry refused.
			{"POST", "/api/v2.0/driver-statuses", fmt.Sprintf(`{"statuses":[{"driverId":%d,"status":"hired"},{"email":%q,"status":"hired"}]}`,
				driverID, secretEmail), 200},
		} {
			code, _, body := svc.request("bearer", b.APIKey, c.method, c.path, c.body)
			what := c.method + " " + c.path
			if code != c.want {
				t.Errorf("%s as B: %d, want %d: %.300s", what, code, c.want, body)
			}
			if c.want == 400 {
				// The message echoes the after B sent, which B knows.
				body = strings.ReplaceAll(body, eventID, "")
			}
			if c.path == "/api/v2.0/driver-statuses" {
				// Both entries refused as B's no driver; the answer echoes
				// the e-mail B sent, which B knows.
				if !strings.Contains(body, `"updated":0,"unchanged":0,"stale":0,"errors":2`) ||
					!strings.Contains(body, "is not the e-mail of a driver who applied to the account") {
					t.Errorf("%s as B: %s", what, body)
				}
				body = strings.ReplaceAll(body, secretEmail, "")
			}
			leaks(t, what, body)
		}
		code, _, body := svc.request("basic", b.APIKey, "GET", importPath, "")
		if code != 404 {
			t.Errorf("A's import as B: %d %s", code, body)
		}
		leaks(t, "GET "+importPath, body)
		// B's own import with A's reference makes B's job, not A's.
		code, _, body = svc.request("basic", b.APIKey, "POST", "/api/v2.0/job-imports", `{"jobs":[]}`)
		if code != 202 {
			t.Errorf("B's import: %d %s", code, body)
		}
		leaks(t, "POST /api/v2.0/job-imports", body)
	})

	t.Run("gRPC", func(t *testing.T) {
		conn := svc.grpcConn()
		jobsC, driversC := jobboardv2.NewJobServiceClient(conn), jobboardv2.NewDriverServiceClient(conn)
		importsC, intakeC := jobboardv2.NewJobImportServiceClient(conn), jobboardv2.NewDriverIntakeServiceClient(conn)
		webhooksC, eventsC := jobboardv2.NewWebhookServiceClient(conn), jobboardv2.NewEventServiceClient(conn)
		searchC := jobboardv2.NewJobSearchServiceClient(conn)
		asB := map[string]context.Context{
			"B's key":              withKey(b.APIKey),
			"internal token for B": metadata.AppendToOutgoingContext(withKey(internalToken), "x-account-id", fmt.Sprint(b.ID)),
		}
		calls := map[string]func(ctx context.Context) (any, error){
			"ListJobs": func(ctx context.Context) (any, error) { return jobsC.ListJobs(ctx, &jobboardv2.ListJobsRequest{}) },
			"PostJobs": func(ctx context.Context) (any, error) { return jobsC.PostJobs(ctx, &jobboardv2.PostJobsRequest{}) },
			"GetJob":   func(ctx context.Context) (any, error) { return jobsC.GetJob(ctx, &jobboardv2.GetJobRequest{Id: jobID}) },
			"DeleteJob": func(ctx context.Context) (any, error) {
				return jobsC.DeleteJob(ctx, &jobboardv2.DeleteJobRequest{Id: jobID})
			},
			"DeleteJobs": func(ctx context.Context) (any, error) {
				return jobsC.DeleteJobs(ctx, &jobboardv2.DeleteJobsRequest{Ids: []int64{jobID}})
			},
			"DeleteJobByReference": func(ctx context.Context) (any, error) {
				return jobsC.DeleteJobByReference(ctx, &jobboardv2.DeleteJobByReferenceRequest{ReferenceNumber: "ALPHA1"})
			},
			"DeleteJobsByReference": func(ctx context.Context) (any, error) {
				return jobsC.DeleteJobsByReference(ctx, &jobboardv2.DeleteJobsByReferenceRequest{ReferenceNumbers: []string{"ALPHA1"}})
			},
			"ListDrivers": func(ctx context.Context) (any, error) {
				return driversC.ListDrivers(ctx, &jobboardv2.ListDriversRequest{Email: secretEmail})
			},
			"GetDriver": func(ctx context.Context) (any, error) {
				return driversC.GetDriver(ctx, &jobboardv2.GetDriverRequest{Id: driverID})
			},
			"GetDriverStatus": func(ctx context.Context) (any, error) {
				return driversC.GetDriverStatus(ctx, &jobboardv2.GetDriverStatusRequest{DriverId: driverID})
			},
			"SetDriverStatuses": func(ctx context.Context) (any, error) {
				return driversC.SetDriverStatuses(ctx, &jobboardv2.SetDriverStatusesRequest{Statuses: []*jobboardv2.DriverStatusBatchEntry{
					{DriverId: driverID, Status: jobboardv2.LeadStatus_LEAD_STATUS_HIRED},
					{Email: secretEmail, Status: jobboardv2.LeadStatus_LEAD_STATUS_HIRED}}})
			},
			"DeleteDriver": func(ctx context.Context) (any, error) {
				return driversC.DeleteDriver(ctx, &jobboardv2.DeleteDriverRequest{DriverId: driverID})
			},
			"SetDriverStatus": func(ctx context.Context) (any, error) {
				return driversC.SetDriverStatus(ctx, &jobboardv2.SetDriverStatusRequest{DriverId: driverID,
					Status: jobboardv2.LeadStatus_LEAD_STATUS_HIRED})
			},
			"CreateJobImport": func(ctx context.Context) (any, error) {
				return importsC.CreateJobImport(ctx, &jobboardv2.CreateJobImportRequest{})
			},
			"GetJobImport": func(ctx context.Context) (any, error) {
				return importsC.GetJobImport(ctx, &jobboardv2.GetJobImportRequest{Id: importID})
			},
			"SubmitApplication": func(ctx context.Context) (any, error) {
				return intakeC.SubmitApplication(ctx, &jobboardv2.SubmitApplicationRequest{AccountId: a.ID})
			},
			"SubmitApplications": func(ctx context.Context) (any, error) {
				return intakeC.SubmitApplications(ctx, &jobboardv2.SubmitApplicationsRequest{AccountId: a.ID})
			},
			// The search reads every account's active jobs, which the board
			// shows to drivers; asked for B's, it shows none of A's.
			"SearchJobs": func(ctx context.Context) (any, error) {
				return searchC.SearchJobs(ctx, &jobboardv2.SearchJobsRequest{Query: secretTitle, AccountIds: []int64{b.ID}})
			},
		}
		for name, call := range map[string]func(ctx context.Context) (any, error){
			"ListWebhooks": func(ctx context.Context) (any, error) {
				return webhooksC.ListWebhooks(ctx, &jobboardv2.ListWebhooksRequest{})
			},
			"GetWebhook": func(ctx context.Context) (any, error) {
				return webhooksC.GetWebhook(ctx, &jobboardv2.GetWebhookRequest{Id: webhookID})
			},
			"UpdateWebhook": func(ctx context.Context) (any, error) {
				return webhooksC.UpdateWebhook(ctx, &jobboardv2.UpdateWebhookRequest{Id: webhookID,
					Webhook: &jobboardv2.Webhook{}, UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"enabled"}}})
			},
			"DeleteWebhook": func(ctx context.Context) (any, error) {
				return webhooksC.DeleteWebhook(ctx, &jobboardv2.DeleteWebhookRequest{Id: webhookID})
			},
			"RotateWebhookSecret": func(ctx context.Context) (any, error) {
				return webhooksC.RotateWebhookSecret(ctx, &jobboardv2.RotateWebhookSecretRequest{Id: webhookID})
			},
			"TestWebhook": func(ctx context.Context) (any, error) {
				return webhooksC.TestWebhook(ctx, &jobboardv2.TestWebhookRequest{Id: webhookID})
			},
			"ListWebhookDeliveries": func(ctx context.Context) (any, error) {
				return webhooksC.ListWebhookDeliveries(ctx, &jobboardv2.ListWebhookDeliveriesRequest{Id: webhookID})
			},
			"RedeliverWebhookEvent": func(ctx context.Context) (any, error) {
				return webhooksC.RedeliverWebhookEvent(ctx, &jobboardv2.RedeliverWebhookEventRequest{Id: webhookID, EventId: eventID})
			},
			"ListEvents": func(ctx context.Context) (any, error) {
				return eventsC.ListEvents(ctx, &jobboardv2.ListEventsRequest{})
			},
		} {
			calls[name] = call
		}
		// CreateWebhook makes B's own endpoint: it has no case to refuse,
		// and B's list must then show it and not A's.
		calls["CreateWebhook"] = func(ctx context.Context) (any, error) {
			return webhooksC.CreateWebhook(ctx, &jobboardv2.CreateWebhookRequest{Webhook: &jobboardv2.Webhook{Url: "http://127.0.0.1:9/bravo"}})
		}
		wantCode := map[string]codes.Code{"GetJob": codes.NotFound, "GetDriver": codes.NotFound, "GetJobImport": codes.NotFound,
			"GetDriverStatus": codes.NotFound, "SetDriverStatus": codes.NotFound, "DeleteDriver": codes.NotFound,
			"GetWebhook": codes.NotFound, "UpdateWebhook": codes.NotFound, "DeleteWebhook": codes.NotFound,
			"RotateWebhookSecret": codes.NotFound, "TestWebhook": codes.NotFound, "ListWebhookDeliveries": codes.NotFound,
			"RedeliverWebhookEvent": codes.NotFound}
		protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
			if fd.Package() != "jobboard.v2" {
				return true
			}
			for i := 0; i < fd.Services().Len(); i++ {
				methods := fd.Services().Get(i).Methods()
				for j := 0; j < methods.Len(); j++ {
					if _, ok := calls[string(methods.Get(j).Name())]; !ok {
						t.Errorf("%s has no case in the sweep", methods.Get(j).FullName())
					}
				}
			}
			return true
		})
		for name, call := range calls {
			for who, ctx := range asB {
				resp, err := call(ctx)
				what := name + " with " + who
				want := wantCode[name]
				if name == "SubmitApplication" || name == "SubmitApplications" {
					// Only the internal token may call the intake, and for
					// any account; an account key is refused outright.
					if who == "B's key" {
						want = codes.PermissionDenied
					} else {
						want = codes.InvalidArgument // no application: nothing to take
					}
				}
				if name == "SearchJobs" && who == "B's key" {
					want = codes.PermissionDenied // internal callers only
				}
				if status.Code(err) != want {
					t.Errorf("%s: %v, want %v", what, err, want)
				}
				if err != nil {
					leaks(t, what, err.Error())
					continue
				}
				answer, _ := json.Marshal(resp)
				if name == "SetDriverStatuses" {
					// Both entries refused; the e-mail B sent is echoed.
					if r := resp.(*jobboardv2.SetDriverStatusesResponse); r.GetErrors() != 2 || r.GetUpdated() != 0 {
						t.Errorf("%s: %s", what, answer)
					}
					answer = []byte(strings.ReplaceAll(string(answer), secretEmail, ""))
				}
				leaks(t, what, string(answer))
				if strings.HasPrefix(name, "Delete") && name != "DeleteDriver" && !strings.Contains(string(answer), "missing_errors") {
					t.Errorf("%s: want a missing entry: %s", what, answer)
				}
			}
		}
	})

	// B's own applicant with the e-mail of A's (in other case) is the same
	// driver id, and what each account sent stays with it: B sees B's
	// address and phone, never A's, and A's records read as before. A sent
	// far in the future, which used to hold the profile for every account,
	// is refused.
	t.Run("B's application from A's applicant", func(t *testing.T) {
		intakeC := jobboardv2.NewDriverIntakeServiceClient(svc.grpcConn())
		ctx := metadata.AppendToOutgoingContext(withKey(internalToken), "x-account-id", fmt.Sprint(b.ID))
		app := &jobboardv2.DriverApplication{FirstName: "Al", LastName: "Pha", Address: "9 Bravo Ave", City: "Dallas",
			State: "TX", Zip: "75201", Email: strings.ToUpper(secretEmail), Phone: "2145550199", DriverType: jobboardv2.DriverType_DRIVER_TYPE_COMPANY_DRIVER,
			Experience: "7", Sent: timestamppb.New(time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC))}
		_, err := intakeC.SubmitApplication(ctx, &jobboardv2.SubmitApplicationRequest{Application: app})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), `sent: "2099-01-01T00:00:00Z"`) {
			t.Errorf("a sent in 2099: %v", err)
		}
		app.Sent = timestamppb.Now()
		resp, err := intakeC.SubmitApplication(ctx, &jobboardv2.SubmitApplicationRequest{Application: app})
		if err != nil || resp.DriverId != driverID {
			t.Fatalf("B's application: %v %v, want driver %d", resp, err, driverID)
		}
		for _, p := range []string{"/api/v2.0/drivers.json", fmt.Sprintf("/api/v2.0/drivers.xml/%d", driverID)} {
			code, _, body := svc.request("basic", b.APIKey, "GET", p, "")
			if code != 200 || !strings.Contains(body, "9 Bravo Ave") {
				t.Errorf("B's %s: %d %s", p, code, body)
			}
			leaks(t, "GET "+p, body)
			for _, secret := range []string{"1 A St", "Omaha", "68102", "2026-10-01T10:00:00"} {
				if strings.Contains(body, secret) {
					t.Errorf("B's %s shows what A was sent, %q: %.400s", p, secret, body)
				}
			}
		}
	})

	if after := aState(); after != before {
		t.Errorf("A's records changed:\nbefore %s\nafter  %s", before, after)
	}
}
