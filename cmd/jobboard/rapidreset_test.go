package main

import (
	"bytes"
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
// (contract §10). A client with a good key is served throughout.
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
	var buf bytes.Buffer
	buf.WriteString(http2.ClientPreface)
	fr := http2.NewFramer(&buf, nil)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, h := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", jobboardv2.JobService_ListJobs_FullMethodName},
		{":authority", "test"}, {"content-type", "application/grpc"}, {"te", "trailers"}} {
		_ = enc.WriteField(hpack.HeaderField{Name: h[0], Value: h[1]})
	}
	const streams = 50_000
	for i := range streams {
		id := uint32(2*i + 1)
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block.Bytes(), EndHeaders: true})
		_ = fr.WriteRSTStream(id, http2.ErrCodeCancel)
	}
	go func() { _, _ = conn.Write(buf.Bytes()) }()
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	in := http2.NewFramer(io.Discard, conn)
	var goAway *http2.GoAwayFrame
	for goAway == nil {
		f, err := in.ReadFrame()
		if err != nil {
			t.Fatalf("reading the server's frames: %v, before any GOAWAY", err)
		}
		goAway, _ = f.(*http2.GoAwayFrame)
	}
	if goAway.ErrCode != http2.ErrCodeEnhanceYourCalm {
		t.Errorf("GOAWAY %v, want ENHANCE_YOUR_CALM", goAway.ErrCode)
	}
	t.Logf("rapid reset: GOAWAY after stream %d of %d", goAway.LastStreamID, 2*streams)

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
		t.Errorf("%d log lines in %s for %d reset streams and 2,000 wrong keys, want at most %d:\n%.3000s", lines, took, streams, limit, logged)
	}
	if !strings.Contains(logged, "rapid reset") || !strings.Contains(logged, "refused_calls") {
		t.Errorf("the lines name neither the rapid reset nor the refused calls counted:\n%.3000s", logged)
	}
}
