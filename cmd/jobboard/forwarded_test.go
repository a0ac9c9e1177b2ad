package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
)

// TestForwardedHostOnlyFromTrustedProxies: the host and scheme of the links
// an import answers with (Location, links.self, and what is stored for its
// callback) follow X-Forwarded-Host and -Proto, over REST and as gRPC
// metadata, only when the peer is listed in JOBBOARD_TRUSTED_PROXIES
// (docs/api.md, Transport).
func TestForwardedHostOnlyFromTrustedProxies(t *testing.T) {
	env := migratedEnv(t)
	acct := createAccount(t, env, "Forwarded")
	forwardedHeaders := http.Header{"X-Forwarded-Host": {"jobs.example.com"}, "X-Forwarded-Proto": {"https"}}

	tests := []struct {
		name    string
		proxies string
		want    func(s *service) string // the base of links
	}{
		{"nobody trusted", "", func(s *service) string { return s.httpBase }},
		{"another proxy trusted", "10.0.0.0/8", func(s *service) string { return s.httpBase }},
		{"loopback trusted", "10.0.0.0/8, 127.0.0.1", func(*service) string { return "https://jobs.example.com" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := startService(t, append(env, "JOBBOARD_TRUSTED_PROXIES="+tt.proxies))
			want := tt.want(svc) + "/api/v2.0/job-imports/"

			code, hdr, body := svc.requestWithHeader(forwardedHeaders, "basic", acct.APIKey, "POST", "/api/v2.0/job-imports", `{"jobs": []}`)
			var created struct{ Links struct{ Self string } }
			if err := json.Unmarshal([]byte(body), &created); err != nil || code != 202 ||
				!strings.HasPrefix(created.Links.Self, want) || hdr.Get("Location") != created.Links.Self {
				t.Fatalf("REST: %d Location %q, body %s; want links under %s", code, hdr.Get("Location"), body, want)
			}
			// What is stored is what later answers (and the callback) show.
			path := created.Links.Self[strings.Index(created.Links.Self, "/api/"):]
			if _, _, got := svc.request("basic", acct.APIKey, "GET", path, ""); !strings.Contains(got, `"self":"`+created.Links.Self+`"`) {
				t.Errorf("GET of the import: %s", got)
			}

			ctx := metadata.AppendToOutgoingContext(withKey(acct.APIKey), "x-forwarded-host", "jobs.example.com", "x-forwarded-proto", "https")
			imp, err := jobboardv2.NewJobImportServiceClient(svc.grpcConn()).CreateJobImport(ctx, &jobboardv2.CreateJobImportRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if self := imp.GetLinks().GetSelf(); !strings.HasPrefix(self, want) {
				t.Errorf("gRPC: links.self %q, want it under %s", self, want)
			}
		})
	}
}

// TestFailuresCountedPerForwardedClient: behind a trusted proxy, failed
// authentications are limited per client the proxy names in
// X-Forwarded-For, so one client's flood does not lock out the others
// that share the proxy; from an untrusted peer the header is ignored.
func TestFailuresCountedPerForwardedClient(t *testing.T) {
	env := migratedEnv(t, "JOBBOARD_AUTH_FAILURE_LIMIT=0.1", "JOBBOARD_AUTH_FAILURE_BURST=2")
	wrong := func(svc *service, client string) int {
		code, _, _ := svc.requestWithHeader(http.Header{"X-Forwarded-For": {client}}, "basic", "jb_live_wrong", "GET", "/api/v2.0/jobs.json", "")
		return code
	}
	tests := []struct {
		name, proxies string
		otherClient   int // what a second client behind the proxy gets
	}{
		{"behind a trusted proxy", "127.0.0.1", 401},
		{"header from an untrusted peer", "", 429},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := startService(t, append(env, "JOBBOARD_TRUSTED_PROXIES="+tt.proxies))
			for i := range 2 {
				if code := wrong(svc, "198.51.100.1"); code != 401 {
					t.Fatalf("failure %d: %d, want 401", i+1, code)
				}
			}
			if code := wrong(svc, "198.51.100.1"); code != 429 {
				t.Errorf("the flooding client: %d, want 429", code)
			}
			if code := wrong(svc, "198.51.100.2"); code != tt.otherClient {
				t.Errorf("another client: %d, want %d", code, tt.otherClient)
			}
			ctx := metadata.AppendToOutgoingContext(withKey("jb_live_wrong"), "x-forwarded-for", "198.51.100.3")
			_, err := jobboardv2.NewJobServiceClient(svc.grpcConn()).ListJobs(ctx, &jobboardv2.ListJobsRequest{})
			if want := map[int]codes.Code{401: codes.Unauthenticated, 429: codes.ResourceExhausted}[tt.otherClient]; status.Code(err) != want {
				t.Errorf("gRPC from another client: %v, want %v", err, want)
			}
		})
	}
}
