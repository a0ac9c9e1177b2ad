package main

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/truckjobs/jobboard/internal/testfix"
)

// receivedSpan is a span as an OTLP receiver got it, ids in hex.
type receivedSpan struct {
	traceID, spanID, parentID, name, service string
	kind                                     tracepb.Span_SpanKind
	attrs                                    map[string]string
}

// otlpReceiver is an OTLP/HTTP trace receiver: it decodes each export
// request (protobuf, plain or gzip) and keeps its spans.
type otlpReceiver struct {
	url   string
	mu    sync.Mutex
	spans []receivedSpan
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	rec := &otlpReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" {
			http.NotFound(w, r)
			return
		}
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		raw, err := io.ReadAll(body)
		var req coltracepb.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(raw, &req)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rec.add(&req)
		resp, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(resp)
	}))
	t.Cleanup(srv.Close)
	rec.url = srv.URL
	return rec
}

// newOTLPGRPCReceiver is the receiver over OTLP/gRPC; its url is the
// http://host:port the exporter is pointed at.
func newOTLPGRPCReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rec := &otlpReceiver{url: "http://" + ln.Addr().String()}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, grpcTraceService{rec: rec})
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return rec
}

type grpcTraceService struct {
	coltracepb.UnimplementedTraceServiceServer
	rec *otlpReceiver
}

func (s grpcTraceService) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	s.rec.add(req)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

func (rec *otlpReceiver) add(req *coltracepb.ExportTraceServiceRequest) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.Key == "service.name" {
				service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				attrs := map[string]string{}
				for _, kv := range s.Attributes {
					attrs[kv.Key] = anyValueString(kv.GetValue())
				}
				rec.spans = append(rec.spans, receivedSpan{traceID: hex.EncodeToString(s.TraceId), spanID: hex.EncodeToString(s.SpanId),
					parentID: hex.EncodeToString(s.ParentSpanId), name: s.Name, service: service, kind: s.Kind, attrs: attrs})
			}
		}
	}
}

// anyValueString is an attribute value as text: strings as they are,
// numbers and the rest as protobuf prints them.
func anyValueString(v interface {
	GetStringValue() string
	String() string
}) string {
	if s := v.GetStringValue(); s != "" {
		return s
	}
	return v.String()
}

// trace is what the receiver holds of the trace traceID.
func (rec *otlpReceiver) trace(traceID string) receivedTrace {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var out receivedTrace
	for _, s := range rec.spans {
		if s.traceID == traceID {
			out = append(out, s)
		}
	}
	return out
}

// waitTrace waits until the trace traceID has what has finds in it, and
// returns the trace as received then (the caller reports what is missing).
func (rec *otlpReceiver) waitTrace(traceID string, within time.Duration, has func(receivedTrace) bool) receivedTrace {
	var tr receivedTrace
	testfix.Eventually(within, func() bool {
		tr = rec.trace(traceID)
		return has(tr)
	})
	return tr
}

// receivedTrace is the spans of one trace.
type receivedTrace []receivedSpan

// named are the spans called name.
func (tr receivedTrace) named(name string) []receivedSpan {
	var out []receivedSpan
	for _, s := range tr {
		if s.name == name {
			out = append(out, s)
		}
	}
	return out
}

// under reports whether span s descends, parent by parent within the
// trace, from the span ancestor (which may be the caller's, outside it).
func (tr receivedTrace) under(s receivedSpan, ancestor string) bool {
	byID := map[string]receivedSpan{}
	for _, x := range tr {
		byID[x.spanID] = x
	}
	for range len(tr) + 1 {
		if s.parentID == ancestor {
			return true
		}
		parent, ok := byID[s.parentID]
		if !ok {
			return false
		}
		s = parent
	}
	return false
}

// sqlUnder are the SQL statement spans that descend from ancestor.
func (tr receivedTrace) sqlUnder(ancestor string) []receivedSpan {
	var out []receivedSpan
	for _, s := range tr {
		if s.attrs["db.query.text"] != "" && tr.under(s, ancestor) {
			out = append(out, s)
		}
	}
	return out
}

// String lists the trace's spans for a failure message.
func (tr receivedTrace) String() string {
	var b strings.Builder
	for _, s := range tr {
		b.WriteString("\n  " + s.name + " span=" + s.spanID + " parent=" + s.parentID + " kind=" + s.kind.String())
	}
	return b.String()
}
