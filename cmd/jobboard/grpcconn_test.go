package main

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
)

// TestGRPCConnectionAge: with connections aged out after about a second,
// one client calling without a pause for several seconds over one
// grpc.ClientConn is moved to new connections (the server counts them)
// without a single call failing; and a client pinging far more often than
// the keepalive policy allows is sent GOAWAY ENHANCE_YOUR_CALM.
func TestGRPCConnectionAge(t *testing.T) {
	env := migratedEnv(t)
	a := createAccount(t, env, "Alpha Freight")
	svc := startService(t, append(env, "JOBBOARD_GRPC_MAX_CONNECTION_AGE=1s", "JOBBOARD_GRPC_MAX_CONNECTION_AGE_GRACE=5s",
		"JOBBOARD_RATE_LIMIT=0"))
	t.Run("reconnects without failures", func(t *testing.T) { agedClient(t, svc, a) })
	t.Run("too many pings", func(t *testing.T) { tooManyPings(t, svc) })
}

func agedClient(t *testing.T, svc *service, a account) {
	jobs := jobboardv2.NewJobServiceClient(svc.grpcConn())
	opened := func() float64 {
		t.Helper()
		_, _, body := svc.scrape()
		n, ok := parseMetrics(t, body).find("jobboard_grpc_connections_opened_total", nil)
		if !ok {
			t.Fatalf("no jobboard_grpc_connections_opened_total in\n%s", body)
		}
		return n
	}
	before := opened()
	const callers, runFor = 4, 5 * time.Second
	var calls, failures atomic.Int64
	var firstFailure atomic.Value
	var wg sync.WaitGroup
	stop := time.Now().Add(runFor)
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				calls.Add(1)
				if _, err := jobs.ListJobs(withKey(a.APIKey), &jobboardv2.ListJobsRequest{}); err != nil {
					failures.Add(1)
					firstFailure.CompareAndSwap(nil, err)
				}
			}
		}()
	}
	wg.Wait()
	connections := opened() - before
	t.Logf("figures: %d calls by %d callers over one ClientConn in %v with a 1 s connection age: %.0f connections, %d failed calls",
		calls.Load(), callers, runFor, connections, failures.Load())
	if failures.Load() != 0 {
		t.Errorf("%d of %d calls failed, the first with %v", failures.Load(), calls.Load(), firstFailure.Load())
	}
	if connections < 3 {
		t.Errorf("%.0f connections in %v with a 1 s age, want at least 3", connections, runFor)
	}
}

// tooManyPings speaks HTTP/2 itself, to ping as no grpc-go client can
// (they never ping more often than every 10 s).
func tooManyPings(t *testing.T, svc *service) {
	conn, err := net.Dial("tcp", svc.grpcAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, conn)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := fr.WritePing(false, [8]byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("connection ended without GOAWAY: %v", err)
		}
		if away, ok := f.(*http2.GoAwayFrame); ok {
			if away.ErrCode != http2.ErrCodeEnhanceYourCalm || string(away.DebugData()) != "too_many_pings" {
				t.Errorf("GOAWAY %v %q, want ENHANCE_YOUR_CALM too_many_pings", away.ErrCode, away.DebugData())
			}
			return
		}
	}
}
