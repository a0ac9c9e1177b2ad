package gateway

import (
	"context"
	"net/http"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
)

// probeKey marks a request the gateway replays to itself to learn which
// methods a path has: the prepare middleware answers it at once.
type probeKey struct{}

func isProbe(ctx context.Context) bool { return ctx.Value(probeKey{}) != nil }

// probedMethods are the methods a path may be routed for.
var probedMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// allowedMethods lists the methods the mux routes for r's path. It asks the
// mux itself, so the answer follows http.yaml and every handler added
// beside it: each method is replayed as a probe, which the prepare
// middleware answers with 204 before authenticating or reading a body, and
// an unrouted method answers with its routing error.
func allowedMethods(mux *runtime.ServeMux, r *http.Request) []string {
	var allowed []string
	for _, m := range probedMethods {
		probe := r.Clone(context.WithValue(r.Context(), probeKey{}, true))
		probe.Method = m
		probe.Body = http.NoBody
		probe.ContentLength = 0
		probe.Header.Del("X-HTTP-Method-Override")
		rec := &statusOnly{header: http.Header{}}
		mux.ServeHTTP(rec, probe)
		if rec.status == http.StatusNoContent {
			allowed = append(allowed, m)
		}
	}
	return allowed
}

// statusOnly is a ResponseWriter that keeps the status and drops the body.
type statusOnly struct {
	header http.Header
	status int
}

func (s *statusOnly) Header() http.Header { return s.header }

func (s *statusOnly) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return len(b), nil
}

func (s *statusOnly) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
}
