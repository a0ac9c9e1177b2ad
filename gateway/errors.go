package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/truckjobs/jobboard/gateway/wire"
	"github.com/truckjobs/jobboard/internal/boundary"
)

// apiError is a failed request as the client sees it.
type apiError struct {
	httpStatus int
	status     string
	message    string
}

// codeErrors maps gRPC codes to HTTP statuses and the names of docs/api.md, Errors.
var codeErrors = map[codes.Code]apiError{
	codes.InvalidArgument:    {http.StatusBadRequest, "INVALID_ARGUMENT", ""},
	codes.OutOfRange:         {http.StatusBadRequest, "INVALID_ARGUMENT", ""},
	codes.Unauthenticated:    {http.StatusUnauthorized, "UNAUTHENTICATED", ""},
	codes.PermissionDenied:   {http.StatusForbidden, "PERMISSION_DENIED", ""},
	codes.NotFound:           {http.StatusNotFound, "NOT_FOUND", ""},
	codes.AlreadyExists:      {http.StatusConflict, "ALREADY_EXISTS", ""},
	codes.FailedPrecondition: {http.StatusUnprocessableEntity, "FAILED_PRECONDITION", ""},
	codes.ResourceExhausted:  {http.StatusTooManyRequests, "RESOURCE_EXHAUSTED", ""},
	codes.Unavailable:        {http.StatusServiceUnavailable, "UNAVAILABLE", ""},
	codes.Canceled:           {499, "CANCELLED", ""},
	codes.DeadlineExceeded:   {http.StatusGatewayTimeout, "DEADLINE_EXCEEDED", ""},
}

var (
	errInternal         = apiError{http.StatusInternalServerError, "INTERNAL", boundary.InternalMessage}
	errNotFoundPath     = apiError{http.StatusNotFound, "NOT_FOUND", "no such resource"}
	errMethodNotAllowed = apiError{http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "method not allowed on this resource"}
)

// fromStatus converts a service error. An error without a gRPC code goes
// through the services' error boundary first, as it would over gRPC. Codes
// without a client meaning (Internal, Unknown, ...) become a detail-free 500
// and a log line (the boundary's own Internal is logged already).
func (g *gateway) fromStatus(ctx context.Context, err error) apiError {
	var httpErr *runtime.HTTPStatusError
	if errors.As(err, &httpErr) {
		if httpErr.HTTPStatus == http.StatusMethodNotAllowed {
			return errMethodNotAllowed
		}
		err = httpErr.Err
	}
	st := status.Convert(g.boundary.Status(ctx, err))
	e, ok := codeErrors[st.Code()]
	if !ok {
		if st.Code() != codes.Internal || st.Message() != boundary.InternalMessage {
			slog.ErrorContext(ctx, "request failed", "code", st.Code().String(), "error", st.Message())
		}
		return errInternal
	}
	e.message = st.Message()
	return e
}

// writeError writes e in the request's format.
func writeError(w http.ResponseWriter, r *http.Request, e apiError) {
	f := formatOf(r.URL.Path)
	out := wire.New(f, 256)
	// JSON wraps the error in an object; in XML <error> is the root.
	if f == wire.JSON {
		out.BeginObject("")
	}
	out.BeginObject("error")
	out.Int("code", int64(e.httpStatus))
	out.String("status", e.status)
	out.String("message", e.message)
	out.EndObject()
	if f == wire.JSON {
		out.EndObject()
	}
	h := w.Header()
	h.Set("Content-Type", marshaler{f}.ContentType(nil))
	h.Set("X-Content-Type-Options", "nosniff")
	if e.httpStatus == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", `Basic realm="jobboard"`)
	}
	w.WriteHeader(e.httpStatus)
	_, _ = w.Write(out.Bytes())
}

// handleError is the gateway's error handler for failed calls.
func (g *gateway) handleError(ctx context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
	// A body over the limit, or not UTF-8, is refused as such, as it was
	// when bodies were read whole before decoding: the decoding error its
	// start may have caused first is not the answer.
	if body, ok := r.Body.(*requestBody); ok {
		if refused := body.refusal(); refused != nil {
			writeError(w, r, *refused)
			return
		}
		if body.placeErr != nil {
			g.writeStatusError(ctx, w, r, body.placeErr)
			return
		}
	}
	g.writeStatusError(ctx, w, r, err)
}

// writeStatusError writes a service error, with a Retry-After header when
// the service said how long to wait (a RetryInfo detail: rate limiting).
func (g *gateway) writeStatusError(ctx context.Context, w http.ResponseWriter, r *http.Request, err error) {
	for _, d := range status.Convert(err).Details() {
		if info, ok := d.(*errdetails.RetryInfo); ok && info.GetRetryDelay() != nil {
			secs := max(1, int(math.Ceil(info.GetRetryDelay().AsDuration().Seconds())))
			w.Header().Set("Retry-After", strconv.Itoa(secs))
		}
	}
	writeError(w, r, g.fromStatus(ctx, err))
}

// handleRoutingError answers unknown paths with 404 and known paths with the
// wrong method with 405 (grpc-gateway's default would say 501).
func handleRoutingError(ctx context.Context, mux *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, httpStatus int) {
	if isProbe(ctx) {
		w.WriteHeader(httpStatus)
		return
	}
	switch httpStatus {
	case http.StatusMethodNotAllowed:
		allowed := strings.Join(allowedMethods(mux, r), ", ")
		w.Header().Set("Allow", allowed)
		writeError(w, r, apiError{http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED",
			fmt.Sprintf("method %s is not allowed on this resource; it takes %s", r.Method, allowed)})
	case http.StatusNotFound:
		writeError(w, r, errNotFoundPath)
	default:
		writeError(w, r, apiError{http.StatusBadRequest, "INVALID_ARGUMENT", http.StatusText(httpStatus)})
	}
}

// formatOf picks the representation from the path: XML when the resource
// segment (the one after /api/v2.0/, or any segment of other paths) ends in
// .xml, JSON otherwise.
func formatOf(path string) wire.Format {
	if rest, ok := strings.CutPrefix(path, apiPrefix); ok {
		seg, _, _ := strings.Cut(rest, "/")
		if strings.HasSuffix(seg, ".xml") {
			return wire.XML
		}
		return wire.JSON
	}
	for _, seg := range strings.Split(path, "/") {
		if strings.HasSuffix(seg, ".xml") {
			return wire.XML
		}
	}
	return wire.JSON
}
