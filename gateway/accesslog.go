package gateway

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/truckjobs/jobboard/internal/requestid"
)

// requestInfo is filled in as a request goes through the gateway, for its
// access log line.
type requestInfo struct {
	route     string
	accountID int64
	// routed is true once the gateway matched a route pattern.
	routed bool
	// ignored names the query parameters the route ignored (ignoredParams).
	ignored string
}

type requestInfoKey struct{}

// noteRoute and noteAccount record what the access log reports.
func noteRoute(ctx context.Context, route string) {
	if ri, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
		ri.route, ri.routed = route, true
	}
}

func noteIgnored(ctx context.Context, names string) {
	if ri, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
		ri.ignored = names
	}
}

func noteAccount(ctx context.Context, id int64) {
	if ri, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
		ri.accountID = id
	}
}

// AccountFromContext reports the authenticated account of a request, set
// by the service's authenticator through the gateway.
type AccountFromContext func(ctx context.Context) (int64, bool)

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

// unmatched labels a request no route took.
const unmatched = "unmatched"

// AccessLog gives every request an X-Request-Id (the client's when it is
// short printable ASCII, else a new one), echoes it, passes it on to the
// services as x-request-id metadata, and logs one line when the request
// ends: method, route pattern, status, duration, account, request id and
// the query parameters the route ignored.
// Neither credentials nor bodies are logged. Each observer is told about
// the request too, with the same route pattern.
func AccessLog(next http.Handler, observers ...Observer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started := time.Now()
		id := requestid.FromClient(r.Header.Get("X-Request-Id"))
		r.Header.Set("X-Request-Id", id)
		r.Header.Set("Grpc-Metadata-X-Request-Id", id)
		w.Header().Set("X-Request-Id", id)
		info := &requestInfo{route: r.URL.Path}
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		inner := r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, info))
		next.ServeHTTP(rec, inner)
		elapsed := time.Since(started)
		attrs := []any{"method", r.Method, "route", info.route, "status", rec.status,
			"duration_ms", float64(elapsed.Microseconds()) / 1000, "request_id", id}
		if info.accountID != 0 {
			attrs = append(attrs, "account_id", info.accountID)
		}
		if info.ignored != "" {
			attrs = append(attrs, "ignored_parameters", info.ignored)
		}
		slog.InfoContext(r.Context(), "request", attrs...)
		if len(observers) > 0 {
			route := routeLabel(info, inner)
			for _, observe := range observers {
				observe(route, r.Method, rec.status, elapsed)
			}
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
