package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"jobboard/server/keycache"
	"jobboard/server/ratelimit"
	"jobboard/server/store"
)

// Caller is the account a request acts for.
type Caller struct {
	AccountID int64
	// Internal is true for the board's own services, which authenticate with
	// the internal token and name the account in x-account-id.
	Internal bool
}

type callerKey struct{}

// ContextWithCaller returns ctx carrying the authenticated caller.
func ContextWithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// AccountOf returns the account a context acts for, for logs.
func AccountOf(ctx context.Context) (int64, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c.AccountID, ok && c.AccountID != 0
}

// callerFrom returns the authenticated caller. Every method behind the auth
// interceptor or the gateway's auth middleware has one; a missing caller is
// a wiring bug, refused rather than served unscoped.
func callerFrom(ctx context.Context) (Caller, error) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	if !ok || c.AccountID == 0 {
		return Caller{}, status.Error(codes.Unauthenticated, "missing credentials")
	}
	return c, nil
}

// Authenticator turns credentials into a Caller.
type Authenticator struct {
	store         *store.Store
	internalToken string
	// internalOnly holds the full gRPC method prefixes only the internal
	// token may call (the driver-application intake).
	internalOnly []string
	// keys remembers the accounts of keys in use once WatchKeys runs.
	keys *keycache.Cache
	// limiter gives each API key its own request rate; nil is no limit.
	limiter *ratelimit.Limiter
}

const (
	// keyCacheTTL bounds how long a key is trusted from memory should its
	// revocation go unheard (a watch connection that died silently).
	keyCacheTTL = 30 * time.Second
	// keyCacheEntries bounds the memory: some 100 bytes a key.
	keyCacheEntries = 100_000
)

// NewAuthenticator checks API keys against st. An empty internalToken
// disables internal access.
func NewAuthenticator(st *store.Store, internalToken string) *Authenticator {
	return &Authenticator{store: st, internalToken: internalToken, internalOnly: []string{"/jobboard.v2.DriverIntakeService/"},
		keys: keycache.New(keyCacheTTL, keyCacheEntries)}
}

// WatchKeys lets the authenticator remember keys in use, for as long as ctx
// lasts: each key change is heard from the database, so a revoked key still
// fails on the next request. Without it, every request looks its key up.
// The returned function waits for the watch to end.
func (a *Authenticator) WatchKeys(ctx context.Context) (wait func(), err error) {
	return a.store.WatchKeyChanges(ctx, a.keys)
}

var errBadCredentials = status.Error(codes.Unauthenticated, "missing or invalid API key")

// AuthenticateKey resolves an API key to ctx carrying its account.
func (a *Authenticator) AuthenticateKey(ctx context.Context, key string) (context.Context, error) {
	if key == "" {
		return nil, errBadCredentials
	}
	hash := HashAPIKey(key)
	id, err := a.keys.AccountID(ctx, hash, a.store.AccountIDByKeyHash)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errBadCredentials
	}
	if err != nil {
		return nil, internalError(ctx, err)
	}
	if ok, wait := a.limiter.Allow(hash); !ok {
		return nil, rateLimited(a.limiter, wait)
	}
	return ContextWithCaller(ctx, Caller{AccountID: id}), nil
}

// rateLimited is ResourceExhausted with the wait in a RetryInfo detail,
// which the REST gateway turns into 429 and Retry-After.
func rateLimited(l *ratelimit.Limiter, wait time.Duration) error {
	secs := ratelimit.RetryAfterSeconds(wait)
	st := status.Newf(codes.ResourceExhausted,
		"rate limit: an API key may make %g requests a second, %d at once; retry after %d s", l.PerSecond(), l.Burst(), secs)
	if withInfo, err := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(time.Duration(secs) * time.Second)}); err == nil {
		st = withInfo
	}
	return st.Err()
}

// AuthenticateGRPC reads `authorization: Bearer ...` metadata. It is the
// AuthFunc of the gRPC auth interceptor.
func (a *Authenticator) AuthenticateGRPC(ctx context.Context) (context.Context, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	token, ok := bearer(first(md, "authorization"))
	if !ok {
		return nil, errBadCredentials
	}
	method, _ := grpc.Method(ctx)
	if a.internalToken != "" && subtle.ConstantTimeCompare([]byte(token), []byte(a.internalToken)) == 1 {
		return a.internalCaller(ctx, md, method)
	}
	for _, p := range a.internalOnly {
		if strings.HasPrefix(method, p) {
			if _, err := a.AuthenticateKey(ctx, token); err != nil {
				return nil, err
			}
			return nil, status.Error(codes.PermissionDenied, "only the board's internal services may call "+method)
		}
	}
	return a.AuthenticateKey(ctx, token)
}

func (a *Authenticator) internalCaller(ctx context.Context, md metadata.MD, method string) (context.Context, error) {
	raw := first(md, "x-account-id")
	if raw == "" {
		for _, p := range a.internalOnly {
			if strings.HasPrefix(method, p) {
				return ContextWithCaller(ctx, Caller{Internal: true}), nil
			}
		}
		return nil, status.Error(codes.InvalidArgument, "x-account-id: internal calls must name the account they act for")
	}
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 {
		return nil, status.Errorf(codes.InvalidArgument, "x-account-id: %q is not an account id (a positive integer)", raw)
	}
	if _, err := a.store.Account(ctx, id); errors.Is(err, store.ErrNotFound) {
		return nil, status.Errorf(codes.NotFound, "x-account-id: account %d not found", id)
	} else if err != nil {
		return nil, internalError(ctx, err)
	}
	return ContextWithCaller(ctx, Caller{AccountID: id, Internal: true}), nil
}

// bearer extracts the token of an "Bearer <token>" header value.
func bearer(h string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

func first(md metadata.MD, key string) string {
	if v := md.Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}

// HashAPIKey is the form a key is stored and looked up in.
func HashAPIKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}
