package main

import (
	"bytes"
	"crypto/tls"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
)

// TestRapidResetAndRefusalLines: a connection opening and resetting
// streams without credentials is closed with GOAWAY, and neither it nor a
// flood of REST requests with a wrong key writes a log line per refused
// call: at most one a second per reason, counting the calls it stands for
// (docs/api.md 7). A client with a good key is served throughout.
func TestRapidResetAndRefusalLines(t *testing.T) {
	env := migratedEnv(t)
	acct := createAccount(t, env, "Steady")
	svc := startService(t, env)
	before := svc.stderr.Len()
	started := time.Now()

	conn, err := net.Dial("tcp", svc.grpcAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	goAway := rapidReset(t, conn, [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", jobboardv2.JobService_ListJobs_FullMethodName},
		{":authority", "test"}, {"content-type", "application/grpc"}, {"te", "trailers"}})
	t.Logf("rapid reset: GOAWAY after stream %d of %d", goAway.LastStreamID, 2*resetStreams)

	// 2,000 REST requests with a wrong key on kept-alive connections.
	for i := range 2_000 {
		req, _ := http.NewRequest("GET", svc.httpBase+"/api/v2.0/jobs.json", nil)
		req.SetBasicAuth("wrong-key", "")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("wrong key %d: %v", i, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if code, _, body := svc.request("basic", acct.APIKey, "GET", "/api/v2.0/jobs.json", ""); code != 200 {
		t.Errorf("a good key after the floods: %d %s", code, body)
	}
	time.Sleep(1500 * time.Millisecond) // the last refusals' count is written a second later
	took := time.Since(started)
	logged := svc.stderr.String()[before:]
	lines := strings.Count(logged, "\n")
	t.Logf("%d log lines, %d bytes, in %s", lines, len(logged), took.Round(time.Millisecond))
	// Per second: a line for each reason (gRPC unauthenticated, REST 401,
	// REST 429 once the address is limited) and the GOAWAY's; the good
	// call's line; the lines counting what the last second left out.
	if limit := 4*int(took.Seconds()+1) + 6; lines > limit {
		t.Errorf("%d log lines in %s for %d reset streams and 2,000 wrong keys, want at most %d:\n%.3000s", lines, took, resetStreams, limit, logged)
	}
	if !strings.Contains(logged, "rapid reset") || !strings.Contains(logged, "refused_calls") {
		t.Errorf("the lines name neither the rapid reset nor the refused calls counted:\n%.3000s", logged)
	}
}

// resetStreams is how many streams a rapid reset test opens and resets.
const resetStreams = 50_000

// rapidReset opens and resets resetStreams streams with the headers on
// conn, and returns the server's GOAWAY, which must be ENHANCE_YOUR_CALM
// and come within the first 1,000 streams.
func rapidReset(t *testing.T, conn net.Conn, headers [][2]string) *http2.GoAwayFrame {
	t.Helper()
	var buf bytes.Buffer
	buf.WriteString(http2.ClientPreface)
	fr := http2.NewFramer(&buf, nil)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, h := range headers {
		_ = enc.WriteField(hpack.HeaderField{Name: h[0], Value: h[1]})
	}
	for i := range resetStreams {
		id := uint32(2*i + 1)
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block.Bytes(), EndHeaders: true, EndStream: true})
		_ = fr.WriteRSTStream(id, http2.ErrCodeCancel)
	}
	// Sent from a goroutine: the server stops reading once it closes.
	go func() { _, _ = conn.Write(buf.Bytes()) }()
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	in := http2.NewFramer(io.Discard, conn)
	for {
		f, err := in.ReadFrame()
		if err != nil {
			t.Fatalf("reading the server's frames: %v, before any GOAWAY", err)
		}
		if g, ok := f.(*http2.GoAwayFrame); ok {
			// Past 100 resets in a second; net/http's own defence, which
			// waits for 400 handlers queued, came after 7,500 streams.
			if g.ErrCode != http2.ErrCodeEnhanceYourCalm || g.LastStreamID >= 2*1000 {
				t.Errorf("GOAWAY %v after stream %d, want ENHANCE_YOUR_CALM within the first 1,000 streams", g.ErrCode, g.LastStreamID)
			}
			return g
		}
	}
}

// TestRESTRapidResetOverTLS: REST over TLS speaks HTTP/2, and a connection
// opening and resetting streams with a wrong key is closed with GOAWAY;
// an HTTP/2 client with a good key is served, its request seen as TLS.
func TestRESTRapidResetOverTLS(t *testing.T) {
	env := migratedEnv(t)
	acct := createAccount(t, env, "Steady")
	f := newTLSFiles(t)
	svc := startServiceOver(t, append(env, f.env()...), f.roots)
	conn, err := tls.Dial("tcp", strings.TrimPrefix(svc.httpBase, "https://"), &tls.Config{RootCAs: f.roots, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if p := conn.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Fatalf("negotiated %q, want h2", p)
	}
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte("wrong-key:"))
	goAway := rapidReset(t, conn, [][2]string{{":method", "GET"}, {":scheme", "https"}, {":path", "/api/v2.0/jobs.json"},
		{":authority", "127.0.0.1"}, {"authorization", auth}})
	t.Logf("REST rapid reset: GOAWAY after stream %d of %d", goAway.LastStreamID, 2*resetStreams)
	req, _ := http.NewRequest("GET", svc.httpBase+"/api/v2.0/jobs.json", nil)
	req.SetBasicAuth(acct.APIKey, "")
	resp, err := svc.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.ProtoMajor != 2 {
		t.Errorf("a good key over HTTP/2: %d over %s, want 200 over HTTP/2", resp.StatusCode, resp.Proto)
	}
}
