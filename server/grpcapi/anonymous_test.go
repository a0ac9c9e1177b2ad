package grpcapi

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/internal/grpctest"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
)

// TestAnonymousCallsBoundedPerClient: an address may hold a few
// reflection streams open, no more, and however many it and others hold,
// health checks from every address answer (docs/api.md 7: reflection can
// never take the capacity health checks use); a stream that ends gives its
// place back, and so does a call whose message was refused for its size.
func TestAnonymousCallsBoundedPerClient(t *testing.T) {
	f := newOpenServer(t)
	greedy, other := f.conn(t, "127.0.0.2"), f.conn(t, "127.0.0.3")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// Reflection streams stay open until cancelled: each holds a place.
	var streams []context.CancelFunc
	open := func(conn *grpc.ClientConn) error {
		sctx, stop := context.WithCancel(ctx)
		streams = append(streams, stop)
		s, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(sctx)
		if err != nil {
			return err
		}
		// A first answer proves the server admitted the stream.
		if err := s.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
			return err
		}
		_, err = s.Recv()
		return err
	}
	for i := range maxAnonymousCallsPerClient {
		if err := open(greedy); err != nil {
			t.Fatalf("reflection stream %d: %v", i, err)
		}
	}
	if err := open(greedy); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "4 reflection calls in flight") {
		t.Errorf("a reflection stream beside %d open ones from one address: %v, want ResourceExhausted naming the limit", maxAnonymousCallsPerClient, err)
	}
	check := func(conn *grpc.ClientConn) error {
		_, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
		return err
	}
	for name, conn := range map[string]*grpc.ClientConn{"the same address": greedy, "another address": other} {
		if err := check(conn); err != nil {
			t.Errorf("a health check from %s beside %d open reflection streams: %v", name, maxAnonymousCallsPerClient, err)
		}
	}
	streams[0]()
	// The server sees the cancellation a moment later.
	deadline := time.Now().Add(5 * time.Second)
	for err := open(greedy); err != nil; err = open(greedy) {
		if time.Now().After(deadline) {
			t.Fatalf("a reflection stream after one ended: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}

	// Health checks of 2 MiB, past the 1 MiB health takes: each is refused,
	// and each gives its place back.
	big := bytes.Repeat([]byte{'x'}, 2<<20)
	req := append([]byte{0x0a, 0x80, 0x80, 0x80, 0x01}, big...) // service (1), 2 MiB
	for range 2 * maxAnonymousCallsPerClient {
		var out []byte
		err := other.Invoke(ctx, healthpb.Health_Check_FullMethodName, &req, &out, grpc.ForceCodecV2(grpctest.RawCodec{}))
		if status.Code(err) == codes.OK || status.Code(err) == codes.ResourceExhausted && bytes.Contains([]byte(err.Error()), []byte("in flight")) {
			t.Fatalf("an oversized health check: %v, want it refused for its size", err)
		}
	}
	if err := check(other); err != nil {
		t.Errorf("a health check after %d refused ones: %v", 2*maxAnonymousCallsPerClient, err)
	}
}

// TestAnonymousPlacesComeBack: health Watch streams waiting for changes
// hold no place, and calls grpc-go drops at once (a deadline already past
// when their headers arrive) give theirs back.
func TestAnonymousPlacesComeBack(t *testing.T) {
	f := newOpenServer(t)
	conn := f.conn(t, "127.0.0.5")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	health := healthpb.NewHealthClient(conn)
	for i := range 2 * maxAnonymousCallsPerClient {
		w, err := health.Watch(ctx, &healthpb.HealthCheckRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Recv(); err != nil {
			t.Fatalf("watch %d: %v", i, err)
		}
	}
	if _, err := health.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
		t.Errorf("a health check beside %d open watches: %v", 2*maxAnonymousCallsPerClient, err)
	}

	raw, err := (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.6")}}).Dial("tcp", f.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var buf bytes.Buffer
	buf.WriteString(http2.ClientPreface)
	fr := http2.NewFramer(&buf, nil)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	for i := range 4 * maxAnonymousCallsPerClient {
		var block bytes.Buffer
		enc := hpack.NewEncoder(&block)
		for _, h := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", healthpb.Health_Check_FullMethodName},
			{":authority", "test"}, {"content-type", "application/grpc"}, {"te", "trailers"}, {"grpc-timeout", "1n"}} {
			if err := enc.WriteField(hpack.HeaderField{Name: h[0], Value: h[1]}); err != nil {
				t.Fatal(err)
			}
		}
		if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: uint32(2*i + 1), BlockFragment: block.Bytes(), EndHeaders: true}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := raw.Write(buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the server handles the streams
	after := f.conn(t, "127.0.0.6")
	if _, err := healthpb.NewHealthClient(after).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
		t.Errorf("a health check after %d calls dropped for their deadline: %v", 4*maxAnonymousCallsPerClient, err)
	}
}

// TestReflectionStreamsLeaveHealthChecks: the review's case. Four
// addresses each holding four idle reflection streams, every place
// reflection has, leave health checks from any address answering at once.
func TestReflectionStreamsLeaveHealthChecks(t *testing.T) {
	f := newOpenServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, addr := range []string{"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"} {
		conn := f.conn(t, addr)
		for i := range maxAnonymousCallsPerClient {
			s, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
			if err == nil {
				err = s.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}})
			}
			if err == nil {
				_, err = s.Recv()
			}
			if err != nil {
				t.Fatalf("reflection stream %d from %s: %v", i, addr, err)
			}
		}
	}
	for _, addr := range []string{"127.0.0.2", "127.0.0.9"} {
		started := time.Now()
		_, err := healthpb.NewHealthClient(f.conn(t, addr)).Check(ctx, &healthpb.HealthCheckRequest{})
		took := time.Since(started)
		t.Logf("health check from %s beside %d reflection streams: %v in %s", addr, maxAnonymousCalls, err, took)
		if err != nil || took > time.Second {
			t.Errorf("health check from %s beside %d reflection streams: %v after %s, want SERVING within 1 s", addr, maxAnonymousCalls, err, took)
		}
	}
}

// TestAnonymousCallsEndedWhenSilent: a reflection stream without a request
// for the idle time is ended with a status saying why, and gives its place
// back; one that keeps asking stays open. A health call whose message does
// not arrive is ended after healthMessageWait.
func TestAnonymousCallsEndedWhenSilent(t *testing.T) {
	was := reflectionIdle
	reflectionIdle = 300 * time.Millisecond
	defer func() { reflectionIdle = was }()
	f := newOpenServer(t)
	conn := f.conn(t, "127.0.0.7")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ask := func(s reflectionpb.ServerReflection_ServerReflectionInfoClient) error {
		if err := s.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
			return err
		}
		_, err := s.Recv()
		return err
	}
	idle, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	busy, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := ask(idle); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	for time.Since(started) < time.Second {
		if err := ask(busy); err != nil {
			t.Fatalf("a reflection stream asking every 100 ms, after %s: %v", time.Since(started), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, err = idle.Recv()
	if status.Code(err) != codes.DeadlineExceeded || !strings.Contains(err.Error(), "reflection stream ended: no request for 300ms; open a new one") {
		t.Errorf("an idle reflection stream: %v, want DeadlineExceeded saying it had no request for 300ms", err)
	}

	// Health check headers whose message never comes: each is ended, and
	// its place comes back, so checks from that address answer again.
	raw, err := (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.8")}}).Dial("tcp", f.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var buf bytes.Buffer
	buf.WriteString(http2.ClientPreface)
	fr := http2.NewFramer(&buf, nil)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	for i := range maxAnonymousCallsPerClient {
		var block bytes.Buffer
		enc := hpack.NewEncoder(&block)
		for _, h := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", healthpb.Health_Check_FullMethodName},
			{":authority", "test"}, {"content-type", "application/grpc"}, {"te", "trailers"}} {
			if err := enc.WriteField(hpack.HeaderField{Name: h[0], Value: h[1]}); err != nil {
				t.Fatal(err)
			}
		}
		if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: uint32(2*i + 1), BlockFragment: block.Bytes(), EndHeaders: true}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := raw.Write(buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	after := f.conn(t, "127.0.0.8")
	time.Sleep(100 * time.Millisecond) // the server admits the silent calls first
	started = time.Now()
	for {
		_, err := healthpb.NewHealthClient(after).Check(ctx, &healthpb.HealthCheckRequest{})
		if err == nil {
			break
		}
		if status.Code(err) != codes.ResourceExhausted || time.Since(started) > 3*time.Second {
			t.Fatalf("a health check beside %d silent ones from the same address, after %s: %v", maxAnonymousCallsPerClient, time.Since(started), err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if took := time.Since(started); took < healthMessageWait/2 || took > healthMessageWait+time.Second {
		t.Errorf("a health check answered %s after %d silent ones took every place, want about %s", took, maxAnonymousCallsPerClient, healthMessageWait)
	}
}
