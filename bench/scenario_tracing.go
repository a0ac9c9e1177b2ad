package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

func init() {
	register(12, "GET one job by id, traced (1% sampled, every request) against untraced, 32 connections", tracingScenario)
}

// samplings are the tracing settings measured against the untraced
// server: the topology's (docs/deploy.md: one request in a hundred, and
// every request whose caller sampled it), and every request traced.
var samplings = []struct {
	name string
	env  []string
}{
	{"1% sampled (parentbased_traceidratio 0.01)", []string{"OTEL_TRACES_SAMPLER=parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG=0.01"}},
	{"every request sampled (always_on)", []string{"OTEL_TRACES_SAMPLER=always_on"}},
}

// tracingScenario says what tracing costs the job retrieve: the harness's
// server, untraced, against a second server exporting its spans over
// OTLP/HTTP to a sink in this process (a backend's receiving end, which
// reads each export and keeps nothing: the backend's own work is not the
// service's), loaded in turn with scenario 2's REST load over the same
// ids, for each of samplings. The spans of a retrieve: the request's and
// its SQL statement's.
func tracingScenario(ctx context.Context, h *harness) ([]result, error) {
	warm, d, reps := 2*time.Second, 10*time.Second, 3
	if h.opts.quick {
		warm, d, reps = time.Second, 3*time.Second, 1
	}
	sink, err := startOTLPSink()
	if err != nil {
		return nil, err
	}
	defer sink.close()
	a := h.accounts[0]
	ids, err := activeJobIDs(ctx, h, a)
	if err != nil {
		return nil, err
	}
	rand.New(rand.NewPCG(3, 3)).Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	label := fmt.Sprintf("%d connections, %.0f s", retrieveConns, d.Seconds())
	var rows []result
	for i, s := range samplings {
		env := append([]string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + sink.url, "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf"}, s.env...)
		traced, err := h.startServer(ctx, fmt.Sprintf("server-traced-%d", i), env...)
		if err != nil {
			return nil, err
		}
		var runs [2][]loadResult
		exportsBefore, bytesBefore := sink.exports.Load(), sink.bytes.Load()
		for range reps {
			for k, p := range []*process{h.server, traced} {
				r, _, err := restIDLoad(ctx, h, p.name+"-tracing", p.httpBase, "/api/v2.0/jobs.json/", a.APIKey, ids, retrieveConns, warm, d)
				if err != nil {
					traced.stop()
					return nil, err
				}
				runs[k] = append(runs[k], r)
			}
		}
		traced.stop() // its batch of spans still waiting is exported at the stop
		exported := fmt.Sprintf(" The traced server exported %d batches, %.1f MB of spans, over its runs.",
			sink.exports.Load()-exportsBefore, float64(sink.bytes.Load()-bytesBefore)/1e6)
		pair := tracedRows("GET jobs.json/{id}: REST (h2load, HTTP/1.1), "+label, s.name, runs)
		pair[1].note += exported
		if i > 0 {
			rows = append(rows, pair[1]) // one untraced row is enough: the next pair's is the same server's
			continue
		}
		rows = append(rows, pair...)
	}
	return rows, nil
}

// tracedRows are the untraced runs' row and the traced runs', with its
// ratio to the untraced; each is the run of median throughput.
func tracedRows(name, sampling string, runs [2][]loadResult) []result {
	untraced := result{name: name + ", untraced"}
	traced := result{name: name + ", traced, " + sampling}
	againstMedian(&untraced, &traced, runs)
	traced.note = "The floor column is the untraced runs' and the ratio is this row's throughput over it, " +
		"from runs interleaved in one bench run; the spans go over OTLP/HTTP to a sink in the bench's process. " + traced.note
	return []result{untraced, traced}
}

// otlpSink is the receiving end of OTLP/HTTP trace exports: it reads
// each export whole, counts it, and answers with an empty
// ExportTraceServiceResponse (every span accepted).
type otlpSink struct {
	url            string
	srv            *http.Server
	exports, bytes atomic.Int64
}

func startOTLPSink() (*otlpSink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &otlpSink{url: "http://" + ln.Addr().String()}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		s.exports.Add(1)
		s.bytes.Add(n)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	})
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

func (s *otlpSink) close() { _ = s.srv.Close() }
