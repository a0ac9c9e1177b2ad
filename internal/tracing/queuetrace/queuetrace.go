// Package queuetrace carries a trace across River's job queue. It is apart
// from package tracing so that what imports tracing (the REST gateway)
// does not link the queue.
package queuetrace

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/truckjobs/jobboard/internal/tracing"
)

// metadataKey holds, in a queue job's metadata, the W3C trace context of
// the code that queued it.
const metadataKey = "trace_context"

// instrumentation names the tracer of the spans this package starts.
const instrumentation = "github.com/truckjobs/jobboard/internal/tracing/queuetrace"

// Middleware carries a trace across the job queue: a job queued inside
// a trace records the trace context in its metadata, and working it is a
// span of that trace, so an import is traced from the request that posted
// it through its processing to its callback, whichever replica works it and
// however late a retry runs. Without tracing there is none.
func Middleware() []rivertype.Middleware {
	if !tracing.Enabled() {
		return nil
	}
	return []rivertype.Middleware{&queueMiddleware{}}
}

type queueMiddleware struct{ river.MiddlewareDefaults }

// InsertMany records the trace context of ctx in each job queued inside a
// trace.
func (queueMiddleware) InsertMany(ctx context.Context, many []*rivertype.JobInsertParams,
	doInner func(context.Context) ([]*rivertype.JobInsertResult, error),
) ([]*rivertype.JobInsertResult, error) {
	carrier := propagation.MapCarrier{}
	otel.GetTextMapPropagator().Inject(ctx, carrier)
	if len(carrier) == 0 {
		return doInner(ctx)
	}
	for _, p := range many {
		md, err := withTraceContext(p.Metadata, carrier)
		if err != nil {
			return nil, err
		}
		p.Metadata = md
	}
	return doInner(ctx)
}

// withTraceContext is a job's metadata with carrier added under metadataKey.
func withTraceContext(metadata []byte, carrier propagation.MapCarrier) ([]byte, error) {
	fields := map[string]json.RawMessage{}
	if len(metadata) > 0 {
		if err := json.Unmarshal(metadata, &fields); err != nil {
			return nil, err
		}
	}
	tc, err := json.Marshal(carrier)
	if err != nil {
		return nil, err
	}
	fields[metadataKey] = tc
	return json.Marshal(fields)
}

// Work runs a job queued inside a trace in a span of that trace; a job
// queued outside any (the periodic sweep) runs without one.
func (queueMiddleware) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	var fields struct {
		TraceContext propagation.MapCarrier `json:"trace_context"`
	}
	if json.Unmarshal(job.Metadata, &fields) != nil || len(fields.TraceContext) == 0 {
		return doInner(ctx)
	}
	parent := otel.GetTextMapPropagator().Extract(ctx, fields.TraceContext)
	if !trace.SpanContextFromContext(parent).IsValid() {
		return doInner(ctx)
	}
	ctx, span := otel.Tracer(instrumentation).Start(parent, "process "+job.Kind,
		trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(
			semconv.MessagingSystemKey.String("river"),
			semconv.MessagingOperationTypeProcess,
			semconv.MessagingDestinationName(job.Queue),
			semconv.MessagingMessageID(strconv.FormatInt(job.ID, 10)),
			attribute.Int("river.job.attempt", job.Attempt),
		))
	defer span.End()
	err := doInner(ctx)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, "job failed")
	}
	return err
}
