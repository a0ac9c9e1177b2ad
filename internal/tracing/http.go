package tracing

import (
	"net/http"
	"strconv"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// probes are the paths load balancers and orchestrators poll every few
// seconds; a trace of each would bury the requests worth reading.
var probes = map[string]bool{"/healthz": true, "/readyz": true}

// HTTPHandler gives each request but the probes a server span, continuing
// the trace of a W3C traceparent header. The span is named by the method
// alone until the handler inside names it by its route (NameHTTPSpan): a raw
// path holds ids. Without tracing it returns next itself.
func HTTPHandler(next http.Handler) http.Handler {
	if !Enabled() {
		return next
	}
	return otelhttp.NewHandler(next, "http",
		otelhttp.WithFilter(func(r *http.Request) bool { return !probes[r.URL.Path] }),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method }))
}

// NameHTTPSpan names a request's server span by its route pattern, as
// "GET /api/v2.0/jobs.json/{id}", and records the route; a request no
// route took (routed false) keeps the method alone. A span not being
// recorded (tracing off, or left out by the sampler) is left as it is.
func NameHTTPSpan(span trace.Span, method, route string, routed bool) {
	if !span.IsRecording() || !routed {
		return
	}
	span.SetName(method + " " + route)
	span.SetAttributes(semconv.HTTPRoute(route))
}

// Transport gives each request sent through next a client span and sends
// the trace on in a traceparent header. The span records the method, the
// scheme, host and port and the status, never the path or query: a
// receiver's URL often holds its token there. Without tracing it returns
// next itself.
func Transport(next http.RoundTripper) http.RoundTripper {
	if !Enabled() {
		return next
	}
	return tracedTransport{next: next}
}

type tracedTransport struct{ next http.RoundTripper }

func (t tracedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	attrs := []attribute.KeyValue{semconv.HTTPRequestMethodKey.String(req.Method), semconv.URLScheme(req.URL.Scheme),
		semconv.ServerAddress(req.URL.Hostname())}
	if port, err := strconv.Atoi(req.URL.Port()); err == nil {
		attrs = append(attrs, semconv.ServerPort(port))
	}
	ctx, span := otel.Tracer(instrumentation).Start(req.Context(), req.Method,
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	defer span.End()
	// A RoundTripper must not change the request it was given.
	req = req.Clone(ctx)
	otel.GetTextMapPropagator().Inject(ctx, propagation.HeaderCarrier(req.Header))
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		// The error is not recorded: it quotes the whole URL.
		span.SetStatus(codes.Error, "request failed")
		span.SetAttributes(semconv.ErrorTypeOther)
		return nil, err
	}
	span.SetAttributes(semconv.HTTPResponseStatusCode(resp.StatusCode))
	if resp.StatusCode >= 400 {
		span.SetStatus(codes.Error, "")
		span.SetAttributes(semconv.ErrorTypeKey.String(strconv.Itoa(resp.StatusCode)))
	}
	return resp, nil
}
