package main

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
)

// The single-job reads of scenarios 2 and 8, on h2load: the REST route and
// the HTTP floor over HTTP/1.1 keep-alive, GetJob and the grpc-go floor over
// HTTP/2 with gRPC's framing, one stream per connection as each HTTP/1.1
// connection carries one request at a time.

// restIDLoad loads GET base+prefix+{id} over the ids in turn with conns
// HTTP/1.1 connections; every answer but 200 counts as an error. key, when
// set, goes in Basic auth as the service's clients send it.
func restIDLoad(ctx context.Context, h *harness, name, base, prefix, key string, ids []int64, conns int, warm, d time.Duration) (loadResult, string, error) {
	uris := make([]string, len(ids))
	for i, id := range ids {
		uris[i] = base + prefix + strconv.FormatInt(id, 10)
	}
	run := h2loadRun{uris: uris, conns: conns, http1: true, warmup: warm, duration: d, dir: h.dir, name: name}
	if key != "" {
		run.headers = []string{basicAuthHeader(key)}
	}
	res, err := run.run(ctx)
	if err != nil {
		return loadResult{}, "", err
	}
	l := h2loadLoad(res)
	return l, res.cpuNote() + " ", nil
}

// basicAuthHeader is the header h2load sends for key, in Basic auth as the
// service's clients send it (the key as the user name, no password).
func basicAuthHeader(key string) string {
	return "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(key+":"))
}

// h2loadLoad turns a run into the figures of a closed-loop run: 200 is the
// only answer expected, anything else or no answer is an error; latencies
// are those of every answered request.
func h2loadLoad(res h2loadResult) loadResult {
	answered := res.requests()
	l := loadResult{
		requests: answered + res.failed,
		errors:   answered - res.count(200) + res.failed,
		elapsed:  res.elapsed,
	}
	var all []time.Duration
	for status, lats := range res.latencies {
		all = append(all, lats...)
		if status != 200 && l.firstError == "" {
			l.firstError = fmt.Sprintf("HTTP %d", status)
		}
	}
	if res.failed > 0 && l.firstError == "" {
		l.firstError = fmt.Sprintf("%d requests got no answer (h2load: errored or timed out)", res.failed)
	}
	l.latency = summarize(all)
	return l
}

// grpcTarget is a GetJob call checked with grpc-go, the service's own
// client: the id every h2load call asks for, and the size of the answer's
// frame, by which the run tells answered calls from errors (gRPC answers
// errors with HTTP 200 and a status in the trailers, without a message).
type grpcTarget struct {
	addr, key string
	id        int64
	frame     int64 // bytes of one answer: the 5-byte prefix and the message
}

// checkGetJob calls GetJob once with grpc-go and returns the target h2load
// can then load.
func checkGetJob(ctx context.Context, addr, key string, id int64) (grpcTarget, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return grpcTarget{}, err
	}
	defer conn.Close()
	if key != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+key)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := jobboardv2.NewJobServiceClient(conn).GetJob(ctx, &jobboardv2.GetJobRequest{Id: id})
	if err != nil {
		return grpcTarget{}, fmt.Errorf("GetJob %d: %w", id, err)
	}
	if resp.GetJob().GetId() != id {
		return grpcTarget{}, fmt.Errorf("GetJob %d answered job %d", id, resp.GetJob().GetId())
	}
	return grpcTarget{addr: addr, key: key, id: id, frame: 5 + int64(proto.Size(resp))}, nil
}

// grpcFrame is a message with gRPC's length prefix: not compressed, then
// the length in four bytes, big-endian.
func grpcFrame(m proto.Message) ([]byte, error) {
	msg, err := proto.Marshal(m)
	if err != nil {
		return nil, err
	}
	return append(binary.BigEndian.AppendUint32([]byte{0}, uint32(len(msg))), msg...), nil
}

// grpcIDLoad loads GetJob on the target with conns HTTP/2 connections of one
// stream each. h2load sends one body for every call, so every call asks for
// the same job; the floor's run asks for the same one.
//
// gRPC answers an error with HTTP 200 and the status in its trailers, and
// no message, so a call is counted as served by the bytes of messages the
// run received: the warm-up runs as a process of its own so that those
// bytes are the measured calls' only. Calls cut off by the end of the run
// may or may not have had their answer, which leaves that many calls (at
// most conns) that could have failed unseen.
func grpcIDLoad(ctx context.Context, h *harness, name string, t grpcTarget, conns int, warm, d time.Duration) (loadResult, string, error) {
	body, err := grpcFrame(&jobboardv2.GetJobRequest{Id: t.id})
	if err != nil {
		return loadResult{}, "", err
	}
	headers := []string{"content-type: application/grpc", "te: trailers"}
	if t.key != "" {
		headers = append(headers, "authorization: Bearer "+t.key)
	}
	run := h2loadRun{
		uris: []string{"http://" + t.addr + "/jobboard.v2.JobService/GetJob"}, conns: conns, streams: 1,
		duration: warm, headers: headers, body: body, dir: h.dir, name: name + "-warm",
	}
	if _, err := run.run(ctx); err != nil {
		return loadResult{}, "", err
	}
	run.name, run.duration = name, d
	res, err := run.run(ctx)
	if err != nil {
		return loadResult{}, "", err
	}
	l := h2loadLoad(res)
	messages := res.dataBytes / t.frame
	if res.dataBytes%t.frame != 0 || messages < res.count(200) || messages > res.started {
		l.errors++
		l.firstError = fmt.Sprintf("%d bytes of messages are not one %d-byte answer for each of the %d calls "+
			"of status 200 (and at most the %d cut off): some calls had no message, a gRPC error",
			res.dataBytes, t.frame, res.count(200), res.started-res.done)
	}
	return l, res.cpuNote() + " ", nil
}
