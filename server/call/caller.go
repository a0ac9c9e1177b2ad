package call

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/truckjobs/jobboard/internal/calllog"
)

// Caller is the account a request acts for.
type Caller struct {
	AccountID int64
	// Internal is true for the board's own services, which authenticate with
	// the internal token or a client certificate and name the account in
	// x-account-id.
	Internal bool
	// Certificate is the subject of the verified client certificate an
	// internal caller authenticated with; empty for every other caller.
	Certificate string
}

type callerKey struct{}

// WithCaller returns ctx carrying the authenticated caller, and notes its
// account on the access log line of the call in ctx, if any.
func WithCaller(ctx context.Context, c Caller) context.Context {
	calllog.NoteAccount(ctx, c.AccountID)
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerIn returns the caller ctx carries, if any, account or not.
func CallerIn(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}

// From returns the authenticated caller acting for an account. Every
// method behind the gRPC tap handle or the gateway's authentication has
// one; a missing caller is a wiring bug, refused rather than served
// unscoped.
func From(ctx context.Context) (Caller, error) {
	c, ok := CallerIn(ctx)
	if !ok || c.AccountID == 0 {
		return Caller{}, status.Error(codes.Unauthenticated, "missing credentials")
	}
	return c, nil
}
