package server

import (
	"bytes"
	"context"
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
)

// TestAnonymousCallsBoundedPerClient: an address may hold a few health or
// reflection calls in flight, no more; another address is not affected; a
// call that ends, even one whose message was refused for its size, gives
// its place back.
func TestAnonymousCallsBoundedPerClient(t *testing.T) {
	f := newGRPCFixture(t, Config{})
	greedy, other := f.conn(t, "127.0.0.2"), f.conn(t, "127.0.0.3")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// Reflection streams stay open until cancelled: each holds a place.
	var streams []context.CancelFunc
	for i := range maxAnonymousCallsPerClient {
		sctx, stop := context.WithCancel(ctx)
		streams = append(streams, stop)
		s, err := reflectionpb.NewServerReflectionClient(greedy).ServerReflectionInfo(sctx)
		if err != nil {
			t.Fatal(err)
		}
		// A first answer proves the server admitted the stream.
		if err := s.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Recv(); err != nil {
			t.Fatalf("reflection stream %d: %v", i, err)
		}
	}
	check := func(conn *grpc.ClientConn) error {
		_, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
		return err
	}
	if err := check(greedy); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("a health check beside %d open streams from one address: %v, want ResourceExhausted", maxAnonymousCallsPerClient, err)
	}
	if err := check(other); err != nil {
		t.Errorf("a health check from another address: %v", err)
	}
	streams[0]()
	// The server sees the cancellation a moment later.
	deadline := time.Now().Add(5 * time.Second)
	for err := check(greedy); err != nil; err = check(greedy) {
		if time.Now().After(deadline) {
			t.Fatalf("a health check after a stream ended: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}

	// Health checks of 2 MiB, past the 1 MiB health takes: each is refused,
	// and each gives its place back.
	big := bytes.Repeat([]byte{'x'}, 2<<20)
	req := append([]byte{0x0a, 0x80, 0x80, 0x80, 0x01}, big...) // service (1), 2 MiB
	for range 2 * maxAnonymousCallsPerClient {
		var out []byte
		err := other.Invoke(ctx, healthpb.Health_Check_FullMethodName, &req, &out, grpc.ForceCodecV2(rawCodec{}))
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
	f := newGRPCFixture(t, Config{})
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
