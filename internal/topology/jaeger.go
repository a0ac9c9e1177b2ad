package topology

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"time"
)

const jaegerDir = "jaeger"

// The topology's Jaeger: the replicas export spans to JaegerOTLPPort
// (OTLP over HTTP), and its query API and UI answer on JaegerQueryPort.
const (
	JaegerOTLPPort  = 19318
	JaegerQueryPort = 19686
	// jaegerQueryGRPCPort is its query API over gRPC, which nothing here
	// uses; set so it stays off Jaeger's default port.
	jaegerQueryGRPCPort = 19685
	// jaegerHealthPort answers 200 once every part of Jaeger has started.
	jaegerHealthPort = 19133
)

// JaegerURL is the topology's Jaeger: its UI and query API (/api/traces).
func JaegerURL() string { return fmt.Sprintf("http://%s:%d", Host, JaegerQueryPort) }

// JaegerOTLPURL is where the replicas send their spans
// (OTEL_EXPORTER_OTLP_ENDPOINT).
func JaegerOTLPURL() string { return fmt.Sprintf("http://%s:%d", Host, JaegerOTLPPort) }

// jaegerConfig is Jaeger's all-in-one, kept to what the topology needs:
// OTLP over HTTP in, the traces kept in memory (they go with the process,
// as the topology's data does with topology-down), the query API out, and
// every listener on 127.0.0.1 away from Jaeger's default ports.
func jaegerConfig() string {
	return fmt.Sprintf(`# Jaeger for the topology (internal/topology); docs/operations.md.
service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    # Jaeger's own metrics and traces are off: nothing here reads them,
    # and its traces would go to the default OTLP port.
    metrics:
      level: none
    traces:
      level: none
extensions:
  jaeger_storage:
    backends:
      memory_store:
        memory:
          # A trace of an import is some tens of KB: at most a few hundred MB.
          max_traces: 20000
  jaeger_query:
    storage:
      traces: memory_store
    http:
      endpoint: %[1]q
    grpc:
      endpoint: %[2]q
  healthcheckv2:
    use_v2: true
    http:
      endpoint: %[3]q
receivers:
  otlp:
    protocols:
      http:
        endpoint: %[4]q
processors:
  batch:
exporters:
  jaeger_storage_exporter:
    trace_storage: memory_store
`, addr(JaegerQueryPort), addr(jaegerQueryGRPCPort), addr(jaegerHealthPort), addr(JaegerOTLPPort))
}

// StartJaeger writes Jaeger's configuration and starts it under its
// supervisor. The binary is the pinned one make jaeger builds into .bin.
func (t *Topology) StartJaeger() error {
	bin, err := exec.LookPath("jaeger")
	if err != nil {
		return fmt.Errorf("no jaeger binary on PATH (make jaeger builds it into .bin): %w", err)
	}
	dir := t.path(jaegerDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	config := t.path(jaegerDir, "jaeger.yaml")
	if err := os.WriteFile(config, []byte(jaegerConfig()), 0o644); err != nil {
		return err
	}
	if err := startSupervised(t.jaeger(bin)); err != nil {
		return err
	}
	if err := waitListening(JaegerOTLPPort, 30*time.Second); err != nil {
		return fmt.Errorf("jaeger: %w (see %s)", err, t.path(jaegerDir, "jaeger.log"))
	}
	return waitListening(JaegerQueryPort, 10*time.Second)
}

// StopJaeger stops Jaeger and its supervisor; the traces it kept in
// memory go with it.
func (t *Topology) StopJaeger() error {
	return stopSupervised(t.jaeger(""), syscall.SIGTERM)
}

// jaeger is Jaeger (the binary bin) under its supervisor (supervise.go),
// with its log in the topology's folder. A restarted Jaeger has lost the
// traces it kept in memory.
func (t *Topology) jaeger(bin string) supervised {
	dir := t.path(jaegerDir)
	return supervised{name: "jaeger", dir: dir, log: t.path(jaegerDir, "jaeger.log"),
		argv: []string{bin, "--config", t.path(jaegerDir, "jaeger.yaml")}}
}

// TraceSpan is one span of a trace as Jaeger's query API gives it.
type TraceSpan struct {
	TraceID       string `json:"traceID"`
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	References    []struct {
		RefType string `json:"refType"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
	ProcessID string     `json:"processID"`
	Tags      []TraceTag `json:"tags"`
	StartTime int64      `json:"startTime"` // microseconds since 1970
	Duration  int64      `json:"duration"`  // microseconds
}

// TraceTag is one attribute of a span or process.
type TraceTag struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

// Trace is one trace as Jaeger's query API gives it: its spans, and the
// processes (a replica each, by service.instance.id) that sent them.
type Trace struct {
	Spans     []TraceSpan `json:"spans"`
	Processes map[string]struct {
		ServiceName string     `json:"serviceName"`
		Tags        []TraceTag `json:"tags"`
	} `json:"processes"`
}

// FindTrace asks the topology's Jaeger for trace id (32 hex digits). A
// trace Jaeger has not heard of yet is no error: its spans are empty.
func FindTrace(ctx context.Context, id string) (Trace, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, JaegerURL()+"/api/traces/"+id, nil)
	if err != nil {
		return Trace{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return Trace{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return Trace{}, nil
	}
	var answer struct {
		Data   []Trace `json:"data"`
		Errors []struct {
			Msg string `json:"msg"`
		} `json:"errors"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		return Trace{}, fmt.Errorf("jaeger trace %s: %s: %w", id, resp.Status, err)
	}
	if resp.StatusCode != http.StatusOK || len(answer.Errors) > 0 {
		return Trace{}, fmt.Errorf("jaeger trace %s: %s %v", id, resp.Status, answer.Errors)
	}
	if len(answer.Data) == 0 {
		return Trace{}, nil
	}
	return answer.Data[0], nil
}

// Tree draws trace tr as the topology's trace command prints it: each
// span under its parent, with its duration, the replica that sent it, and
// for a SQL statement its first line.
func (tr Trace) Tree() []string {
	children := map[string][]TraceSpan{}
	inTrace := map[string]bool{}
	for _, s := range tr.Spans {
		inTrace[s.SpanID] = true
	}
	var roots []TraceSpan
	for _, s := range tr.Spans {
		if p := s.Parent(); inTrace[p] {
			children[p] = append(children[p], s)
		} else {
			roots = append(roots, s)
		}
	}
	var lines []string
	var draw func(s TraceSpan, depth int)
	draw = func(s TraceSpan, depth int) {
		line := fmt.Sprintf("%9.2f ms  %-22s %s%s", float64(s.Duration)/1000, tr.Replica(s), strings.Repeat("  ", depth), s.OperationName)
		if q := s.Tag("db.query.text"); q != "" {
			line += ": " + strings.Join(strings.Fields(q), " ")
		}
		lines = append(lines, truncate(line, 160))
		kids := children[s.SpanID]
		sort.Slice(kids, func(i, j int) bool { return kids[i].StartTime < kids[j].StartTime })
		for _, k := range kids {
			draw(k, depth+1)
		}
	}
	sort.Slice(roots, func(i, j int) bool { return roots[i].StartTime < roots[j].StartTime })
	for _, r := range roots {
		draw(r, 0)
	}
	return lines
}

// Parent is the span s is a child of; empty for a root.
func (s TraceSpan) Parent() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" {
			return r.SpanID
		}
	}
	return ""
}

// Tag is the value of s's attribute key as text; empty when it has none.
func (s TraceSpan) Tag(key string) string {
	for _, t := range s.Tags {
		if t.Key == key {
			return fmt.Sprint(t.Value)
		}
	}
	return ""
}

// Replica is the replica that sent span s: its process's
// service.instance.id.
func (tr Trace) Replica(s TraceSpan) string {
	for _, t := range tr.Processes[s.ProcessID].Tags {
		if t.Key == "service.instance.id" {
			return fmt.Sprint(t.Value)
		}
	}
	return tr.Processes[s.ProcessID].ServiceName
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
