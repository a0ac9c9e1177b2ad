package auth

import (
	"context"
	"crypto/subtle"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/internal/apikey"
	"github.com/truckjobs/jobboard/internal/authheader"
	"github.com/truckjobs/jobboard/internal/rpcfacts"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/keycache"
	"github.com/truckjobs/jobboard/server/ratelimit"
	"github.com/truckjobs/jobboard/server/store"
)

// Authenticator turns credentials into a Caller.
type Authenticator struct {
	store *store.Store
	// internalTokens are the tokens of the board's internal services: the
	// current one, and during a rotation the one being retired.
	internalTokens []string
	// keys remembers the accounts of keys in use once WatchKeys runs, and
	// wrong keys always.
	keys *keycache.Cache
	// lookups counts the key lookups that reached the database.
	lookups atomic.Int64
	// limiter gives each account (all its keys together) its own request
	// rate; nil is no limit.
	limiter *ratelimit.Limiter
	// failures limits the failed authentications of each client address;
	// nil is no limit.
	failures *ratelimit.Limiter
	// unknownLookups limits the lookups, per client address, of keys the
	// key cache knows are not in use (keycache.Unknown): they are looked
	// up only in case one was created too recently to be heard of.
	unknownLookups *ratelimit.Limiter
}

const (
	// keyCacheTTL bounds how long a key is trusted from memory should its
	// revocation go unheard (a watch connection that died silently).
	keyCacheTTL = 30 * time.Second
	// keyCacheEntries bounds the memory: some 100 bytes a key.
	keyCacheEntries = 100_000
	// missTTL is how long a wrong key is remembered as wrong. Keys are 256
	// random bits, so a wrong key never becomes a new key by chance; the
	// bound only matters for a key row added behind the trigger's back (a
	// restore), which then works within a minute.
	missTTL = time.Minute
	// missEntries bounds the memory for wrong keys.
	missEntries = 100_000
	// unknownLookupsPerSecond and unknownLookupsBurst: at most 10 lookups
	// in the first second of a flood of distinct wrong keys from one
	// address, 5 a second after (docs/api.md 7: at most 10 for 1,000 in a
	// second).
	unknownLookupsPerSecond = 5
	unknownLookupsBurst     = 5
	// knownKeysMax bounds the set of every key in use that answers a
	// distinct wrong key without a lookup while the key watch runs: some
	// 100 bytes a key. Past it, wrong keys are looked up, once each.
	knownKeysMax = 1_000_000
)

// New checks API keys against st, each account's requests against
// perAccount and each client address's failures against failures (nil
// limiters limit nothing). internalTokens are the tokens the board's
// internal services may call with (the current one, and while it is being
// rotated out the previous one); empty ones are left out, and none
// disables internal access.
func New(st *store.Store, internalTokens []string, perAccount, failures *ratelimit.Limiter) *Authenticator {
	a := &Authenticator{store: st, limiter: perAccount, failures: failures,
		keys:           keycache.New(keyCacheTTL, keyCacheEntries),
		unknownLookups: ratelimit.New(unknownLookupsPerSecond, unknownLookupsBurst)}
	for _, t := range internalTokens {
		if t != "" {
			a.internalTokens = append(a.internalTokens, t)
		}
	}
	a.keys.RememberMisses(func(err error) bool { return errors.Is(err, store.ErrNotFound) }, missTTL, missEntries)
	a.keys.KnowAll(st.KeyHashesInUse, knownKeysMax)
	return a
}

// lookupKey finds the account of a key hash in the database.
func (a *Authenticator) lookupKey(ctx context.Context, hash string) (int64, error) {
	a.lookups.Add(1)
	return a.store.AccountIDByKeyHash(ctx, hash)
}

// DatabaseLookups is how many key lookups reached the database: what the
// key cache and the limits on wrong keys keep low.
func (a *Authenticator) DatabaseLookups() int64 { return a.lookups.Load() }

// Keys is the cache of keys in use and wrong keys, for its state: whether
// the watch listens, whether it knows every key in use.
func (a *Authenticator) Keys() *keycache.Cache { return a.keys }

// watchStartWait bounds how long WatchKeys waits for the watch to listen.
const watchStartWait = 5 * time.Second

// WatchKeys lets the authenticator remember keys in use, for as long as ctx
// lasts: each key change is heard from the database, so a revoked key still
// fails on the next request. Without it, every request looks its key up.
// It returns once the watch listens (or after watchStartWait, if the
// database is slow to answer), so a server that starts serving after it
// remembers keys from its first request on. The returned function waits
// for the watch to end.
func (a *Authenticator) WatchKeys(ctx context.Context) (wait func(), err error) {
	w := &startedWatch{Cache: a.keys, listening: make(chan struct{})}
	wait, err = a.store.WatchKeyChanges(ctx, w)
	if err != nil {
		return nil, err
	}
	select {
	case <-w.listening:
	case <-time.After(watchStartWait):
	case <-ctx.Done():
	}
	return wait, nil
}

// startedWatch is the key cache as the watch's handler, telling when the
// watch first listens.
type startedWatch struct {
	*keycache.Cache
	once      sync.Once
	listening chan struct{}
}

func (w *startedWatch) WatchRestored() {
	w.Cache.WatchRestored()
	w.once.Do(func() { close(w.listening) })
}

// ErrBadCredentials answers a call whose key is missing or wrong.
var ErrBadCredentials = status.Error(codes.Unauthenticated, "missing or invalid API key")

// AuthenticateKey resolves an API key to ctx carrying its account. client
// is the address the request came from (host:port or a bare host); failed
// attempts are limited per client address.
func (a *Authenticator) AuthenticateKey(ctx context.Context, key, client string) (context.Context, error) {
	c, err := a.resolveKey(ctx, key, func() string { return client })
	if err != nil {
		return nil, err
	}
	return call.WithCaller(ctx, c), nil
}

// resolveKey finds the account of key. client() is the caller's address,
// asked for only when the key is missing or wrong: a gRPC call's costs a
// formatting of its peer's address, which most calls never need.
func (a *Authenticator) resolveKey(ctx context.Context, key string, client func() string) (call.Caller, error) {
	if key == "" {
		return call.Caller{}, a.failed(client)
	}
	// A key not in memory is looked up even from an address over its
	// failure limit: clients behind one NAT or proxy share an address, and
	// a neighbour's flood must not lock a good key out. While the key watch
	// runs, the cache knows every key in use, so a key outside them is
	// wrong but for one created a moment ago: such keys are looked up a
	// few a second per address, and past that answered wrong at once. A
	// wrong key looked up is looked up once: the cache remembers it.
	hash := apikey.Hash(key)
	unknown := a.keys.Unknown(hash)
	if unknown {
		if ok, _ := a.unknownLookups.Allow(AddressKey(client())); !ok {
			return call.Caller{}, a.failed(client)
		}
	}
	id, err := a.keys.AccountID(ctx, hash, a.lookupKey)
	if unknown && err == nil {
		// A key in use that the set lacked: a change went unheard (the
		// watch's connection lost without an error, say). The set is
		// loaded again, and not trusted until it is.
		a.keys.KnownSetStale()
	}
	if a.duringOutage(ctx, err) {
		id, err = a.keys.ReplicaAccountID(ctx, hash, a.store.ReplicaAccountIDByKeyHash, store.ErrNotFound)
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return call.Caller{}, a.failed(client)
	case err != nil:
		return call.Caller{}, call.Internal(ctx, err)
	}
	if ok, wait := a.limiter.Allow(strconv.FormatInt(id, 10)); !ok {
		return call.Caller{}, rateLimited(a.limiter, wait, "an account may make")
	}
	return call.Caller{AccountID: id}, nil
}

// duringOutage reports whether a lookup that failed with err is for the
// read database to answer: the primary could not be reached and there is
// one. Requests the read database serves then answer through the outage;
// every other one still fails on the primary it needs.
func (a *Authenticator) duringOutage(ctx context.Context, err error) bool {
	return store.IsUnavailable(err) && ctx.Err() == nil && a.store.ReadDatabase().Configured
}

// failed is the answer to a missing or wrong key: Unauthenticated, or
// ResourceExhausted once the client's address failed too often.
func (a *Authenticator) failed(client func() string) error {
	if ok, wait := a.failures.Allow(AddressKey(client())); !ok {
		return rateLimited(a.failures, wait, "a client address may fail authentication")
	}
	return ErrBadCredentials
}

// AddressKey is the failure-limit bucket of a client address: the IP
// without its port, and for IPv6 its /64, since one host commonly holds a
// whole /64. Anything unparsable is its own bucket.
func AddressKey(client string) string {
	host := client
	if h, _, err := net.SplitHostPort(client); err == nil {
		host = h
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

// rateLimited is ResourceExhausted with the wait in a RetryInfo detail,
// which the REST gateway turns into 429 and Retry-After. who starts the
// rule, such as "an account may make".
func rateLimited(l *ratelimit.Limiter, wait time.Duration, who string) error {
	secs := ratelimit.RetryAfterSeconds(wait)
	st := status.Newf(codes.ResourceExhausted,
		"rate limit: %s %g requests a second, %d at once; retry after %d s", who, l.PerSecond(), l.Burst(), secs)
	if withInfo, err := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(time.Duration(secs) * time.Second)}); err == nil {
		st = withInfo
	}
	return st.Err()
}

// internal reports whether token is one of the internal tokens, comparing
// it with each in constant time.
func (a *Authenticator) internal(token string) bool {
	found := 0
	for _, t := range a.internalTokens {
		found |= subtle.ConstantTimeCompare([]byte(token), []byte(t))
	}
	return found == 1
}

// AuthenticateGRPC reads `authorization: Bearer ...` from the metadata of
// a call to method that came from client() (asked for only when the call
// fails authentication). The server calls it from its tap handle, before
// the request message is read.
func (a *Authenticator) AuthenticateGRPC(ctx context.Context, method string, md metadata.MD, client func() string) (call.Caller, error) {
	token, ok := authheader.Bearer(call.FirstValue(md, "authorization"))
	if !ok {
		return call.Caller{}, a.failed(client)
	}
	if a.internal(token) {
		return a.internalCaller(ctx, md, method)
	}
	if internalOnly(method) {
		if _, err := a.resolveKey(ctx, token, client); err != nil {
			return call.Caller{}, err
		}
		return call.Caller{}, status.Error(codes.PermissionDenied, "only the board's internal services may call "+method)
	}
	return a.resolveKey(ctx, token, client)
}

func (a *Authenticator) internalCaller(ctx context.Context, md metadata.MD, method string) (call.Caller, error) {
	raw := call.FirstValue(md, "x-account-id")
	if raw == "" {
		if internalOnly(method) {
			return call.Caller{Internal: true}, nil
		}
		return call.Caller{}, call.InvalidFieldText("x-account-id", "internal calls must name the account they act for")
	}
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 {
		return call.Caller{}, call.InvalidField("x-account-id", raw, "is not an account id (a positive integer)")
	}
	err = a.store.CheckAccount(ctx, id)
	if a.duringOutage(ctx, err) {
		err = a.store.ReplicaCheckAccount(ctx, id)
	}
	if errors.Is(err, store.ErrNotFound) {
		return call.Caller{}, status.Errorf(codes.NotFound, "x-account-id: account %d not found", id)
	} else if err != nil {
		return call.Caller{}, call.Internal(ctx, err)
	}
	return call.Caller{AccountID: id, Internal: true}, nil
}

// internalOnly says whether only the board's own services may call the
// gRPC method: its (jobboard.v2.facts) say CALLER_INTERNAL.
func internalOnly(fullMethod string) bool {
	m, ok := rpcfacts.Of(fullMethod)
	return ok && m.Caller == jobboardv2.Caller_CALLER_INTERNAL
}
