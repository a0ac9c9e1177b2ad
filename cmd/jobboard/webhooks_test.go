package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
)

// TestWebhooksCommand: endpoints made over REST and gRPC are listed by
// jobboard webhooks list for their account only, with URLs cut to their
// host and nothing secret; both calls are in the access logs, which hold
// no secret either.
func TestWebhooksCommand(t *testing.T) {
	env := migratedEnv(t)
	a := createAccount(t, env, "Alpha")
	b := createAccount(t, env, "Bravo")
	svc := startService(t, env)
	const password, token = "pw-cli-never-printed", "tok-cli-never-printed"

	code, _, body := svc.requestWithHeader(http.Header{"X-Request-Id": {"trace-webhook-rest"}}, "basic", a.APIKey, "POST", "/api/v2.0/webhooks",
		`{"url":"https://1.1.1.1/hooks/leads?key=path-secret","auth":{"type":"basic","username":"crm","password":"`+password+`"}}`)
	if code != 201 {
		t.Fatalf("REST create: %d %s", code, body)
	}
	var restHook struct{ Data struct{ ID, Secret string } }
	if err := json.Unmarshal([]byte(body), &restHook); err != nil {
		t.Fatal(err)
	}
	hooks := jobboardv2.NewWebhookServiceClient(svc.grpcConn())
	ctx := metadata.AppendToOutgoingContext(withKey(a.APIKey), "x-request-id", "trace-webhook-grpc")
	grpcHook, err := hooks.CreateWebhook(ctx, &jobboardv2.CreateWebhookRequest{Webhook: &jobboardv2.Webhook{Url: "http://1.1.1.1:8080/in/token-in-path",
		Auth: &jobboardv2.WebhookAuth{Type: jobboardv2.WebhookAuthType_WEBHOOK_AUTH_TYPE_BEARER, Token: token}}})
	if err != nil {
		t.Fatal(err)
	}
	if code, _, body := svc.request("bearer", a.APIKey, "PATCH", "/api/v2.0/webhooks/"+grpcHook.GetData().GetId(), `{"enabled":false}`); code != 200 {
		t.Fatalf("PATCH: %d %s", code, body)
	}

	out := runCommand(t, env, "webhooks", "list", "--account", fmt.Sprint(a.ID))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("webhooks list printed %q, want two lines", out)
	}
	want := []string{
		fmt.Sprintf(`{"id":%q,"url":"https://1.1.1.1/...","events":["driver.application.received","job_import.completed","driver.status.changed"],"enabled":true,`+
			`"disabledReason":null,"disabledAt":null,"createdAt":"<t>","authType":"basic","failingSince":null,"generation":1}`, restHook.Data.ID),
		fmt.Sprintf(`{"id":%q,"url":"http://1.1.1.1:8080/...","events":["driver.application.received","job_import.completed","driver.status.changed"],"enabled":false,`+
			`"disabledReason":"manual","disabledAt":"<t>","createdAt":"<t>","authType":"bearer","failingSince":null,"generation":1}`, grpcHook.GetData().GetId()),
	}
	for i, line := range lines {
		var shown map[string]any
		if err := json.Unmarshal([]byte(line), &shown); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		for _, field := range []string{"createdAt", "disabledAt"} {
			if s, ok := shown[field].(string); ok {
				if _, err := time.Parse("2006-01-02T15:04:05.000000Z", s); err != nil {
					t.Errorf("%s %q: %v", field, s, err)
				}
				line = strings.Replace(line, s, "<t>", 1)
			}
		}
		if line != want[i] {
			t.Errorf("line %d:\n%s\nwant\n%s", i, line, want[i])
		}
	}
	for _, secret := range []string{password, token, restHook.Data.Secret, grpcHook.GetData().GetSecret(), "whsec_", "path-secret", "token-in-path", "crm"} {
		if strings.Contains(out, secret) {
			t.Errorf("webhooks list printed %q:\n%s", secret, out)
		}
	}
	if out := runCommand(t, env, "webhooks", "list", "--account", fmt.Sprint(b.ID)); out != "" {
		t.Errorf("B's endpoints: %q", out)
	}
	if _, stderr, code := runCommandStatus(t, env, "webhooks", "list", "--account", "999999"); code != 1 || !strings.Contains(stderr, "account 999999 not found") {
		t.Errorf("unknown account: %d %s", code, stderr)
	}
	if _, stderr, code := runCommandStatus(t, env, "webhooks", "list"); code != 2 || !strings.Contains(stderr, "--account is required") {
		t.Errorf("no account: %d %s", code, stderr)
	}

	time.Sleep(100 * time.Millisecond)
	logs := svc.stderr.String()
	if !strings.Contains(logs, `"route":"/api/v2.0/webhooks","status":201`) || len(logLines(logs, "request", "trace-webhook-rest")) != 1 {
		t.Errorf("no access line for the REST create:\n%s", logs)
	}
	if lines := logLines(logs, "rpc", `"method":"/jobboard.v2.WebhookService/CreateWebhook","code":"OK"`, "trace-webhook-grpc"); len(lines) != 1 {
		t.Errorf("%d gRPC access lines for CreateWebhook, want 1:\n%s", len(lines), logs)
	}
	for _, secret := range []string{password, token, restHook.Data.Secret, grpcHook.GetData().GetSecret()} {
		if strings.Contains(logs, secret) {
			t.Errorf("the logs contain a password, token or secret")
		}
	}
}
