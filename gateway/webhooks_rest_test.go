package gateway_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// A public address given as an IP literal: URL checks need no DNS.
const hookURL = "https://1.1.1.1/hooks/leads?token=abc"

// Secrets the tests send, which no answer may ever contain.
const (
	hookPassword = "pw-Never-Shown-1"
	hookToken    = "tok-Never-Shown-2"
)

// hookCall is one answer of the webhook routes.
type hookCall struct {
	status int
	header http.Header
	body   string
}

func (a *api) hook(key, method, path, body string) hookCall {
	a.t.Helper()
	resp := a.doAs(key, method, "/api/v2.0/webhooks"+path, body)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	c := hookCall{status: resp.StatusCode, header: resp.Header, body: string(b)}
	for _, secret := range []string{hookPassword, hookToken} {
		if strings.Contains(c.body, secret) {
			a.t.Errorf("%s %s answered a password or token: %s", method, path, c.body)
		}
	}
	return c
}

// endpointOf reads {"data": endpoint, ...} and checks every field of an
// endpoint is there, null or not.
func endpointOf(t *testing.T, c hookCall) map[string]any {
	t.Helper()
	var answer struct {
		Data  map[string]any
		Links struct{ Self string }
	}
	if err := json.Unmarshal([]byte(c.body), &answer); err != nil {
		t.Fatalf("%d %s: %v", c.status, c.body, err)
	}
	checkEndpointFields(t, answer.Data)
	if id, _ := answer.Data["id"].(string); !strings.HasSuffix(answer.Links.Self, "/api/v2.0/webhooks/"+id) ||
		!strings.HasPrefix(answer.Links.Self, "http://127.0.0.1:") {
		t.Errorf("links.self %q for %v", answer.Links.Self, answer.Data["id"])
	}
	return answer.Data
}

func checkEndpointFields(t *testing.T, e map[string]any) {
	t.Helper()
	want := []string{"auth", "createdAt", "description", "disabledAt", "disabledReason", "enabled", "events", "id", "secret", "url"}
	var got []string
	for k := range e {
		got = append(got, k)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("endpoint fields %q, want %q", got, want)
	}
}

// createHook creates an endpoint and returns its answer's data.
func (a *api) createHook(body string) map[string]any {
	a.t.Helper()
	c := a.hook(a.key, "POST", "", body)
	if c.status != http.StatusCreated {
		a.t.Fatalf("create: %d %s", c.status, c.body)
	}
	return endpointOf(a.t.(*testing.T), c)
}

func TestWebhookCreateAndRead(t *testing.T) {
	a := newAPI(t)
	c := a.hook(a.key, "POST", "", `{"url":"`+hookURL+`","events":["job_import.completed","driver.application.received","job_import.completed"],
		"description":"Leads to the CRM","auth":{"type":"basic","username":"crm","password":"`+hookPassword+`"}}`)
	if c.status != http.StatusCreated {
		t.Fatalf("create: %d %s", c.status, c.body)
	}
	e := endpointOf(t, c)
	id, _ := e["id"].(string)
	if _, ok := store.ParseEndpointID(id); !ok {
		t.Errorf("id %q is not we_ and 32 hex digits", id)
	}
	if loc := c.header.Get("Location"); !strings.HasSuffix(loc, "/api/v2.0/webhooks/"+id) {
		t.Errorf("Location %q", loc)
	}
	secret, _ := e["secret"].(string)
	if !strings.HasPrefix(secret, "whsec_") {
		t.Errorf("create answered secret %v", e["secret"])
	}
	created, _ := time.Parse("2006-01-02T15:04:05.000000Z", fmt.Sprint(e["createdAt"]))
	if time.Since(created) > time.Minute || time.Since(created) < -time.Minute {
		t.Errorf("createdAt %v", e["createdAt"])
	}
	check := func(what string, e map[string]any, wantSecret any) {
		t.Helper()
		want := map[string]any{"id": id, "url": hookURL, "events": []any{"driver.application.received", "job_import.completed"},
			"description": "Leads to the CRM", "auth": map[string]any{"type": "basic", "username": "crm"},
			"enabled": true, "createdAt": e["createdAt"], "disabledAt": nil, "disabledReason": nil, "secret": wantSecret}
		for k, v := range want {
			if fmt.Sprint(e[k]) != fmt.Sprint(v) {
				t.Errorf("%s: %s = %v, want %v", what, k, e[k], v)
			}
		}
	}
	check("create", e, secret)
	check("get", endpointOf(t, a.hook(a.key, "GET", "/"+id, "")), nil)
	list := a.hook(a.key, "GET", "", "")
	var answer struct{ Data []map[string]any }
	if err := json.Unmarshal([]byte(list.body), &answer); err != nil || list.status != 200 || len(answer.Data) != 1 {
		t.Fatalf("list: %d %s", list.status, list.body)
	}
	checkEndpointFields(t, answer.Data[0])
	check("list", answer.Data[0], nil)
	if strings.Contains(list.body, `"links"`) {
		t.Errorf("list has links: %s", list.body)
	}

	// Defaults: every type but webhook.test, no description, no auth; a
	// bearer endpoint shows its type and a null user name.
	e = a.createHook(`{"url":"http://1.1.1.1:8080/x","auth":{"type":"bearer","token":"` + hookToken + `"}}`)
	if fmt.Sprint(e["events"]) != "[driver.application.received job_import.completed driver.status.changed]" || e["description"] != nil ||
		fmt.Sprint(e["auth"]) != "map[type:bearer username:<nil>]" {
		t.Errorf("defaults: %v", e)
	}
	e = a.createHook(`{"url":"http://1.1.1.1/y","description":null,"auth":null}`)
	if e["description"] != nil || e["auth"] != nil {
		t.Errorf("null description and auth on create: %v", e)
	}
	_ = json.Unmarshal([]byte(a.hook(a.key, "GET", "", "").body), &answer)
	var urls []string
	for _, e := range answer.Data {
		urls = append(urls, fmt.Sprint(e["url"]))
	}
	if want := []string{hookURL, "http://1.1.1.1:8080/x", "http://1.1.1.1/y"}; !slices.Equal(urls, want) {
		t.Errorf("list order %q, want oldest first %q", urls, want)
	}
	// The password is stored to be sent, and is never answered (a.hook
	// checks every answer above).
	var stored string
	uuid, _ := store.ParseEndpointID(id)
	if err := a.store.DB().Get(&stored, `SELECT auth_secret FROM webhook_endpoints WHERE id = $1`, uuid); err != nil || stored != hookPassword {
		t.Errorf("stored password %q %v", stored, err)
	}
}

// TestWebhookValidation: every rule of a body, on create and update, is a
// 400 naming the field, the value (never a password or token) and the rule.
func TestWebhookValidation(t *testing.T) {
	a := newAPI(t)
	id := fmt.Sprint(a.createHook(`{"url":"` + hookURL + `"}`)["id"])
	long := strings.Repeat("é", 1001)
	cases := []struct {
		name, body string
		create     bool // create only (update bodies need no url)
		want       string
	}{
		{"no url", `{"events":["job_import.completed"]}`, true, "url: is required"},
		{"empty body", ``, false, "the body must be a JSON object"},
		{"not an object", `["x"]`, false, "the body must be a JSON object"},
		{"malformed", `{"url":`, false, "malformed JSON"},
		{"unknown key", `{"url":"` + hookURL + `","evnets":["x"]}`, false, `"evnets": unknown field; allowed: url, events, description, auth, enabled`},
		{"url null", `{"url":null}`, false, "url: must be a string, got null"},
		{"url number", `{"url":5}`, false, "url: must be a string, got a number"},
		{"url empty", `{"url":""}`, false, `url: "" must be an absolute http or https URL`},
		{"url relative", `{"url":"/hooks"}`, false, `url: "/hooks" must be an absolute http or https URL`},
		{"url ftp", `{"url":"ftp://1.1.1.1/x"}`, false, `url: "ftp://1.1.1.1/x" scheme "ftp" is not http or https`},
		{"url loopback", `{"url":"http://127.0.0.1/x"}`, false, `url: "http://127.0.0.1/x" host "127.0.0.1" must resolve to public addresses only`},
		{"url user", `{"url":"https://u:p@1.1.1.1/x"}`, false, "must not carry a user name or password"},
		{"url too long", `{"url":"https://1.1.1.1/` + strings.Repeat("a", 2040) + `"}`, false, "url: 2056 characters is longer than the 2048 allowed"},
		{"events null", `{"url":"` + hookURL + `","events":null}`, false, "events: must be an array of event types, got null"},
		{"events string", `{"url":"` + hookURL + `","events":"job_import.completed"}`, false, "events: must be an array of event types, got a string"},
		{"events empty", `{"url":"` + hookURL + `","events":[]}`, false, "events: [] is empty"},
		{"events test", `{"url":"` + hookURL + `","events":["webhook.test"]}`, false, `events[0]: "webhook.test" cannot be subscribed to: only the test action sends it`},
		{"events unknown", `{"url":"` + hookURL + `","events":["job_import.completed","lead.new"]}`, false,
			`events[1]: "lead.new" is not an event type; allowed: driver.application.received, job_import.completed`},
		{"events number", `{"url":"` + hookURL + `","events":[1]}`, false, "events[0]: must be a string, got a number"},
		{"description long", `{"url":"` + hookURL + `","description":"` + long + `"}`, false, "description: 1001 characters is longer than the 1000 allowed"},
		{"description NUL", `{"url":"` + hookURL + `","description":"a\u0000b"}`, false, "description: must not contain NUL characters"},
		{"description number", `{"url":"` + hookURL + `","description":7}`, false, "description: must be a string, got a number"},
		{"enabled string", `{"url":"` + hookURL + `","enabled":"yes"}`, false, "enabled: must be true or false, got a string"},
		{"enabled null", `{"url":"` + hookURL + `","enabled":null}`, false, "enabled: must be true or false, got null"},
		{"auth string", `{"url":"` + hookURL + `","auth":"basic"}`, false, "auth: must be an object"},
		{"auth no type", `{"url":"` + hookURL + `","auth":{"token":"` + hookToken + `"}}`, false, "auth.type: is required: basic or bearer"},
		{"auth unknown type", `{"url":"` + hookURL + `","auth":{"type":"digest"}}`, false, `auth.type: "digest" is not an authentication type; allowed: basic, bearer`},
		{"auth unknown key", `{"url":"` + hookURL + `","auth":{"type":"bearer","token":"` + hookToken + `","realm":"x"}}`, false,
			`auth."realm": unknown field; allowed: type, username, password, token`},
		{"basic with token", `{"url":"` + hookURL + `","auth":{"type":"basic","username":"u","password":"p","token":"` + hookToken + `"}}`, false,
			"auth.token: is not allowed with type basic"},
		{"basic no username", `{"url":"` + hookURL + `","auth":{"type":"basic","password":"` + hookPassword + `"}}`, false, "auth.username: is required with type basic"},
		{"basic colon", `{"url":"` + hookURL + `","auth":{"type":"basic","username":"a:b","password":"` + hookPassword + `"}}`, false,
			`auth.username: "a:b" must not contain a colon`},
		{"basic username control", `{"url":"` + hookURL + `","auth":{"type":"basic","username":"a\tb"}}`, false, "auth.username: must not contain control characters"},
		{"basic username long", `{"url":"` + hookURL + `","auth":{"type":"basic","username":"` + strings.Repeat("u", 256) + `"}}`, false,
			"auth.username: 256 characters is longer than the 255 allowed"},
		{"basic password control", `{"url":"` + hookURL + `","auth":{"type":"basic","username":"u","password":"` + hookPassword + `\n"}}`, false,
			"auth.password: must not contain control characters (value not shown)"},
		{"basic password long", `{"url":"` + hookURL + `","auth":{"type":"basic","username":"u","password":"` + hookPassword + strings.Repeat("p", 1000) + `"}}`, false,
			"auth.password: 1016 characters is longer than the 1000 allowed"},
		{"bearer with username", `{"url":"` + hookURL + `","auth":{"type":"bearer","username":"u","token":"` + hookToken + `"}}`, false,
			"auth.username: is not allowed with type bearer"},
		{"bearer with password", `{"url":"` + hookURL + `","auth":{"type":"bearer","password":"` + hookPassword + `","token":"` + hookToken + `"}}`, false,
			"auth.password: is not allowed with type bearer"},
		{"bearer no token", `{"url":"` + hookURL + `","auth":{"type":"bearer"}}`, false, "auth.token: is required with type bearer"},
		{"bearer space", `{"url":"` + hookURL + `","auth":{"type":"bearer","token":"` + hookToken + ` x"}}`, false,
			"auth.token: must be visible ASCII characters only, without spaces (value not shown)"},
		{"bearer long", `{"url":"` + hookURL + `","auth":{"type":"bearer","token":"` + hookToken + strings.Repeat("t", 1000) + `"}}`, false,
			"auth.token: 1017 characters is longer than the 1000 allowed"},
		{"bearer null token", `{"url":"` + hookURL + `","auth":{"type":"bearer","token":null}}`, false, "auth.token: must be a string, got null"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			calls := map[string]hookCall{"create": a.hook(a.key, "POST", "", c.body)}
			if !c.create {
				calls["update"] = a.hook(a.key, "PATCH", "/"+id, c.body)
			}
			for what, got := range calls {
				want := `{"error":{"code":400,"status":"INVALID_ARGUMENT","message":`
				if got.status != 400 || !strings.HasPrefix(got.body, want) || !strings.Contains(got.body, jsonText(c.want)) {
					t.Errorf("%s: %d %s\nwant 400 with %s", what, got.status, got.body, c.want)
				}
			}
		})
	}
	// Nothing was created or changed by the refused calls.
	var n int
	if err := a.store.DB().Get(&n, `SELECT count(*) FROM webhook_endpoints WHERE url = $1 AND description IS NULL AND auth_type IS NULL`, hookURL); err != nil || n != 1 {
		t.Errorf("%d endpoints after the refused calls, want the first unchanged: %v", n, err)
	}
}

// jsonText is s as it appears inside a JSON string.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// TestWebhookPatch: absent fields stay as they are, null clears
// description and auth, and disabling and enabling keep their bookkeeping.
func TestWebhookPatch(t *testing.T) {
	a := newAPI(t)
	e := a.createHook(`{"url":"` + hookURL + `","description":"first","auth":{"type":"bearer","token":"` + hookToken + `"}}`)
	id := fmt.Sprint(e["id"])
	uuid, _ := store.ParseEndpointID(id)
	patch := func(body string) map[string]any {
		t.Helper()
		c := a.hook(a.key, "PATCH", "/"+id, body)
		if c.status != 200 {
			t.Fatalf("PATCH %s: %d %s", body, c.status, c.body)
		}
		e := endpointOf(t, c)
		if e["secret"] != nil {
			t.Errorf("PATCH answered the secret")
		}
		return e
	}
	steps := []struct {
		body string
		want map[string]any
	}{
		{`{}`, map[string]any{"description": "first", "auth": "map[type:bearer username:<nil>]", "enabled": true}},
		{`{"events":["job_import.completed"]}`, map[string]any{"events": "[job_import.completed]", "description": "first", "auth": "map[type:bearer username:<nil>]"}},
		{`{"url":"http://1.1.1.1/new"}`, map[string]any{"url": "http://1.1.1.1/new", "events": "[job_import.completed]", "description": "first"}},
		{`{"description":null}`, map[string]any{"description": nil, "auth": "map[type:bearer username:<nil>]"}},
		{`{"description":"second"}`, map[string]any{"description": "second"}},
		{`{"auth":{"type":"basic","username":"crm","password":"` + hookPassword + `"}}`, map[string]any{"auth": "map[type:basic username:crm]", "description": "second"}},
		{`{"auth":null}`, map[string]any{"auth": nil, "description": "second", "url": "http://1.1.1.1/new"}},
		{`{"enabled":false}`, map[string]any{"enabled": false, "disabledReason": "manual"}},
		{`{"description":"third"}`, map[string]any{"enabled": false, "disabledReason": "manual", "description": "third"}},
		{`{"enabled":true}`, map[string]any{"enabled": true, "disabledReason": nil, "disabledAt": nil}},
	}
	for _, s := range steps {
		got := patch(s.body)
		for k, v := range s.want {
			if fmt.Sprint(got[k]) != fmt.Sprint(v) {
				t.Errorf("after %s: %s = %v, want %v", s.body, k, got[k], v)
			}
		}
		if got["enabled"] == false && got["disabledAt"] == nil {
			t.Errorf("after %s: disabled without disabledAt", s.body)
		}
	}
	var auth struct{ Type, Username, Secret *string }
	if err := a.store.DB().QueryRow(`SELECT auth_type, auth_username, auth_secret FROM webhook_endpoints WHERE id = $1`, uuid).
		Scan(&auth.Type, &auth.Username, &auth.Secret); err != nil || auth.Type != nil || auth.Username != nil || auth.Secret != nil {
		t.Errorf("auth null left %v %v %v (%v)", auth.Type, auth.Username, auth.Secret, err)
	}
}

// TestWebhookEnable: enabling a disabled endpoint (for any reason) bumps
// its generation, so its pending retries stop, and clears why and since
// when it was disabled and its run of failures; enabling an enabled one
// changes nothing.
func TestWebhookEnable(t *testing.T) {
	a := newAPI(t)
	id := fmt.Sprint(a.createHook(`{"url":"` + hookURL + `"}`)["id"])
	uuid, _ := store.ParseEndpointID(id)
	type row struct {
		Generation     int
		Enabled        bool
		DisabledAt     *time.Time
		DisabledReason *string
		FailingSince   *time.Time
	}
	read := func() row {
		t.Helper()
		var r row
		if err := a.store.DB().QueryRow(`SELECT generation, enabled, disabled_at, disabled_reason, failing_since
			FROM webhook_endpoints WHERE id = $1`, uuid).Scan(&r.Generation, &r.Enabled, &r.DisabledAt, &r.DisabledReason, &r.FailingSince); err != nil {
			t.Fatal(err)
		}
		return r
	}
	setEnabled := func(v string) {
		t.Helper()
		if c := a.hook(a.key, "PATCH", "/"+id, `{"enabled":`+v+`}`); c.status != 200 {
			t.Fatalf("enabled %s: %d %s", v, c.status, c.body)
		}
	}
	setEnabled("true")
	if r := read(); r.Generation != 1 || !r.Enabled {
		t.Errorf("enabling an enabled endpoint: %+v", r)
	}
	setEnabled("false")
	if r := read(); r.Generation != 1 || r.Enabled || r.DisabledAt == nil || r.DisabledReason == nil || *r.DisabledReason != "manual" {
		t.Errorf("disabled: %+v", r)
	}
	setEnabled("true")
	if r := read(); r.Generation != 2 || !r.Enabled || r.DisabledAt != nil || r.DisabledReason != nil {
		t.Errorf("enabled again: %+v", r)
	}
	// Disabled by the delivery worker: a 410 after failures.
	if _, err := a.store.DB().Exec(`UPDATE webhook_endpoints SET enabled = false, disabled_at = now(),
		disabled_reason = 'gone', failing_since = now() - interval '1 day' WHERE id = $1`, uuid); err != nil {
		t.Fatal(err)
	}
	setEnabled("false") // already disabled: the reason stays gone
	if r := read(); r.DisabledReason == nil || *r.DisabledReason != "gone" {
		t.Errorf("disabling a gone endpoint: %+v", r)
	}
	setEnabled("true")
	if r := read(); r.Generation != 3 || !r.Enabled || r.DisabledAt != nil || r.DisabledReason != nil || r.FailingSince != nil {
		t.Errorf("enabled after gone: %+v", r)
	}
}

// TestWebhookIsolation: another account's endpoint, and a malformed id,
// are 404 on every route; lists show only the caller's own.
func TestWebhookIsolation(t *testing.T) {
	a := newAPI(t)
	b := storetest.NewAccount(t, a.store, "Bravo")
	aID := fmt.Sprint(a.createHook(`{"url":"` + hookURL + `","description":"Alpha only"}`)["id"])
	bCall := a.hook(b.APIKey, "POST", "", `{"url":"http://1.1.1.1/bravo"}`)
	if bCall.status != 201 {
		t.Fatalf("B's create: %d %s", bCall.status, bCall.body)
	}
	bID := fmt.Sprint(endpointOf(t, bCall)["id"])
	for _, id := range []string{aID, "we_" + strings.Repeat("0", 32), "we_123", strings.TrimPrefix(aID, "we_"), "evt_" + strings.TrimPrefix(aID, "we_")} {
		for _, r := range []struct{ method, path, body string }{
			{"GET", "/" + id, ""}, {"PATCH", "/" + id, `{"description":"taken"}`}, {"DELETE", "/" + id, ""}, {"POST", "/" + id + "/rotate-secret", ""},
		} {
			c := a.hook(b.APIKey, r.method, r.path, r.body)
			if c.status != 404 || !strings.Contains(c.body, `"status":"NOT_FOUND"`) || strings.Contains(c.body, "Alpha only") {
				t.Errorf("B: %s %s: %d %s", r.method, r.path, c.status, c.body)
			}
		}
	}
	for key, want := range map[string]string{a.key: aID, b.APIKey: bID} {
		c := a.hook(key, "GET", "", "")
		var list struct{ Data []struct{ ID string } }
		if err := json.Unmarshal([]byte(c.body), &list); err != nil || len(list.Data) != 1 || list.Data[0].ID != want {
			t.Errorf("list: %s, want only %s", c.body, want)
		}
	}
	if e := endpointOf(t, a.hook(a.key, "GET", "/"+aID, "")); e["description"] != "Alpha only" {
		t.Errorf("A's endpoint after B's calls: %v", e)
	}
}

// TestWebhookRotateAndDelete: rotation answers a new secret and keeps the
// old one for 24 hours; delete is 204 without a body and takes the
// endpoint's attempts with it.
func TestWebhookRotateAndDelete(t *testing.T) {
	a := newAPI(t)
	e := a.createHook(`{"url":"` + hookURL + `"}`)
	id, first := fmt.Sprint(e["id"]), fmt.Sprint(e["secret"])
	uuid, _ := store.ParseEndpointID(id)
	c := a.hook(a.key, "POST", "/"+id+"/rotate-secret", "")
	if c.status != 200 {
		t.Fatalf("rotate: %d %s", c.status, c.body)
	}
	rotated := endpointOf(t, c)
	second, _ := rotated["secret"].(string)
	if !strings.HasPrefix(second, "whsec_") || second == first {
		t.Errorf("rotated secret %q after %q", second, first)
	}
	var current, previous string
	var overlap float64
	if err := a.store.DB().QueryRow(`SELECT secret, previous_secret, extract(epoch FROM previous_secret_expires_at - now())
		FROM webhook_endpoints WHERE id = $1`, uuid).Scan(&current, &previous, &overlap); err != nil {
		t.Fatal(err)
	}
	if current != second || previous != first || overlap < 24*3600-60 || overlap > 24*3600 {
		t.Errorf("stored secret %q previous %q expiring in %.0f s", current, previous, overlap)
	}
	if e := endpointOf(t, a.hook(a.key, "GET", "/"+id, "")); e["secret"] != nil {
		t.Errorf("GET after rotate answered the secret")
	}

	if _, err := a.store.DB().Exec(`INSERT INTO webhook_attempts (endpoint_id, event_id, event_type, attempt, attempted_at, status_code, duration_ms)
		VALUES ($1, gen_random_uuid(), 'webhook.test', 1, now(), 200, 5)`, uuid); err != nil {
		t.Fatal(err)
	}
	c = a.hook(a.key, "DELETE", "/"+id, "")
	if c.status != http.StatusNoContent || c.body != "" || c.header.Get("Content-Type") != "" {
		t.Errorf("delete: %d %q %q", c.status, c.header.Get("Content-Type"), c.body)
	}
	if c := a.hook(a.key, "GET", "/"+id, ""); c.status != 404 {
		t.Errorf("GET after delete: %d %s", c.status, c.body)
	}
	if c := a.hook(a.key, "DELETE", "/"+id, ""); c.status != 404 {
		t.Errorf("second delete: %d %s", c.status, c.body)
	}
	var n int
	if err := a.store.DB().Get(&n, `SELECT count(*) FROM webhook_attempts WHERE endpoint_id = $1`, uuid); err != nil || n != 0 {
		t.Errorf("%d attempts left after delete (%v)", n, err)
	}
}

// TestWebhookLimit: 20 endpoints per account, then 422; concurrent creates
// cannot pass the limit together, and another account is not affected.
func TestWebhookLimit(t *testing.T) {
	a := newAPI(t)
	const tries = store.MaxWebhookEndpoints + 6
	codes := make([]int, tries)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range tries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			codes[i] = a.hook(a.key, "POST", "", fmt.Sprintf(`{"url":"http://1.1.1.1/%d"}`, i)).status
		}()
	}
	close(start)
	wg.Wait()
	count := map[int]int{}
	for _, c := range codes {
		count[c]++
	}
	if count[201] != store.MaxWebhookEndpoints || count[422] != tries-store.MaxWebhookEndpoints {
		t.Errorf("concurrent creates answered %v, want %d of 201 and the rest 422", count, store.MaxWebhookEndpoints)
	}
	c := a.hook(a.key, "POST", "", `{"url":"http://1.1.1.1/late"}`)
	want := `{"error":{"code":422,"status":"FAILED_PRECONDITION","message":"an account may have at most 20 webhook endpoints; delete one before adding another"}}`
	if c.status != 422 || strings.TrimSpace(c.body) != want {
		t.Errorf("21st: %d %s", c.status, c.body)
	}
	var n int
	if err := a.store.DB().Get(&n, `SELECT count(*) FROM webhook_endpoints WHERE account_id = $1`, a.acct); err != nil || n != store.MaxWebhookEndpoints {
		t.Errorf("%d endpoints stored (%v)", n, err)
	}
	b := storetest.NewAccount(t, a.store, "Bravo")
	if c := a.hook(b.APIKey, "POST", "", `{"url":"http://1.1.1.1/b"}`); c.status != 201 {
		t.Errorf("another account's create: %d %s", c.status, c.body)
	}
}

// TestWebhookTestEventStaysWithItsEndpoint: a webhook.test event is
// redelivered to the endpoint it tested and refused, 422 naming both, for
// another endpoint of the account (docs/api.md, Webhook endpoints).
func TestWebhookTestEventStaysWithItsEndpoint(t *testing.T) {
	a := newAPI(t)
	tested := endpointOf(t, a.hook(a.key, "POST", "", `{"url":"http://1.1.1.1/tested"}`))["id"].(string)
	other := endpointOf(t, a.hook(a.key, "POST", "", `{"url":"http://1.1.1.1/other"}`))["id"].(string)
	c := a.hook(a.key, "POST", "/"+tested+"/test", "")
	var test struct{ Data struct{ EventID string } }
	if err := json.Unmarshal([]byte(c.body), &test); c.status != 202 || err != nil || test.Data.EventID == "" {
		t.Fatalf("test: %d %s", c.status, c.body)
	}
	evt := test.Data.EventID
	c = a.hook(a.key, "POST", "/"+other+"/deliveries/"+evt+"/redeliver", "")
	want := `{"error":{"code":422,"status":"FAILED_PRECONDITION","message":"event ` + evt +
		` is a webhook.test of endpoint ` + tested + ` and is delivered only to it, not to ` + other + `"}}`
	if c.status != 422 || strings.TrimSpace(c.body) != want {
		t.Errorf("redeliver to another endpoint: %d %s, want 422 %s", c.status, c.body, want)
	}
	if c := a.hook(a.key, "POST", "/"+tested+"/deliveries/"+evt+"/redeliver", ""); c.status != 202 {
		t.Errorf("redeliver to the tested endpoint: %d %s", c.status, c.body)
	}
}

// TestWebhookQueuedActionsLimit: an endpoint has at most 10 test or
// redeliver deliveries queued; concurrent tests cannot pass the limit
// together, the 11th action is 422 naming the endpoint, the count and the
// limit, and another endpoint is not affected. Once a queued delivery has
// finished, there is room again. (No queue works here: deliveries stay
// queued.)
func TestWebhookQueuedActionsLimit(t *testing.T) {
	a := newAPI(t)
	full := endpointOf(t, a.hook(a.key, "POST", "", `{"url":"http://1.1.1.1/full"}`))["id"].(string)
	other := endpointOf(t, a.hook(a.key, "POST", "", `{"url":"http://1.1.1.1/other"}`))["id"].(string)
	const tries = 14
	codes := make([]int, tries)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range tries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			codes[i] = a.hook(a.key, "POST", "/"+full+"/test", "").status
		}()
	}
	close(start)
	wg.Wait()
	count := map[int]int{}
	for _, c := range codes {
		count[c]++
	}
	if count[202] != 10 || count[422] != tries-10 {
		t.Errorf("concurrent tests answered %v, want 10 of 202 and the rest 422", count)
	}
	if c := a.hook(a.key, "POST", "/"+other+"/test", ""); c.status != 202 {
		t.Errorf("test of another endpoint: %d %s", c.status, c.body)
	}
	want := `{"error":{"code":422,"status":"FAILED_PRECONDITION","message":"webhook endpoint ` + full +
		` has 10 test or redeliver deliveries queued, the most it may have at once (10); ask again once one has been delivered or given up"}}`
	for _, path := range []string{"/" + full + "/test", "/" + full + "/deliveries/" + a.testEventOf(full) + "/redeliver"} {
		if c := a.hook(a.key, "POST", path, ""); c.status != 422 || strings.TrimSpace(c.body) != want {
			t.Errorf("POST %s: %d %s, want 422 %s", path, c.status, c.body, want)
		}
	}
	var events int
	if err := a.store.DB().Get(&events, `SELECT count(*) FROM events WHERE account_id = $1`, a.acct); err != nil || events != 11 {
		t.Errorf("%d events stored (%v), want 11: a refused test writes none", events, err)
	}
	// A delivery that has finished is no longer queued.
	if _, err := a.store.DB().Exec(`UPDATE river_job SET state = 'completed', finalized_at = now()
		WHERE id = (SELECT min(id) FROM river_job WHERE args->>'endpoint_id' = $1)`, endpointUUID(t, full)); err != nil {
		t.Fatal(err)
	}
	if c := a.hook(a.key, "POST", "/"+full+"/test", ""); c.status != 202 {
		t.Errorf("test once a delivery finished: %d %s", c.status, c.body)
	}
}

// testEventOf is the id of a webhook.test event of the endpoint.
func (a *api) testEventOf(endpoint string) string {
	a.t.Helper()
	var id string
	if err := a.store.DB().Get(&id, `SELECT id FROM events WHERE type = 'webhook.test' AND data->>'webhookId' = $1 LIMIT 1`,
		endpoint); err != nil {
		a.t.Fatal(err)
	}
	return store.EventID(id)
}

func endpointUUID(t *testing.T, publicID string) string {
	t.Helper()
	id, ok := store.ParseEndpointID(publicID)
	if !ok {
		t.Fatalf("endpoint id %q", publicID)
	}
	return id
}
