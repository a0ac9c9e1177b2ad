package tracing

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// otelVariables are the settings Setup reads; each test starts with none.
var otelVariables = []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SDK_DISABLED",
	"OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
	"OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG"}

func setEnv(t *testing.T, env map[string]string) {
	for _, name := range otelVariables {
		t.Setenv(name, env[name])
	}
}

// TestOff: without an endpoint, or with tracing switched off, Setup sets up
// no exporter or provider, and every wrapper hands back what it was given.
func TestOff(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
	}{
		{"no endpoint", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_TRACES_SAMPLER": "always_on"}},
		{"SDK disabled", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_SDK_DISABLED": "true"}},
		{"exporter none", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:1", "OTEL_TRACES_EXPORTER": "none"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			setEnv(t, tt.env)
			stop, err := Setup(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer stop(context.Background())
			if Enabled() {
				t.Error("tracing is on")
			}
			if _, sdk := otel.GetTracerProvider().(*sdktrace.TracerProvider); sdk {
				t.Error("an SDK tracer provider is installed")
			}
			h := http.NewServeMux()
			rt := http.DefaultTransport
			if HTTPHandler(h) != http.Handler(h) || Transport(rt) != rt || GRPCServerOptions() != nil {
				t.Error("a wrapper adds instrumentation")
			}
		})
	}
}

// TestRefused: a setting Setup cannot honour stops the start, naming it,
// rather than leaving tracing silently off or different.
func TestRefused(t *testing.T) {
	endpoint := "http://127.0.0.1:1"
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, "OTEL_EXPORTER_OTLP_PROTOCOL"},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "thrift"}, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"},
		{map[string]string{"OTEL_TRACES_SAMPLER": "jaeger_remote"}, "OTEL_TRACES_SAMPLER"},
		{map[string]string{"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "2"}, "OTEL_TRACES_SAMPLER_ARG"},
		{map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, "OTEL_TRACES_EXPORTER"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			tt.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoint
			setEnv(t, tt.env)
			_, err := Setup(context.Background())
			if err == nil || !strings.Contains(err.Error(), tt.want) || Enabled() {
				t.Errorf("Setup: %v, want an error naming %s", err, tt.want)
			}
		})
	}
}

// TestLogHandler: a line logged in a span names its trace and span; one
// logged outside any is unchanged.
func TestLogHandler(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(LogHandler(slog.NewJSONHandler(&buf, nil))).With("component", "test")
	traceID, _ := trace.TraceIDFromHex("0af7651916cd43dd8448eb211c80319c")
	spanID, _ := trace.SpanIDFromHex("b7ad6b7169203331")
	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: spanID}))
	log.InfoContext(ctx, "in a span")
	log.InfoContext(context.Background(), "outside")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"component":"test","trace_id":"0af7651916cd43dd8448eb211c80319c","span_id":"b7ad6b7169203331"`) ||
		strings.Contains(lines[1], "trace_id") {
		t.Errorf("lines:\n%s", buf.String())
	}
}

// TestStatementSpanName: statements are named by their first keyword,
// after leading comments.
func TestStatementSpanName(t *testing.T) {
	tests := []struct{ query, want string }{
		{"SELECT 1", "SELECT"},
		{"\n  select id FROM jobs", "SELECT"},
		{"-- name: JobGetAvailable :many\nWITH locked AS (SELECT 1) UPDATE river_job", "WITH"},
		{"", "sql.conn.begin_tx"},
	}
	for _, tt := range tests {
		if got := statementSpanName(context.Background(), "sql.conn.begin_tx", tt.query); got != tt.want {
			t.Errorf("%q: %q, want %q", tt.query, got, tt.want)
		}
	}
}
