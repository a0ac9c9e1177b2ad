package resetguard_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/truckjobs/jobboard/internal/resetguard"
)

// serve starts a gRPC server with health checks, its connections guarded.
func serve(t *testing.T, closed *atomic.Int32) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.MaxConcurrentStreams(100), grpc.Creds(resetguard.Credentials(nil, resetguard.Settings{
		MaxResetsPerSecond: 100,
		Closed:             func(net.Addr, int, int) { closed.Add(1) },
	})))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return ln.Addr().String()
}

// TestRapidResetClosed: a client opening and resetting streams gets GOAWAY
// with ENHANCE_YOUR_CALM and its connection closed, long before it has
// sent them all.
func TestRapidResetClosed(t *testing.T) {
	var closed atomic.Int32
	addr := serve(t, &closed)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var buf bytes.Buffer
	buf.WriteString(http2.ClientPreface)
	fr := http2.NewFramer(&buf, nil)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, h := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", healthpb.Health_Check_FullMethodName},
		{":authority", "test"}, {"content-type", "application/grpc"}, {"te", "trailers"}} {
		_ = enc.WriteField(hpack.HeaderField{Name: h[0], Value: h[1]})
	}
	const streams = 20_000
	for i := range streams {
		id := uint32(2*i + 1)
		if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block.Bytes(), EndHeaders: true}); err != nil {
			t.Fatal(err)
		}
		if err := fr.WriteRSTStream(id, http2.ErrCodeCancel); err != nil {
			t.Fatal(err)
		}
	}
	// Sent from a goroutine: the server stops reading when it closes.
	go func() { _, _ = conn.Write(buf.Bytes()) }()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	in := http2.NewFramer(io.Discard, conn)
	var goAway *http2.GoAwayFrame
	for goAway == nil {
		f, err := in.ReadFrame()
		if err != nil {
			t.Fatalf("reading the server's frames: %v, before any GOAWAY", err)
		}
		if g, ok := f.(*http2.GoAwayFrame); ok {
			goAway = g
		}
	}
	if goAway.ErrCode != http2.ErrCodeEnhanceYourCalm || goAway.LastStreamID >= 2*streams || string(goAway.DebugData()) != "rapid reset" {
		t.Errorf("GOAWAY %v, last stream %d, %q; want ENHANCE_YOUR_CALM, rapid reset, before the last of %d streams", goAway.ErrCode, goAway.LastStreamID, goAway.DebugData(), streams)
	}
	for {
		if _, err := in.ReadFrame(); err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !isReset(err) {
				t.Errorf("after GOAWAY: %v, want the connection closed", err)
			}
			break
		}
	}
	if closed.Load() != 1 {
		t.Errorf("Closed told of %d connections, want 1", closed.Load())
	}
}

func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op)
}

// TestBusyClientKept: a client making many calls, cancelling some as
// clients do, keeps its connection.
func TestBusyClientKept(t *testing.T) {
	var closed atomic.Int32
	addr := serve(t, &closed)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := healthpb.NewHealthClient(conn)
	for i := range 2_000 {
		ctx, cancel := context.WithCancel(context.Background())
		if i%20 == 0 {
			cancel() // a call given up before it is sent
		}
		_, _ = client.Check(ctx, &healthpb.HealthCheckRequest{})
		cancel()
	}
	if _, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil || closed.Load() != 0 {
		t.Errorf("after 2,000 calls: %v, %d connections closed; want the connection kept", err, closed.Load())
	}
}

// TestFramesFollowedAcrossPieces: the guard finds frame headers however
// the bytes are cut.
func TestFramesFollowedAcrossPieces(t *testing.T) {
	var stream bytes.Buffer
	stream.WriteString(http2.ClientPreface)
	fr := http2.NewFramer(&stream, nil)
	_ = fr.WriteSettings()
	_ = fr.WriteData(1, false, make([]byte, 1000))
	for id := uint32(1); id <= 301; id += 2 {
		_ = fr.WriteRSTStream(id, http2.ErrCodeCancel)
	}
	for _, piece := range []int{1, 5, 9, 10, 4096} {
		t.Run(fmt.Sprintf("pieces of %d bytes", piece), func(t *testing.T) {
			var closed atomic.Int32
			client, server := net.Pipe()
			guarded := resetguard.Wrap(server, resetguard.Settings{MaxResetsPerSecond: 100, Closed: func(net.Addr, int, int) { closed.Add(1) }})
			go func() {
				b := stream.Bytes()
				for len(b) > 0 {
					n := min(piece, len(b))
					if _, err := client.Write(b[:n]); err != nil {
						return
					}
					b = b[n:]
				}
			}()
			go func() { _, _ = io.Copy(io.Discard, client) }()
			buf := make([]byte, 7)
			for closed.Load() == 0 {
				if _, err := guarded.Read(buf); err != nil {
					break
				}
			}
			if closed.Load() != 1 {
				t.Errorf("151 resets in pieces of %d bytes: closed %d times, want once", piece, closed.Load())
			}
			client.Close()
		})
	}
}
