package main

import (
	"strconv"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	jobboardv2 "jobboard/gen/jobboard/v2"
	"jobboard/internal/pgtest"
)

// TestRateLimitPerKey: past its burst a key gets 429 with Retry-After over
// REST (in the suffix's format) and ResourceExhausted with RetryInfo over
// gRPC, while another key goes on unhindered.
func TestRateLimitPerKey(t *testing.T) {
	env := []string{"DATABASE_URL=" + pgtest.URL(t)}
	runCommand(t, env, "migrate")
	a := createAccount(t, env, "Limited")
	b := createAccount(t, env, "Neighbour")
	// One request every 10 s after a burst of 3: the test never waits one out.
	svc := startService(t, append(env, "JOBBOARD_RATE_LIMIT=0.1", "JOBBOARD_RATE_BURST=3"))

	for i := range 3 {
		if code, _, body := svc.request("basic", a.APIKey, "GET", "/api/v2.0/jobs.json", ""); code != 200 {
			t.Fatalf("request %d of the burst: %d %s", i+1, code, body)
		}
	}
	for _, path := range []string{"/api/v2.0/jobs.json", "/api/v2.0/drivers.xml"} {
		code, hdr, body := svc.request("basic", a.APIKey, "GET", path, "")
		// 10 s for the next token, less the time since the burst began.
		if wait, err := strconv.Atoi(hdr.Get("Retry-After")); code != 429 || err != nil || wait < 1 || wait > 10 {
			t.Errorf("%s past the burst: %d with Retry-After %q, want 429 and 1-10", path, code, hdr.Get("Retry-After"))
		}
		if !strings.Contains(body, "RESOURCE_EXHAUSTED") || !strings.Contains(body, "0.1 requests a second") {
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

	// The neighbour's key has a bucket of its own.
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
	} {
		t.Run(tt.env, func(t *testing.T) {
			cfg := config{rateLimit: "50", rateBurst: "100", httpAddr: ":8080", callbackAllowPrivate: "false", importRescueAfter: "10m"}
			name, value, _ := strings.Cut(tt.env, "=")
			if name == "JOBBOARD_RATE_LIMIT" {
				cfg.rateLimit = value
			} else {
				cfg.rateBurst = value
			}
			_, err := cfg.serverConfig()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}
