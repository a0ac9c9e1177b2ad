// Package tracing sets up OpenTelemetry tracing from the standard OTEL_*
// variables and hands the instrumentation to the parts of the service that
// need it: the REST handler, the gRPC server, the database pool, the HTTP
// client of callbacks and the log handler (the job queue's is in queuetrace).
// Without an OTLP
// endpoint tracing is off: nothing is wrapped and no exporter exists, so the
// service pays nothing for it.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
)

// instrumentation names the tracer of the spans this package starts itself.
const instrumentation = "github.com/truckjobs/jobboard/internal/tracing"

// enabled is set once Setup installed a provider; the wrappers below read
// it when the service is built, after Setup.
var enabled atomic.Bool

// Enabled reports whether Setup turned tracing on.
func Enabled() bool { return enabled.Load() }

// Setup turns tracing on when OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set (and neither OTEL_SDK_DISABLED
// nor OTEL_TRACES_EXPORTER=none says otherwise): an OTLP exporter over the
// protocol OTEL_EXPORTER_OTLP_PROTOCOL names, a batching tracer provider and
// the W3C trace context propagator, installed globally. The returned stop
// flushes the spans still buffered and shuts the provider down; it is a
// no-op when tracing is off.
func Setup(ctx context.Context) (stop func(context.Context) error, err error) {
	noop := func(context.Context) error { return nil }
	if !wanted() {
		return noop, nil
	}
	if exp := os.Getenv("OTEL_TRACES_EXPORTER"); exp != "" && exp != "otlp" {
		return noop, fmt.Errorf("OTEL_TRACES_EXPORTER: %q is not supported; use otlp or none", exp)
	}
	sampler, err := samplerOption()
	if err != nil {
		return noop, err
	}
	exporter, err := newExporter(ctx)
	if err != nil {
		return noop, err
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName("jobboard")), // OTEL_SERVICE_NAME overrides it
		resource.WithFromEnv(), resource.WithTelemetrySDK(), resource.WithHost())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return noop, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	// The batch processor reads OTEL_BSP_*; the sampler, unless ours,
	// OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG.
	provider := sdktrace.NewTracerProvider(append(sampler, sdktrace.WithBatcher(exporter), sdktrace.WithResource(res))...)
	otel.SetTracerProvider(provider)
	// Baggage is not taken from requests: it would carry whatever a client
	// wrote into the callbacks sent to other parties.
	otel.SetTextMapPropagator(propagation.TraceContext{})
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		slog.Warn("tracing: spans not exported", "error", err)
	}))
	enabled.Store(true)
	return provider.Shutdown, nil
}

// wanted is whether the environment asks for tracing.
func wanted() bool {
	if disabled, _ := strconv.ParseBool(os.Getenv("OTEL_SDK_DISABLED")); disabled {
		return false
	}
	if os.Getenv("OTEL_TRACES_EXPORTER") == "none" {
		return false
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
}

// newExporter is the OTLP exporter of the protocol the environment names;
// each exporter reads its endpoint, headers, timeout and TLS settings from
// the OTEL_EXPORTER_OTLP_* variables itself.
func newExporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	name, protocol := "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if protocol == "" {
		name, protocol = "OTEL_EXPORTER_OTLP_PROTOCOL", os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch protocol {
	case "", "http/protobuf": // the specification's default
		return otlptracehttp.New(ctx)
	case "grpc":
		return otlptracegrpc.New(ctx)
	default:
		return nil, fmt.Errorf("%s: %q is not supported; use http/protobuf or grpc", name, protocol)
	}
}

// samplerOption is the sampler when OTEL_TRACES_SAMPLER is unset: every
// trace, whatever the sampled flag of an incoming traceparent says (the
// specification's default, parentbased_always_on, would let any client turn
// tracing of its requests off). A set OTEL_TRACES_SAMPLER is checked here
// and then read by the SDK; a parentbased_* sampler follows the flag of the
// caller, which only a trusted proxy should set.
func samplerOption() ([]sdktrace.TracerProviderOption, error) {
	name := os.Getenv("OTEL_TRACES_SAMPLER")
	switch name {
	case "":
		return []sdktrace.TracerProviderOption{sdktrace.WithSampler(sdktrace.AlwaysSample())}, nil
	case "always_on", "always_off", "parentbased_always_on", "parentbased_always_off":
		return nil, nil
	case "traceidratio", "parentbased_traceidratio":
		arg := os.Getenv("OTEL_TRACES_SAMPLER_ARG")
		if arg == "" {
			return nil, nil // the SDK's default ratio, 1
		}
		if r, err := strconv.ParseFloat(strings.TrimSpace(arg), 64); err != nil || r < 0 || r > 1 {
			return nil, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG: %q is not a ratio between 0 and 1", arg)
		}
		return nil, nil
	default:
		return nil, fmt.Errorf("OTEL_TRACES_SAMPLER: %q is not supported; use always_on, always_off, traceidratio or their parentbased_ forms", name)
	}
}
