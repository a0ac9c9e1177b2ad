package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/internal/tcprelay"
	"github.com/truckjobs/jobboard/internal/testfix"
	"github.com/truckjobs/jobboard/jobboardclient"
)

// TestGoClient: the client package against the real server: the internal
// token acts for the account ActFor names (the last one named), an API key
// for its own account whatever ActFor says, and a call made while the
// server cannot be reached succeeds once it can again, through the retries.
func TestGoClient(t *testing.T) {
	env := migratedEnv(t)
	a, b := createAccount(t, env, "Client Carrier A"), createAccount(t, env, "Client Carrier B")
	svc := startService(t, env)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dial := func(o jobboardclient.Options) *jobboardclient.Conn {
		t.Helper()
		o.Plaintext, o.WaitConnected = true, true
		conn, err := jobboardclient.Dial(ctx, svc.grpcAddr, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	internal := dial(jobboardclient.Options{InternalToken: internalToken})
	total := func(conn *jobboardclient.Conn, ctx context.Context) (int64, error) {
		list, err := conn.Drivers.ListDrivers(ctx, &jobboardv2.ListDriversRequest{})
		return list.GetTotalSize(), err
	}

	forA := jobboardclient.ActFor(ctx, a.ID)
	resp, err := internal.Intake.SubmitApplications(forA, &jobboardv2.SubmitApplicationsRequest{Applications: batchOf("client", 5)})
	if err != nil || len(resp.DriverIds) != 5 {
		t.Fatalf("SubmitApplications for A: %v %v", resp, err)
	}
	if n, err := total(internal, forA); n != 5 || err != nil {
		t.Errorf("A's drivers, internal token: %d %v, want 5", n, err)
	}
	if n, err := total(internal, jobboardclient.ActFor(forA, b.ID)); n != 0 || err != nil {
		t.Errorf("acting for A, then for B: %d drivers %v, want B's 0", n, err)
	}
	if _, err := total(internal, ctx); status.Code(err) != codes.InvalidArgument {
		t.Errorf("internal token acting for no account: %v, want InvalidArgument", err)
	}
	keyA := dial(jobboardclient.Options{APIKey: a.APIKey})
	if n, err := total(keyA, jobboardclient.ActFor(ctx, b.ID)); n != 5 || err != nil {
		t.Errorf("A's key with ActFor(B): %d %v, want A's 5", n, err)
	}
	// Search reads every account's jobs: the internal token calls it for
	// no account, and an account's key may not.
	if code, _, body := svc.request("basic", a.APIKey, "POST", "/api/v2.0/jobs.json", twoJobs); code != 200 {
		t.Fatalf("post A's jobs: %d %s", code, body)
	}
	found, err := internal.Search.SearchJobs(ctx, &jobboardv2.SearchJobsRequest{Query: "OTR"})
	if err != nil || len(found.GetResults()) != 1 || found.GetResults()[0].GetAccountName() != "Client Carrier A" {
		t.Errorf("Search with the internal token: %v %v, want A's OTR job", found, err)
	}
	if _, err := keyA.Search.SearchJobs(ctx, &jobboardv2.SearchJobsRequest{Query: "OTR"}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("Search with A's key: %v, want PermissionDenied", err)
	}

	t.Run("retried through an outage", func(t *testing.T) {
		relay := tcprelay.Start(t, svc.grpcAddr)
		// The connection tries again within 50-200 ms of a refusal, so the
		// retries' waits (up to 0.5, 1, 2 and 4 s) are what is tested.
		fastReconnect := grpc.WithConnectParams(grpc.ConnectParams{MinConnectTimeout: time.Second,
			Backoff: backoff.Config{BaseDelay: 50 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 200 * time.Millisecond}})
		for _, tt := range []struct {
			name     string
			policy   jobboardclient.RetryPolicy
			wantCode codes.Code
		}{
			{"no retries", jobboardclient.RetryPolicy{MaxAttempts: 1}, codes.Unavailable},
			{"retries", jobboardclient.RetryPolicy{MaxAttempts: 5, InitialBackoff: 500 * time.Millisecond,
				MaxBackoff: 5 * time.Second, BackoffMultiplier: 2}, codes.OK},
		} {
			conn, err := jobboardclient.Dial(ctx, relay.Addr(), jobboardclient.Options{Plaintext: true,
				InternalToken: internalToken, Retry: tt.policy, DialOptions: []grpc.DialOption{fastReconnect}})
			if err != nil {
				t.Fatal(err)
			}
			if n, err := total(conn, forA); n != 5 || err != nil {
				t.Fatalf("%s, before the outage: %d %v", tt.name, n, err)
			}
			relay.Cut()
			restored := make(chan struct{})
			time.AfterFunc(100*time.Millisecond, func() { relay.Restore(); close(restored) })
			n, err := total(conn, forA)
			if status.Code(err) != tt.wantCode || (err == nil && n != 5) {
				t.Errorf("%s: a call as the server goes away for 100 ms: %d %v, want %v", tt.name, n, err, tt.wantCode)
			}
			<-restored
			conn.Close()
		}
	})
}

// TestGoClientTLS: the client package against the real server over TLS:
// verifying the server against the CA file, and authenticating with a
// client certificate of the internal CA alone (no token), acting for an
// account, on the batch intake and the drivers list.
func TestGoClientTLS(t *testing.T) {
	env := migratedEnv(t)
	a := createAccount(t, env, "Client TLS Carrier")
	f := newTLSFiles(t)
	svc := startServiceOver(t, append(env, f.env()...), f.roots)
	p, err := f.ca.Client("migration-service", "TruckJobs internal")
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := f.path("client.pem"), f.path("client-key.pem")
	f.write(t, certFile, p.CertPEM)
	f.write(t, keyFile, p.KeyPEM)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := jobboardclient.Dial(ctx, svc.grpcAddr, jobboardclient.Options{CAFile: f.caFile,
		CertFile: certFile, KeyFile: keyFile, WaitConnected: true})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	forA := jobboardclient.ActFor(ctx, a.ID)
	if _, err := conn.Intake.SubmitApplications(forA, &jobboardv2.SubmitApplicationsRequest{Applications: batchOf("tls", 3)}); err != nil {
		t.Fatalf("SubmitApplications with a client certificate: %v", err)
	}
	list, err := conn.Drivers.ListDrivers(forA, &jobboardv2.ListDriversRequest{})
	if err != nil || list.GetTotalSize() != 3 {
		t.Errorf("ListDrivers with a client certificate: %v %v, want 3", list, err)
	}
	// A certificate is an internal caller, for job search too (for no account).
	if _, err := conn.Search.SearchJobs(ctx, &jobboardv2.SearchJobsRequest{Query: "driver"}); err != nil {
		t.Errorf("SearchJobs with a client certificate: %v", err)
	}
	testfix.Eventually(5*time.Second, func() bool { return strings.Contains(svc.stderr.String(), "CN=migration-service") })
	if !strings.Contains(svc.stderr.String(), "CN=migration-service") {
		t.Errorf("the server did not log the certificate's subject as the caller:\n%s", svc.stderr.String())
	}
	// Without the CA file the system's roots do not know the server.
	other, err := jobboardclient.Dial(ctx, svc.grpcAddr, jobboardclient.Options{InternalToken: internalToken,
		Retry: jobboardclient.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Drivers.ListDrivers(forA, &jobboardv2.ListDriversRequest{}); status.Code(err) != codes.Unavailable {
		t.Errorf("a server the roots do not know: %v, want Unavailable", err)
	}
}
