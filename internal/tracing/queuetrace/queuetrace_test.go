package queuetrace

import (
	"testing"

	"go.opentelemetry.io/otel/propagation"
)

// TestOffWithoutTracing: without tracing the queue gets no middleware.
func TestOffWithoutTracing(t *testing.T) {
	if Middleware() != nil {
		t.Error("middleware without tracing")
	}
}

// TestWithTraceContext: the trace context joins a job's metadata beside
// what the queue keeps there.
func TestWithTraceContext(t *testing.T) {
	carrier := propagation.MapCarrier{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
	tests := []struct{ metadata, want string }{
		{"", `{"trace_context":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}`},
		{`{"unique_key":"x"}`, `{"trace_context":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},"unique_key":"x"}`},
	}
	for _, tt := range tests {
		got, err := withTraceContext([]byte(tt.metadata), carrier)
		if err != nil || string(got) != tt.want {
			t.Errorf("%q: %s %v, want %s", tt.metadata, got, err, tt.want)
		}
	}
}
