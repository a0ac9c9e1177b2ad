package tracing

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strings"

	"github.com/XSAM/otelsql"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// OpenDB opens a pool on c as sql.OpenDB does. With tracing, each statement run
// inside a recorded trace is a span holding its text (the statements take their
// values as parameters, and those are not recorded); statements outside any
// trace, such as the job queue polling for work every fraction of a second,
// make none.
func OpenDB(c driver.Connector) *sql.DB {
	if !Enabled() {
		return sql.OpenDB(c)
	}
	return otelsql.OpenDB(c,
		otelsql.WithAttributes(semconv.DBSystemNamePostgreSQL),
		otelsql.WithSpanNameFormatter(statementSpanName),
		otelsql.WithSpanOptions(otelsql.SpanOptions{
			OmitConnResetSession: true,
			OmitRows:             true,
			OmitConnectorConnect: true,
			// Only under a span being recorded: a trace the sampler left
			// out costs no statement spans either.
			SpanFilter: func(ctx context.Context, _ otelsql.Method, _ string, _ []driver.NamedValue) bool {
				return trace.SpanFromContext(ctx).IsRecording()
			},
		}))
}

// statementSpanName names a statement's span by its first keyword (SELECT,
// INSERT, WITH...), after the comment lines the job queue's statements
// begin with, and other calls (begin, commit) by otelsql's method name.
func statementSpanName(_ context.Context, method otelsql.Method, query string) string {
	query = strings.TrimSpace(query)
	for strings.HasPrefix(query, "--") {
		_, rest, _ := strings.Cut(query, "\n")
		query = strings.TrimSpace(rest)
	}
	if query == "" {
		return string(method)
	}
	if end := strings.IndexAny(query, " \n\t("); end > 0 {
		query = query[:end]
	}
	return strings.ToUpper(query)
}
