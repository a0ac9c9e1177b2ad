package jobboardclient

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/internal/rpcfacts"
)

// RetryPolicy is how a call that failed with UNAVAILABLE is tried again.
type RetryPolicy struct {
	// MaxAttempts counts the first attempt: 1 is no retry. grpc-go caps it
	// at 5.
	MaxAttempts int
	// InitialBackoff is the longest wait before the first retry; each retry
	// may wait BackoffMultiplier times longer than the one before, up to
	// MaxBackoff.
	InitialBackoff, MaxBackoff time.Duration
	BackoffMultiplier          float64
}

// DefaultRetryPolicy rides out a server restart or a replica's failover of
// a few seconds: waits of up to 0.2, 0.4, 0.8 and 1.6 s between five
// attempts.
var DefaultRetryPolicy = RetryPolicy{MaxAttempts: 5, InitialBackoff: 200 * time.Millisecond, MaxBackoff: 5 * time.Second, BackoffMultiplier: 2}

// serviceConfig is the gRPC service config giving the policy
// (DefaultRetryPolicy for the zero value) to the methods retried on
// UNAVAILABLE: those whose (jobboard.v2.facts) say retry_safe. The package
// documentation says why each is safe to repeat; a caller who gets
// UNAVAILABLE from another looks before trying again.
func (p RetryPolicy) serviceConfig() (string, error) {
	if p == (RetryPolicy{}) {
		p = DefaultRetryPolicy
	}
	if p.MaxAttempts < 1 {
		return "", errors.New("jobboardclient: RetryPolicy.MaxAttempts must be at least 1")
	}
	type name struct {
		Service string `json:"service"`
		Method  string `json:"method"`
	}
	var names []name
	for _, m := range rpcfacts.Methods() {
		if m.RetrySafe {
			names = append(names, name{m.Service, m.Name})
		}
	}
	method := map[string]any{"name": names}
	if p.MaxAttempts > 1 {
		if p.InitialBackoff <= 0 || p.MaxBackoff < p.InitialBackoff || p.BackoffMultiplier < 1 {
			return "", fmt.Errorf("jobboardclient: retry policy %+v: backoffs must be positive, the maximum at least the initial, the multiplier at least 1", p)
		}
		method["retryPolicy"] = map[string]any{
			"maxAttempts":          p.MaxAttempts,
			"initialBackoff":       seconds(p.InitialBackoff),
			"maxBackoff":           seconds(p.MaxBackoff),
			"backoffMultiplier":    p.BackoffMultiplier,
			"retryableStatusCodes": []string{"UNAVAILABLE"},
		}
	}
	config := map[string]any{"methodConfig": []any{method}}
	if p.MaxAttempts > 1 {
		// Retries stop while most calls of the connection fail (a long
		// outage) rather than multiplying the load on the servers coming
		// back: each failure takes a token, each success gives a tenth of
		// one back, and retries are made while over half of them remain.
		config["retryThrottling"] = map[string]any{"maxTokens": 10, "tokenRatio": 0.1}
	}
	b, err := json.Marshal(config)
	return string(b), err
}

// seconds is a duration as a service config writes it: "0.2s".
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// idempotencyKeyHeader is the metadata the board deduplicates imports by.
const idempotencyKeyHeader = "idempotency-key"

// importIdempotencyKey gives a CreateJobImport call without an
// idempotency-key one of its own. It runs before grpc-go's retries, so
// every attempt of the call carries the same key and the board answers a
// retry with the import the first attempt created.
func importIdempotencyKey(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if method == jobboardv2.JobImportService_CreateJobImport_FullMethodName {
		if md, _ := metadata.FromOutgoingContext(ctx); len(md.Get(idempotencyKeyHeader)) == 0 {
			key := make([]byte, 16)
			_, _ = rand.Read(key)
			ctx = metadata.AppendToOutgoingContext(ctx, idempotencyKeyHeader, "jobboardclient-"+hex.EncodeToString(key))
		}
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}
