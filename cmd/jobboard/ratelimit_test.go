package main

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
)

// TestRateLimitPerAccount: past its burst an account, whichever of its
// keys it uses, gets 429 with Retry-After over REST (in the suffix's
// format) and ResourceExhausted with RetryInfo over gRPC, while another
// account goes on unhindered.
func TestRateLimitPerAccount(t *testing.T) {
	env := migratedEnv(t)
	a := createAccount(t, env, "Limited")
	b := createAccount(t, env, "Neighbour")
	secondKey := createKey(t, env, a.ID)
	// One request every 10 s after a burst of 3: the test never waits one out.
	svc := startService(t, append(env, "JOBBOARD_RATE_LIMIT=0.1", "JOBBOARD_RATE_BURST=3"))

	// Two keys of one account share one budget.
	for i, key := range []string{a.APIKey, secondKey, a.APIKey} {
		if code, _, body := svc.request("basic", key, "GET", "/api/v2.0/jobs.json", ""); code != 200 {
			t.Fatalf("request %d of the burst: %d %s", i+1, code, body)
		}
	}
	for _, path := range []string{"/api/v2.0/jobs.json", "/api/v2.0/drivers.xml"} {
		code, hdr, body := svc.request("basic", secondKey, "GET", path, "")
		// 10 s for the next token, less the time since the burst began.
		if wait, err := strconv.Atoi(hdr.Get("Retry-After")); code != 429 || err != nil || wait < 1 || wait > 10 {
			t.Errorf("%s past the burst: %d with Retry-After %q, want 429 and 1-10", path, code, hdr.Get("Retry-After"))
		}
		if !strings.Contains(body, "RESOURCE_EXHAUSTED") || !strings.Contains(body, "an account may make 0.1 requests a second") {
			t.Errorf("%s: body %s should name the status and the rule", path, body)
		}
		if strings.HasSuffix(path, ".xml") != strings.HasPrefix(body, "<?xml") {
			t.Errorf("%s: body not in the suffix's format: %s", path, body)
		}
	}
	_, err := jobboardv2.NewJobServiceClient(svc.grpcConn()).ListJobs(withKey(a.APIKey), &jobboardv2.ListJobsRequest{})
	st := status.Convert(err)
	if st.Code() != codes.ResourceExhausted {
		t.Fatalf("gRPC past the burst: %v, want ResourceExhausted", err)
	}
	var retry *errdetails.RetryInfo
	for _, d := range st.Details() {
		if r, ok := d.(*errdetails.RetryInfo); ok {
			retry = r
		}
	}
	if retry == nil || retry.GetRetryDelay().GetSeconds() < 1 || retry.GetRetryDelay().GetSeconds() > 10 {
		t.Errorf("gRPC details %v, want a RetryInfo of 1-10 s", st.Details())
	}

	// The neighbour's account has a bucket of its own.
	for i := range 3 {
		if code, _, body := svc.request("bearer", b.APIKey, "GET", "/api/v2.0/jobs.json", ""); code != 200 {
			t.Fatalf("another key, request %d: %d %s", i+1, code, body)
		}
	}
	// Bad keys are refused as such, not rate limited.
	if code, _, _ := svc.request("basic", "jb_live_nonsense", "GET", "/api/v2.0/jobs.json", ""); code != 401 {
		t.Errorf("an unknown key got %d, want 401", code)
	}
}

func TestRateLimitSettingsChecked(t *testing.T) {
	for _, tt := range []struct{ env, want string }{
		{"JOBBOARD_RATE_LIMIT=fast", `JOBBOARD_RATE_LIMIT: "fast" is not a number`},
		{"JOBBOARD_RATE_LIMIT=-1", `JOBBOARD_RATE_LIMIT: "-1" is not a number`},
		{"JOBBOARD_RATE_BURST=0", `JOBBOARD_RATE_BURST: "0" is not a whole number`},
		{"JOBBOARD_AUTH_FAILURE_LIMIT=lots", `JOBBOARD_AUTH_FAILURE_LIMIT: "lots" is not a number`},
		{"JOBBOARD_AUTH_FAILURE_LIMIT=NaN", `JOBBOARD_AUTH_FAILURE_LIMIT: "NaN" is not a number`},
		{"JOBBOARD_AUTH_FAILURE_BURST=-2", `JOBBOARD_AUTH_FAILURE_BURST: "-2" is not a whole number`},
	} {
		t.Run(tt.env, func(t *testing.T) {
			cfg := config{rateLimit: "50", rateBurst: "100", authFailureLimit: "10", authFailureBurst: "20",
				httpAddr: ":8080", callbackAllowPrivate: "false", importRescueAfter: "10m"}
			name, value, _ := strings.Cut(tt.env, "=")
			*map[string]*string{"JOBBOARD_RATE_LIMIT": &cfg.rateLimit, "JOBBOARD_RATE_BURST": &cfg.rateBurst,
				"JOBBOARD_AUTH_FAILURE_LIMIT": &cfg.authFailureLimit, "JOBBOARD_AUTH_FAILURE_BURST": &cfg.authFailureBurst}[name] = value
			_, err := cfg.serverConfig()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestAuthFailuresLimitedPerAddress: requests with missing or wrong keys
// are limited per client address, over REST and gRPC: past the burst they
// get 429 / ResourceExhausted, while a good key from that address and
// requests from another address still work.
func TestAuthFailuresLimitedPerAddress(t *testing.T) {
	env := migratedEnv(t)
	a := createAccount(t, env, "Flooded")
	svc := startService(t, append(env, "JOBBOARD_AUTH_FAILURE_LIMIT=0.1", "JOBBOARD_AUTH_FAILURE_BURST=3"))
	// The good key is in use (so remembered) before the flood.
	if code, _, body := svc.request("basic", a.APIKey, "GET", "/api/v2.0/jobs.json", ""); code != 200 {
		t.Fatalf("good key: %d %s", code, body)
	}
	for i := range 3 {
		if code, _, _ := svc.request("basic", fmt.Sprintf("jb_live_wrong%d", i), "GET", "/api/v2.0/jobs.json", ""); code != 401 {
			t.Fatalf("wrong key %d within the burst: %d, want 401", i+1, code)
		}
	}
	for _, tt := range []struct{ name, auth, key, path string }{
		{"a new wrong key", "basic", "jb_live_wrong9", "/api/v2.0/jobs.json"},
		{"a wrong key seen before", "bearer", "jb_live_wrong0", "/api/v2.0/drivers.xml"},
		{"no credentials", "", "", "/api/v2.0/jobs.json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, hdr, body := svc.request(tt.auth, tt.key, "GET", tt.path, "")
			if wait, err := strconv.Atoi(hdr.Get("Retry-After")); code != 429 || err != nil || wait < 1 || wait > 10 {
				t.Errorf("%d with Retry-After %q, want 429 and 1-10", code, hdr.Get("Retry-After"))
			}
			if !strings.Contains(body, "a client address may fail authentication 0.1 requests a second, 3 at once") {
				t.Errorf("body %s does not name the rule", body)
			}
		})
	}
	st := status.Convert(listJobsErr(svc, "jb_live_wrong9"))
	if st.Code() != codes.ResourceExhausted || !strings.Contains(st.Message(), "a client address may fail authentication") {
		t.Errorf("gRPC from the flooding address: %v, want ResourceExhausted", st)
	}
	if code, _, body := svc.request("basic", a.APIKey, "GET", "/api/v2.0/jobs.json", ""); code != 200 {
		t.Errorf("good key from the flooding address: %d %s", code, body)
	}
	// Another address (127.0.0.2) has its own budget.
	other := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}).DialContext}}
	req, _ := http.NewRequest("GET", svc.httpBase+"/api/v2.0/jobs.json", nil)
	req.SetBasicAuth("jb_live_wrong0", "")
	resp, err := other.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("a wrong key from another address: %d, want 401", resp.StatusCode)
	}
}

func listJobsErr(svc *service, key string) error {
	_, err := jobboardv2.NewJobServiceClient(svc.grpcConn()).ListJobs(withKey(key), &jobboardv2.ListJobsRequest{})
	return err
}
