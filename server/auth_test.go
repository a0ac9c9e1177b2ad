package server

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/server/auth"

	"github.com/truckjobs/jobboard/internal/grpctest"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/truckjobs/jobboard/gateway/render"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/internal/apikey"
	"github.com/truckjobs/jobboard/internal/testfix"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// grpcFixture is a gRPC server on loopback over a fresh database with
// accounts A and B.
type grpcFixture struct {
	svcs *Services
	st   *store.Store
	addr string
	a, b storetest.Account
}

func newGRPCFixture(t testing.TB, cfg Config) *grpcFixture {
	t.Helper()
	f := &grpcFixture{st: storetest.Store(t)}
	cfg.RenderCallback = render.JSON
	svcs, err := NewServices(f.st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.svcs = svcs
	f.a, f.b = storetest.NewAccount(t, f.st, "A"), storetest.NewAccount(t, f.st, "B")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.addr = ln.Addr().String()
	srv := svcs.NewGRPCServer()
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return f
}

// conn dials the server from the loopback address from (127.0.0.x), so
// tests can be several clients.
func (f *grpcFixture) conn(t testing.TB, from string) *grpc.ClientConn {
	return grpctest.Dial(t, f.addr, from)
}

// watchKeys lets the fixture's authenticator remember keys in use.
func (f *grpcFixture) watchKeys(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	wait, err := f.svcs.Auth.WatchKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); wait() })
	if !testfix.Eventually(10*time.Second, f.svcs.Auth.Keys().Watching) {
		t.Fatal("key watch not started")
	}
}

func withKey(key string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+key)
}

func listDriversRaw(ctx context.Context, conn *grpc.ClientConn, body []byte) error {
	var out []byte
	return conn.Invoke(ctx, "/jobboard.v2.DriverService/ListDrivers", &body, &out, grpc.ForceCodecV2(grpctest.RawCodec{}))
}

// TestGRPCAuthenticatesBeforeDecoding: a 1 MiB message of invalid UTF-8
// is refused for its credentials, never read as a message, unless the
// credentials are good: then it is InvalidArgument naming the field.
func TestGRPCAuthenticatesBeforeDecoding(t *testing.T) {
	f := newGRPCFixture(t, Config{})
	conn := f.conn(t, "127.0.0.1")
	// first_name (6): the 1 MiB ListDrivers takes, less the tag and
	// length, all 0xff.
	body := grpctest.StringField(6, bytes.Repeat([]byte{0xff}, 1<<20-4))
	for _, tt := range []struct {
		name string
		ctx  context.Context
		code codes.Code
		want string
	}{
		{"no credentials", context.Background(), codes.Unauthenticated, "missing or invalid API key"},
		{"a wrong key", withKey("jb_live_wrong"), codes.Unauthenticated, "missing or invalid API key"},
		{"a wrong scheme", metadata.AppendToOutgoingContext(context.Background(), "authorization", "Basic "+f.a.APIKey),
			codes.Unauthenticated, "missing or invalid API key"},
		{"a good key", withKey(f.a.APIKey), codes.InvalidArgument,
			`first_name: "\xff\xff\xff`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := listDriversRaw(tt.ctx, conn, body)
			st := status.Convert(err)
			if st.Code() != tt.code || !strings.Contains(st.Message(), tt.want) {
				t.Fatalf("got %v, want %v with %q", err, tt.code, tt.want)
			}
			if len(st.Message()) > 5000 {
				t.Errorf("message of %d bytes: the value is not cut", len(st.Message()))
			}
		})
	}
	// A method not served is Unimplemented, credentials or not: the tap
	// handle authenticates only what is served.
	var out []byte
	if err := conn.Invoke(context.Background(), "/jobboard.v2.Nope/Nothing", &body, &out, grpc.ForceCodecV2(grpctest.RawCodec{})); status.Code(err) != codes.Unimplemented {
		t.Errorf("a method not served: %v, want Unimplemented", err)
	}
	// Health and reflection stay open.
	if err := conn.Invoke(context.Background(), "/grpc.health.v1.Health/Check", &[]byte{}, &out, grpc.ForceCodecV2(grpctest.RawCodec{})); err != nil {
		t.Errorf("health check without credentials: %v", err)
	}
}

// TestListDriversRefusesBadTextOverGRPC: a NUL or invalid UTF-8 in any
// string filter is InvalidArgument naming the field and the rule, as over
// REST, and never reaches PostgreSQL.
func TestListDriversRefusesBadTextOverGRPC(t *testing.T) {
	f := newGRPCFixture(t, Config{})
	logs := captureLog(t)
	conn := f.conn(t, "127.0.0.1")
	ctx := withKey(f.a.APIKey)
	fields := (&jobboardv2.ListDriversRequest{}).ProtoReflect().Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.Kind() != protoreflect.StringKind {
			continue
		}
		for _, value := range []string{"a\x00b", "\x00", "Ann\xc3", "\xff\xfe"} {
			t.Run(string(fd.Name())+"="+value, func(t *testing.T) {
				err := listDriversRaw(ctx, conn, grpctest.StringField(fd.Number(), []byte(value)))
				st := status.Convert(err)
				want := fmt.Sprintf("%s: %q is not valid", fd.Name(), value)
				if st.Code() != codes.InvalidArgument || !strings.HasPrefix(st.Message(), want) ||
					!strings.HasSuffix(st.Message(), "values must be UTF-8 text without NUL characters") {
					t.Errorf("got %v, want InvalidArgument starting %q and naming the rule", err, want)
				}
			})
		}
	}
	for _, bad := range []string{"pq:", "invalid byte sequence", "internal error"} {
		if strings.Contains(logs.String(), bad) {
			t.Errorf("the log holds %q:\n%s", bad, logs.String())
		}
	}
}

func listJobs(ctx context.Context, conn *grpc.ClientConn) error {
	_, err := jobboardv2.NewJobServiceClient(conn).ListJobs(ctx, &jobboardv2.ListJobsRequest{})
	return err
}

// TestRateLimitPerAccount: an account's keys share one budget, so more
// keys buy no more requests; another account has its own.
func TestRateLimitPerAccount(t *testing.T) {
	// One request every 10 s after a burst of 3: the test never waits one out.
	f := newGRPCFixture(t, Config{RateLimit: 0.1, RateBurst: 3})
	second, err := CreateAPIKey(context.Background(), f.st, f.a.AccountID)
	if err != nil {
		t.Fatal(err)
	}
	conn := f.conn(t, "127.0.0.1")
	for i, key := range []string{f.a.APIKey, second.APIKey, f.a.APIKey} {
		if err := listJobs(withKey(key), conn); err != nil {
			t.Fatalf("request %d of A's burst: %v", i+1, err)
		}
	}
	for _, key := range []string{second.APIKey, f.a.APIKey} {
		st := status.Convert(listJobs(withKey(key), conn))
		if st.Code() != codes.ResourceExhausted || !strings.Contains(st.Message(), "an account may make 0.1 requests a second, 3 at once") {
			t.Errorf("A past its burst: %v, want ResourceExhausted naming the account's rule", st)
		}
	}
	for i := range 3 {
		if err := listJobs(withKey(f.b.APIKey), conn); err != nil {
			t.Fatalf("account B, request %d: %v", i+1, err)
		}
	}
}

// TestWrongKeyLookedUpOnce: the same wrong key, sent again over REST's
// entry point or gRPC, does not reach the database; a good key created
// afterwards works at once.
func TestWrongKeyLookedUpOnce(t *testing.T) {
	f := newGRPCFixture(t, Config{})
	conn := f.conn(t, "127.0.0.1")
	ctx := context.Background()
	wrong := apikey.New() // a key of the right form that no account holds
	for i := range 3 {
		if _, err := f.svcs.Auth.AuthenticateKey(ctx, wrong, "192.0.2.1:1234"); status.Code(err) != codes.Unauthenticated {
			t.Fatalf("REST entry, attempt %d: %v", i+1, err)
		}
		if err := listJobs(withKey(wrong), conn); status.Code(err) != codes.Unauthenticated {
			t.Fatalf("gRPC, attempt %d: %v", i+1, err)
		}
	}
	if n := f.svcs.Auth.DatabaseLookups(); n != 1 {
		t.Errorf("%d database lookups for one wrong key sent 6 times, want 1", n)
	}
	// Another wrong key is looked up once too.
	other := apikey.New()
	for range 2 {
		_ = listJobs(withKey(other), conn)
	}
	if n := f.svcs.Auth.DatabaseLookups(); n != 2 {
		t.Errorf("%d lookups after a second wrong key sent twice, want 2", n)
	}
	key, err := CreateAPIKey(ctx, f.st, f.a.AccountID)
	if err != nil {
		t.Fatal(err)
	}
	if err := listJobs(withKey(key.APIKey), conn); err != nil {
		t.Errorf("a key created after the wrong ones: %v", err)
	}
}

// TestAuthFailuresLimitedPerAddress: past its failure budget an address
// gets ResourceExhausted for missing and wrong keys, a wrong key seen
// before is not looked up again; a good key from it, even one the server
// has not seen yet, and other addresses still work.
func TestAuthFailuresLimitedPerAddress(t *testing.T) {
	f := newGRPCFixture(t, Config{AuthFailureLimit: 0.1, AuthFailureBurst: 3})
	f.watchKeys(t)
	flooder, neighbour := f.conn(t, "127.0.0.1"), f.conn(t, "127.0.0.2")
	if err := listJobs(withKey(f.a.APIKey), flooder); err != nil {
		t.Fatal(err)
	}
	wrong := []string{apikey.New(), apikey.New(), apikey.New()}
	for i, key := range wrong {
		if err := listJobs(withKey(key), flooder); status.Code(err) != codes.Unauthenticated {
			t.Fatalf("wrong key %d within the burst: %v", i+1, err)
		}
	}
	lookups := f.svcs.Auth.DatabaseLookups()
	for _, tt := range []struct {
		name string
		ctx  context.Context
	}{
		{"a new wrong key", withKey(apikey.New())},
		{"a wrong key seen before", withKey(wrong[0])},
		{"no credentials", context.Background()},
		{"a wrong internal token", withKey("not-the-token")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := status.Convert(listJobs(tt.ctx, flooder))
			if st.Code() != codes.ResourceExhausted || !strings.Contains(st.Message(), "a client address may fail authentication 0.1 requests a second, 3 at once") {
				t.Errorf("past the failure burst: %v, want ResourceExhausted naming the rule", st)
			}
		})
	}
	if n := f.svcs.Auth.DatabaseLookups() - lookups; n > 2 {
		t.Errorf("%d keys looked up for an address over its failure limit, want at most 2 (the two not seen before)", n)
	}
	if err := listJobs(withKey(f.a.APIKey), flooder); err != nil {
		t.Errorf("a good key from the flooding address: %v", err)
	}
	if err := listJobs(withKey(f.b.APIKey), flooder); err != nil {
		t.Errorf("a good key not seen before, from the flooding address: %v", err)
	}
	if err := listJobs(withKey(wrong[1]), neighbour); status.Code(err) != codes.Unauthenticated {
		t.Errorf("a wrong key from another address: %v, want Unauthenticated", err)
	}
	if err := listJobs(withKey(f.b.APIKey), neighbour); err != nil {
		t.Errorf("a good key from another address: %v", err)
	}
	if _, err := f.svcs.Auth.AuthenticateKey(context.Background(), wrong[2], "[2001:db8::1]:443"); status.Code(err) != codes.Unauthenticated {
		t.Errorf("a wrong key over REST from another address: %v, want Unauthenticated", err)
	}
}

func TestAddressKey(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"192.0.2.1:5000", "192.0.2.1"},
		{"192.0.2.1", "192.0.2.1"},
		{"[::ffff:192.0.2.1]:80", "192.0.2.1"},
		{"[2001:db8:1:2:3:4:5:6]:443", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:ffff::1]:1", "2001:db8:1:2::/64"},
		{"bufconn", "bufconn"},
		{"", ""},
	} {
		t.Run(tt.in, func(t *testing.T) {
			if got := auth.AddressKey(tt.in); got != tt.want {
				t.Errorf("auth.AddressKey(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestDistinctWrongKeysCostNoLookups: with the key watch running, 1,000
// distinct wrong keys from one address cause at most 10 key lookups
// (docs/api.md 7), while a good key from that address, one the server has
// not seen yet, and a key created meanwhile still work.
func TestDistinctWrongKeysCostNoLookups(t *testing.T) {
	f := newGRPCFixture(t, Config{AuthFailureLimit: 10, AuthFailureBurst: 20})
	f.watchKeys(t)
	if !testfix.Eventually(10*time.Second, f.svcs.Auth.Keys().KnowsAll) {
		t.Fatal("the cache never loaded the keys in use")
	}
	conn := f.conn(t, "127.0.0.1")
	lookups := f.svcs.Auth.DatabaseLookups()
	for i := range 1_000 {
		_, err := f.svcs.Auth.AuthenticateKey(context.Background(), apikey.New(), "192.0.2.7:4000")
		if code := status.Code(err); code != codes.Unauthenticated && code != codes.ResourceExhausted {
			t.Fatalf("wrong key %d: %v", i, err)
		}
	}
	for range 50 {
		_ = listJobs(withKey(apikey.New()), conn)
	}
	n := f.svcs.Auth.DatabaseLookups() - lookups
	t.Logf("%d key lookups for 1,050 distinct wrong keys", n)
	if n > 10 {
		t.Errorf("%d key lookups for 1,050 distinct wrong keys, want at most 10", n)
	}
	if _, err := f.svcs.Auth.AuthenticateKey(context.Background(), f.b.APIKey, "192.0.2.7:4000"); err != nil {
		t.Errorf("a good key from the flooding address: %v", err)
	}
	created, err := CreateAPIKey(context.Background(), f.st, f.a.AccountID)
	if err != nil {
		t.Fatal(err)
	}
	// The watch hears of the new key a moment after it is committed.
	if !testfix.Eventually(10*time.Second, func() bool { return listJobs(withKey(created.APIKey), conn) == nil }) {
		t.Errorf("a key created during the flood: %v", listJobs(withKey(created.APIKey), conn))
	}
}

// TestKeyAddedUnheardStillWorks: a key added where the watch does not hear
// it (the trigger skipped, as a restore or a watch connection lost without
// an error would) is still looked up and works; the set of keys in use,
// found stale, is loaded again and then holds it.
func TestKeyAddedUnheardStillWorks(t *testing.T) {
	f := newGRPCFixture(t, Config{})
	f.watchKeys(t)
	if !testfix.Eventually(10*time.Second, f.svcs.Auth.Keys().KnowsAll) {
		t.Fatal("the cache never loaded the keys in use")
	}
	key := apikey.New()
	tx, err := f.st.DB().BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	// Triggers do not fire for a session in replica mode.
	if _, err := tx.Exec(`SET LOCAL session_replication_role = replica`); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`INSERT INTO api_keys (account_id, key_hash, key_prefix) VALUES ($1, $2, $3)`,
		f.a.AccountID, apikey.Hash(key), apikey.Prefix(key)); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if !f.svcs.Auth.Keys().Unknown(apikey.Hash(key)) {
		t.Fatal("the key's insertion was heard; the test needs it unheard")
	}
	if err := listJobs(withKey(key), f.conn(t, "127.0.0.1")); err != nil {
		t.Errorf("a key added unheard: %v", err)
	}
	if !testfix.Eventually(10*time.Second, func() bool { return f.svcs.Auth.Keys().KnowsAll() && !f.svcs.Auth.Keys().Unknown(apikey.Hash(key)) }) {
		t.Error("the set of keys in use was not loaded again with the key")
	}
}

// TestInternalTokenRotation: while the internal token is rotated, the
// board's services may call with the new token or the old one; a token
// that is neither, or the old one once the rotation ends, is refused.
func TestInternalTokenRotation(t *testing.T) {
	for _, tt := range []struct {
		name              string
		current, previous string
		accepted, refused []string
	}{
		{"before", "old-token", "", []string{"old-token"}, []string{"new-token", ""}},
		{"during", "new-token", "old-token", []string{"new-token", "old-token"}, []string{"other-token", "new-tokenold-token"}},
		{"after", "new-token", "", []string{"new-token"}, []string{"old-token"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newGRPCFixture(t, Config{InternalToken: tt.current, InternalTokenPrevious: tt.previous})
			search := jobboardv2.NewJobSearchServiceClient(f.conn(t, "127.0.0.1"))
			call := func(token string) error {
				ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+token)
				_, err := search.SearchJobs(ctx, &jobboardv2.SearchJobsRequest{})
				return err
			}
			for _, token := range tt.accepted {
				if err := call(token); err != nil {
					t.Errorf("token %q: %v, want it accepted", token, err)
				}
			}
			for _, token := range tt.refused {
				if err := call(token); status.Code(err) != codes.Unauthenticated {
					t.Errorf("token %q: %v, want Unauthenticated", token, err)
				}
			}
		})
	}
}
