package gateway

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/truckjobs/jobboard/internal/calllog"
	"github.com/truckjobs/jobboard/internal/tracing"
)

// requestInfo is what the REST access log alone reports: the route pattern
// the request took. The rest of the line is the call's (internal/calllog).
type requestInfo struct {
	route string
	// routed is true once the gateway matched a route pattern.
	routed bool
}

type requestInfoKey struct{}

// noteRoute records the route pattern the access log and metrics report.
func noteRoute(ctx context.Context, route string) {
	if ri, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
		ri.route, ri.routed = route, true
	}
}

// Observer is told about every request when it ends, for the request
// metrics. route is always from a fixed set: a gateway route pattern such as
// /api/v2.0/jobs.json/{id}, the pattern of a handler on the serving mux
// (/healthz, /readyz, ...), one of fixedRoutes, or "unmatched"; never a
// raw path, which a client could vary without end.
type Observer func(route, method string, status int, elapsed time.Duration)

// fixedRoutes are the paths outside the API that are labelled as
// themselves even when served behind the gateway's catch-all. /metrics is
// on a listener of its own, and answered 404 here; it keeps its label so
// scrapers pointed at the API port show up as such.
var fixedRoutes = map[string]bool{
	"/metrics": true, "/healthz": true, "/readyz": true, "/docs": true, "/openapi.json": true,
}

// probes are the health checks whose passing answers leave no access log
// line (calllog's EndUnlogged); the metrics still count them.
var probes = map[string]bool{"/healthz": true, "/readyz": true}

// unmatched labels a request no route took.
const unmatched = "unmatched"

// AccessLog gives every request an X-Request-Id (the client's when it is
// short printable ASCII, else a new one), echoes it, passes it on to the
// services as x-request-id metadata, and logs one calllog line when the
// request ends: method, route pattern and status, then what calllog adds.
// Each observer is told about the request too, with the same route pattern.
func AccessLog(next http.Handler, observers ...Observer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		call := calllog.Start(r.Header.Get("X-Request-Id"))
		// One value slice for the three headers: each only reads it.
		id := []string{call.RequestID}
		r.Header["X-Request-Id"], r.Header["Grpc-Metadata-X-Request-Id"] = id, id
		w.Header()["X-Request-Id"] = id
		info := &requestInfo{route: r.URL.Path}
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		ctx := calllog.NewContext(context.WithValue(r.Context(), requestInfoKey{}, info), call)
		inner := r.WithContext(ctx)
		next.ServeHTTP(rec, inner)
		route := routeLabel(info, inner)
		end := call.End
		if probes[route] && rec.status == http.StatusOK {
			end = func(context.Context, string, ...slog.Attr) time.Duration { return call.EndUnlogged() }
		}
		if refused := rec.status == http.StatusUnauthorized || rec.status == http.StatusTooManyRequests; refused {
			// The reason is the status and the bounded route, never the path.
			end = func(ctx context.Context, msg string, what ...slog.Attr) time.Duration {
				return call.EndRefused(ctx, msg, strconv.Itoa(rec.status)+" "+r.Method+" "+route, what...)
			}
		}
		elapsed := end(r.Context(), calllog.REST, slog.String("method", r.Method),
			slog.String("route", info.route), slog.Int("status", rec.status))
		tracing.NameHTTPSpan(trace.SpanFromContext(r.Context()), r.Method, route, route != unmatched)
		for _, observe := range observers {
			observe(route, r.Method, rec.status, elapsed)
		}
	})
}

// routeLabel is the bounded route of a served request. An http.ServeMux
// between AccessLog and the gateway records the pattern it matched in the
// request it was given; its catch-all "/" says nothing, as the gateway
// handles (or refuses) everything under it.
func routeLabel(info *requestInfo, r *http.Request) string {
	if info.routed {
		return info.route
	}
	if p := r.Pattern; p != "" && p != "/" {
		if _, path, ok := strings.Cut(p, " "); ok {
			p = path // "GET /healthz" labels as /healthz; the method has a label of its own
		}
		if strings.HasPrefix(p, "/") {
			return p
		}
	}
	if fixedRoutes[r.URL.Path] {
		return r.URL.Path
	}
	return unmatched
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	s.wrote = true
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
