package gateway_test

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// send sends a request with the account's key, following no redirect.
func (a *api) send(method, path string) (*http.Response, string) {
	a.t.Helper()
	req, err := http.NewRequest(method, a.url+path, nil)
	if err != nil {
		a.t.Fatal(err)
	}
	req.SetBasicAuth(a.key, "")
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// TestHeadAnswersAsGet: HEAD on every GET resource has the status and the
// headers of the GET, and no body (docs/api.md, Limits against abuse); it
// used to be 405.
func TestHeadAnswersAsGet(t *testing.T) {
	a := newAPI(t)
	a.post(minimalJob)
	var jobs []struct{ ID int64 }
	_, list := a.send("GET", "/api/v2.0/jobs.json")
	if err := json.Unmarshal([]byte(list), &jobs); err != nil || len(jobs) != 1 {
		t.Fatalf("%v: %s", err, list)
	}
	hook := a.createHook(`{"url":"http://1.1.1.1/h"}`)
	hookID, _ := hook["id"].(string)
	resp := a.do("POST", "/api/v2.0/job-imports", `{"jobs":[]}`)
	var imp struct{ Data struct{ ID string } }
	_ = json.NewDecoder(resp.Body).Decode(&imp)
	resp.Body.Close()
	jobPath := "/api/v2.0/jobs.json/" + jsonNumber(jobs[0].ID)
	paths := []string{
		"/api/v2.0/jobs.json", "/api/v2.0/jobs.xml", jobPath, strings.Replace(jobPath, ".json", ".xml", 1),
		"/api/v2.0/jobs.json/999999", "/api/v2.0/jobs.json/abc", "/api/v2.0/jobs.json?page_size=1",
		"/api/v2.0/drivers.json", "/api/v2.0/drivers.xml?max=5", "/api/v2.0/drivers.json/1",
		"/api/v2.0/job-imports/" + imp.Data.ID, "/api/v2.0/job-imports/nope",
		"/api/v2.0/webhooks", "/api/v2.0/webhooks/" + hookID, "/api/v2.0/webhooks/" + hookID + "/deliveries",
		"/api/v2.0/events", "/api/v2.0/nowhere.xml",
	}
	for _, path := range paths {
		t.Run(path, func(t *testing.T) {
			get, getBody := a.send("GET", path)
			head, headBody := a.send("HEAD", path)
			if head.StatusCode != get.StatusCode || headBody != "" {
				t.Errorf("HEAD %d with %d bytes of body; GET %d", head.StatusCode, len(headBody), get.StatusCode)
			}
			if head.ContentLength != get.ContentLength {
				t.Errorf("HEAD Content-Length %d, GET %d (%d bytes)", head.ContentLength, get.ContentLength, len(getBody))
			}
			for _, h := range []string{"Content-Type", "X-Total-Count", "Link", "X-Content-Type-Options", "Allow", "WWW-Authenticate"} {
				if g, hd := get.Header.Values(h), head.Header.Values(h); !slices.Equal(g, hd) {
					t.Errorf("%s: HEAD %q, GET %q", h, hd, g)
				}
			}
		})
	}
}

func jsonNumber(n int64) string { b, _ := json.Marshal(n); return string(b) }

// TestUncleanPathsAreNotFound: a path with an empty or dot segment is the
// 404 of an unknown path, never a redirect to the cleaned path nor the
// resource itself (docs/api.md, Errors).
func TestUncleanPathsAreNotFound(t *testing.T) {
	a := newAPI(t)
	tests := []struct{ path, format string }{
		{"/api/v2.0//webhooks", "json"},
		{"/api/v2.0/./jobs.json", "json"},
		{"/api/v2.0/jobs.json/../jobs.json", "json"},
		{"/api/v2.0/x/../jobs.json", "json"},
		{"/api/v2.0/jobs.json/.", "json"},
		{"/api/v2.0/jobs.json/..", "json"},
		{"/api/v2.0/jobs.xml//1", "xml"},
		{"//api/v2.0/jobs.json", "json"},
		{"/api/v2.0/%2e%2e/v2.0/jobs.json", "json"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			resp, body := a.send("GET", tt.path)
			want := `{"error":{"code":404,"status":"NOT_FOUND","message":"no such resource"}}`
			if tt.format == "xml" {
				want = `<error><code>404</code><status>NOT_FOUND</status><message>no such resource</message></error>`
			}
			if resp.StatusCode != http.StatusNotFound || !strings.Contains(body, want) || resp.Header.Get("Location") != "" {
				t.Errorf("%d Location %q %s", resp.StatusCode, resp.Header.Get("Location"), body)
			}
		})
	}
}
