package jobboardclient

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/internal/rpcfacts"
)

// flakyBoard answers GetJob and CreateJobImport with failure for the first
// failures attempts, then succeeds; it records each attempt's metadata.
type flakyBoard struct {
	jobboardv2.UnimplementedJobServiceServer
	jobboardv2.UnimplementedJobImportServiceServer
	failure  codes.Code
	failures int
	mu       sync.Mutex
	attempts []metadata.MD
}

func (b *flakyBoard) attempt(ctx context.Context) error {
	md, _ := metadata.FromIncomingContext(ctx)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.attempts = append(b.attempts, md)
	if len(b.attempts) <= b.failures {
		return status.Error(b.failure, "not now")
	}
	return nil
}

func (b *flakyBoard) GetJob(ctx context.Context, req *jobboardv2.GetJobRequest) (*jobboardv2.GetJobResponse, error) {
	if err := b.attempt(ctx); err != nil {
		return nil, err
	}
	return &jobboardv2.GetJobResponse{Job: &jobboardv2.Job{Id: req.GetId()}}, nil
}

func (b *flakyBoard) CreateJobImport(ctx context.Context, _ *jobboardv2.CreateJobImportRequest) (*jobboardv2.CreateJobImportResponse, error) {
	if err := b.attempt(ctx); err != nil {
		return nil, err
	}
	return &jobboardv2.CreateJobImportResponse{}, nil
}

// serve runs b on a loopback port until the test ends.
func (b *flakyBoard) serve(t *testing.T, opts ...grpc.ServerOption) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(opts...)
	jobboardv2.RegisterJobServiceServer(srv, b)
	jobboardv2.RegisterJobImportServiceServer(srv, b)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return ln.Addr().String()
}

var quickRetries = RetryPolicy{MaxAttempts: 4, InitialBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, BackoffMultiplier: 2}

// TestRetriesUnavailable: UNAVAILABLE is retried with backoff up to the
// policy's attempts; any other code is the answer at once.
func TestRetriesUnavailable(t *testing.T) {
	tests := []struct {
		name         string
		failure      codes.Code
		failures     int
		policy       RetryPolicy
		wantAttempts int
		wantCode     codes.Code
	}{
		{"unavailable twice, then OK", codes.Unavailable, 2, quickRetries, 3, codes.OK},
		{"unavailable every time", codes.Unavailable, 10, quickRetries, 4, codes.Unavailable},
		{"internal is not retried", codes.Internal, 2, quickRetries, 1, codes.Internal},
		{"not found is not retried", codes.NotFound, 1, quickRetries, 1, codes.NotFound},
		{"one attempt: no retry", codes.Unavailable, 2, RetryPolicy{MaxAttempts: 1}, 1, codes.Unavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			board := &flakyBoard{failure: tt.failure, failures: tt.failures}
			conn, err := Dial(context.Background(), board.serve(t), Options{Plaintext: true, Retry: tt.policy})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err = conn.Jobs.GetJob(ctx, &jobboardv2.GetJobRequest{Id: 7})
			if status.Code(err) != tt.wantCode || len(board.attempts) != tt.wantAttempts {
				t.Errorf("got %v after %d attempts, want %v after %d", err, len(board.attempts), tt.wantCode, tt.wantAttempts)
			}
		})
	}
}

// TestImportRetryKeepsItsKey: every attempt of a retried CreateJobImport
// carries the same idempotency-key, the caller's when it gave one.
func TestImportRetryKeepsItsKey(t *testing.T) {
	for _, given := range []string{"", "feed-2026-11-23"} {
		board := &flakyBoard{failure: codes.Unavailable, failures: 2}
		conn, err := Dial(context.Background(), board.serve(t), Options{Plaintext: true, Retry: quickRetries})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if given != "" {
			ctx = metadata.AppendToOutgoingContext(ctx, "idempotency-key", given)
		}
		if _, err := conn.Imports.CreateJobImport(ctx, &jobboardv2.CreateJobImportRequest{}); err != nil {
			t.Fatal(err)
		}
		conn.Close()
		var keys []string
		for _, md := range board.attempts {
			keys = append(keys, md.Get("idempotency-key")...)
		}
		if len(keys) != 3 || keys[0] == "" || keys[1] != keys[0] || keys[2] != keys[0] || (given != "" && keys[0] != given) {
			t.Errorf("given %q: the attempts carried %q", given, keys)
		}
	}
}

// TestRetriedMethods: the service config retries exactly the methods
// whose facts say a repeat is safe (rpcfacts checks that every method
// decides), and the writing ones that are not are left alone.
func TestRetriedMethods(t *testing.T) {
	config, err := RetryPolicy{}.serviceConfig()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range rpcfacts.Methods() {
		named := strings.Contains(config, `{"service":"`+m.Service+`","method":"`+m.Name+`"}`)
		if named != m.RetrySafe {
			t.Errorf("%s: in the retry config %v, retry safe %v", m.FullName, named, m.RetrySafe)
		}
	}
	for _, notSafe := range []string{jobboardv2.WebhookService_CreateWebhook_FullMethodName, jobboardv2.WebhookService_TestWebhook_FullMethodName} {
		if m, ok := rpcfacts.Of(notSafe); !ok || m.RetrySafe {
			t.Errorf("%s is retried: a repeat creates or sends twice", notSafe)
		}
	}
}

// TestServiceConfig: the policy as grpc-go reads it, and policies it
// refuses.
func TestServiceConfig(t *testing.T) {
	cfg, err := DefaultRetryPolicy.serviceConfig()
	if err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		MethodConfig []struct {
			RetryPolicy map[string]any
		}
		RetryThrottling map[string]any
	}
	if err := json.Unmarshal([]byte(cfg), &parsed); err != nil || len(parsed.MethodConfig) != 1 {
		t.Fatalf("%s: %v", cfg, err)
	}
	p := parsed.MethodConfig[0].RetryPolicy
	if p["initialBackoff"] != "0.2s" || p["maxBackoff"] != "5s" || p["maxAttempts"] != 5.0 || p["backoffMultiplier"] != 2.0 {
		t.Errorf("retry policy %v", p)
	}
	if th := parsed.RetryThrottling; th["maxTokens"] != 10.0 || th["tokenRatio"] != 0.1 {
		t.Errorf("retry throttling %v", th)
	}
	for _, bad := range []RetryPolicy{
		{MaxAttempts: -1},
		{MaxAttempts: 3},
		{MaxAttempts: 3, InitialBackoff: time.Second, MaxBackoff: time.Millisecond, BackoffMultiplier: 2},
		{MaxAttempts: 3, InitialBackoff: time.Second, MaxBackoff: time.Minute, BackoffMultiplier: 0.5},
	} {
		if _, err := Dial(context.Background(), "127.0.0.1:1", Options{Plaintext: true, Retry: bad}); err == nil {
			t.Errorf("Dial took the retry policy %+v", bad)
		}
	}
}
