package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"time"
)

// requestInfo is filled in as a request goes through the gateway, for its
// access log line.
type requestInfo struct {
	route     string
	accountID int64
}

type requestInfoKey struct{}

// noteRoute and noteAccount record what the access log reports.
func noteRoute(ctx context.Context, route string) {
	if ri, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
		ri.route = route
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

// maxRequestID bounds an X-Request-Id taken from a client.
const maxRequestID = 128

// AccessLog gives every request an X-Request-Id (the client's when it is
// short printable ASCII, else a new one), echoes it, passes it on to the
// services as x-request-id metadata, and logs one line when the request
// ends: method, route pattern, status, duration, account and request id.
// Neither credentials nor bodies are logged.
func AccessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started := time.Now()
		id := r.Header.Get("X-Request-Id")
		if id == "" || len(id) > maxRequestID || !printableASCII(id) {
			id = newRequestID()
		}
		r.Header.Set("X-Request-Id", id)
		r.Header.Set("Grpc-Metadata-X-Request-Id", id)
		w.Header().Set("X-Request-Id", id)
		info := &requestInfo{route: r.URL.Path}
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, info)))
		attrs := []any{"method", r.Method, "route", info.route, "status", rec.status,
			"duration_ms", float64(time.Since(started).Microseconds()) / 1000, "request_id", id}
		if info.accountID != 0 {
			attrs = append(attrs, "account_id", info.accountID)
		}
		slog.InfoContext(r.Context(), "request", attrs...)
	})
}

func newRequestID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
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
