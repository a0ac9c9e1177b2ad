// Package gateway serves the REST API: grpc-gateway routes the .json and .xml
// paths to the gRPC service implementations in-process, and this package owns
// everything about the wire: formats, request bodies, credentials, errors.
package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/proto"

	"github.com/truckjobs/jobboard/gateway/wire"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/internal/authheader"
	"github.com/truckjobs/jobboard/internal/boundary"
	"github.com/truckjobs/jobboard/internal/calllog"
	"github.com/truckjobs/jobboard/internal/callmeta"
	"github.com/truckjobs/jobboard/internal/forwarded"
)

const apiPrefix = "/api/v2.0/"

// JobService is the jobs service the gateway routes to: the gRPC service's
// methods, and the pages of the whole jobs list, which the REST list
// streams (gateway/jobs_list.go).
type JobService interface {
	restv2.JobServiceServer
	// EachOfWholeListPage reads a page of the account's whole list after
	// the one pageToken ends ("": the first), of a size the service
	// chooses, handing each job to each as it is read, and returns the
	// next page's token ("" after the last page).
	EachOfWholeListPage(ctx context.Context, pageToken string, each func(*restv2.Job) error) (string, error)
}

// Config is what the gateway serves.
type Config struct {
	// Jobs and Drivers implement the services; the gateway calls them in-process.
	Jobs    JobService
	Drivers restv2.DriverServiceServer
	Imports restv2.JobImportServiceServer
	// Webhooks and Events are the lead events' services (JSON only).
	Webhooks restv2.WebhookServiceServer
	Events   restv2.EventServiceServer
	// Authenticate resolves an API key to a context carrying its account,
	// or fails with a gRPC status (Unauthenticated for a bad key,
	// ResourceExhausted past a rate limit). client is the address the
	// request came from, which failed attempts are limited by. It notes
	// the account on the request's access log line (calllog.NoteAccount).
	Authenticate func(ctx context.Context, apiKey, client string) (context.Context, error)
	// Boundary maps the errors the services return without a gRPC code,
	// as the gRPC server's interceptor does (server/call.Boundary); the
	// zero value maps none to Unavailable.
	Boundary boundary.Boundary
	// TrustedProxies are the peers whose X-Forwarded-Host and
	// X-Forwarded-Proto say what host and scheme a client called; from
	// anybody else those headers are ignored.
	TrustedProxies forwarded.Proxies
	// Admit, when set, takes a place of the server's admission control for
	// an authenticated request once its body has begun to arrive (ctx
	// carries its account), or fails with a gRPC status (Unavailable with a RetryInfo:
	// 503 and Retry-After). The request gives the place back before its
	// answer's first byte (gateway/admit.go).
	Admit func(ctx context.Context) (release func(), err error)
	// Resume takes a place again, waiting as long as ctx lasts, for a
	// request that gave its place back while it waited on its client (for
	// more of its body, or to read a part of the streamed jobs list) and
	// has more work to do; nil keeps the place throughout.
	Resume func(ctx context.Context) (release func(), err error)
}

// New returns the REST handler.
func New(ctx context.Context, cfg Config) (http.Handler, error) {
	g := &gateway{authenticate: cfg.Authenticate, proxies: cfg.TrustedProxies, boundary: cfg.Boundary, admit: cfg.Admit, resume: cfg.Resume}
	mux := runtime.NewServeMux(
		runtime.WithMarshalerOption(mimeJSON, marshaler{wire.JSON}),
		runtime.WithMarshalerOption(mimeXML, marshaler{wire.XML}),
		runtime.WithMarshalerOption(runtime.MIMEWildcard, marshaler{wire.JSON}),
		runtime.WithErrorHandler(g.handleError),
		runtime.WithRoutingErrorHandler(handleRoutingError),
		// Nothing from gRPC metadata becomes a response header.
		runtime.WithOutgoingHeaderMatcher(func(string) (string, bool) { return "", false }),
		runtime.WithDisablePathLengthFallback(),
		runtime.WithMiddlewares(g.prepare),
		runtime.WithForwardResponseOption(answerAsRoute),
		// Idempotency-Key reaches the service as metadata, as gRPC callers
		// send it, and so do the Grpc-Metadata- headers (the request id, the
		// scheme prepare decided). The standard HTTP headers grpc-gateway
		// would pass on as grpcgateway-* no service reads: they would cost
		// some allocations a request, and carry the Authorization header.
		runtime.WithIncomingHeaderMatcher(func(h string) (string, bool) {
			if strings.EqualFold(h, "Idempotency-Key") {
				return callmeta.IdempotencyKey, true
			}
			if len(h) < len(runtime.MetadataHeaderPrefix) || !strings.EqualFold(h[:len(runtime.MetadataHeaderPrefix)], runtime.MetadataHeaderPrefix) {
				return "", false
			}
			return runtime.DefaultHeaderMatcher(h)
		}),
	)
	// grpc-gateway tries a method's routes from the last registered to the
	// first, and each route it tries allocates: the job routes, the most
	// called, go last (the jobs list's and the job's own handlers after
	// them, as they replace ListJobs and GetJob). No two services share a
	// literal path prefix, so the order between services changes no match.
	if err := restv2.RegisterDriverServiceHandlerServer(ctx, mux, cfg.Drivers); err != nil {
		return nil, fmt.Errorf("register driver routes: %w", err)
	}
	if err := restv2.RegisterJobImportServiceHandlerServer(ctx, mux, cfg.Imports); err != nil {
		return nil, fmt.Errorf("register job import routes: %w", err)
	}
	if err := restv2.RegisterWebhookServiceHandlerServer(ctx, mux, cfg.Webhooks); err != nil {
		return nil, fmt.Errorf("register webhook routes: %w", err)
	}
	if err := restv2.RegisterEventServiceHandlerServer(ctx, mux, cfg.Events); err != nil {
		return nil, fmt.Errorf("register event routes: %w", err)
	}
	if err := restv2.RegisterJobServiceHandlerServer(ctx, mux, cfg.Jobs); err != nil {
		return nil, fmt.Errorf("register job routes: %w", err)
	}
	if err := g.registerJobsList(mux, cfg.Jobs); err != nil {
		return nil, err
	}
	if err := g.registerGetJob(mux, cfg.Jobs); err != nil {
		return nil, err
	}
	return g.recoverPanics(RefuseUncleanPaths(headAsGet(mux))), nil
}

type gateway struct {
	authenticate func(ctx context.Context, apiKey, client string) (context.Context, error)
	proxies      forwarded.Proxies
	boundary     boundary.Boundary
	admit        func(ctx context.Context) (release func(), err error)
	resume       func(ctx context.Context) (release func(), err error)
}

// prepare runs for every routed request, before grpc-gateway decodes it:
// it authenticates, names the query parameters the route ignores, reads
// the body within its limit, and makes the path suffix decide the format
// whatever the client's Content-Type or Accept.
func (g *gateway) prepare(next runtime.HandlerFunc) runtime.HandlerFunc {
	var rendered atomic.Pointer[string]
	return func(w http.ResponseWriter, r *http.Request, params map[string]string) {
		if isProbe(r.Context()) {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		pattern := routePattern(r.Context(), &rendered)
		if pattern != "" {
			noteRoute(r.Context(), pattern)
		}
		route := routeOf(r.Method, pattern)
		ctx, err := g.authenticate(r.Context(), apiKey(r), g.clientAddress(r))
		if err != nil {
			g.writeStatusError(r.Context(), w, r, err)
			return
		}
		if refused := checkBeforeBody(w, r, params, route); refused != nil {
			writeError(w, r, *refused)
			return
		}
		coding, refused := contentCoding(r.Header)
		if refused != nil {
			writeError(w, r, *refused)
			return
		}
		// A gzip body's limit holds once decoded, which its length does not tell.
		if r.ContentLength > route.bodyLimit && coding == identityCoding {
			writeError(w, r, *bodyTooLarge(route.bodyLimit))
			return
		}
		// The body must arrive within bodyArrival of the headers; a writer
		// that cannot set the deadline (a test's recorder) leaves the
		// server's own ReadTimeout as the bound. A request without a body
		// (most reads) has nothing left to read.
		if r.Body != http.NoBody {
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(bodyArrival))
		}
		// Read as the handler decodes it; for a route taking none, before it runs.
		body := readBody(r, route.bodyLimit, coding)
		defer body.close()
		if route.body == "" {
			if refused := body.refusal(); refused != nil {
				writeError(w, r, *refused)
				return
			}
		}
		// The place is taken after the checks that need no body, so a
		// request refused for its key or its parameters never waits, and
		// once there is something to work on: at once for a request with
		// no body to decode, as the first piece arrives for one with a
		// body (requestBody.receive). See admit.
		place := g.newPlace(ctx)
		defer place.giveBack()
		if body.stream == nil || route.body == "" {
			if err := place.take(); err != nil {
				g.writeStatusError(ctx, w, r, err)
				return
			}
		}
		if place != nil {
			w = &placeWriter{ResponseWriter: w, place: place}
		}
		body.place = place
		body.list = route.list
		w.Header()["X-Content-Type-Options"] = nosniff
		next(w, g.asRouted(ctx, r, route, body), params)
	}
}

// checkBeforeBody is the refusal of a request whose query, id or
// Idempotency-Key breaks a rule, found before its body is read; it names
// the query parameters the route ignores in a header and the access log.
func checkBeforeBody(w http.ResponseWriter, r *http.Request, params map[string]string, route *route) *apiError {
	query, apiErr := checkParams(r, params)
	if apiErr != nil {
		return apiErr
	}
	if ignored := ignoredParams(query, route.params); ignored != "" {
		w.Header().Set(ignoredHeader, ignored)
		calllog.Add(r.Context(), slog.String("ignored_parameters", ignored))
	}
	if raw, ok := params["id"]; ok && route.numericID {
		if _, err := strconv.ParseInt(raw, 10, 64); err != nil {
			return notAnID(raw)
		}
	}
	if key := r.Header.Get("Idempotency-Key"); key != "" && !printableASCII(key) {
		return &apiError{http.StatusBadRequest, "INVALID_ARGUMENT",
			"Idempotency-Key: must be printable ASCII (letters, digits, punctuation)"}
	}
	return nil
}

// asRouted is r as grpc-gateway and the services read it: in ctx (the
// caller's) with the URL the client called and its route, reading body,
// with the format its path suffix names as its Content-Type and Accept.
func (g *gateway) asRouted(ctx context.Context, r *http.Request, route *route, body *requestBody) *http.Request {
	called := g.calledURL(r)
	r = r.WithContext(context.WithValue(context.WithValue(ctx, requestURLKey{}, called), routeKey{}, route))
	r.Body = body
	mime := mimeJSONValue
	if formatOf(r.URL.Path) == wire.XML {
		mime = mimeXMLValue
	}
	r.Header["Content-Type"], r.Header["Accept"] = mime, mime
	// Links are built from the host and scheme the client called (or
	// JOBBOARD_PUBLIC_URL): grpc-gateway passes X-Forwarded-Host on as
	// callmeta.ForwardedHost by itself, so it is set here to what
	// calledURL decided; the scheme goes as a Grpc-Metadata- header.
	r.Header.Set("X-Forwarded-Host", called.Host)
	r.Header.Del("Forwarded")
	r.Header.Set(runtime.MetadataHeaderPrefix+callmeta.ForwardedProto, called.Scheme)
	return r
}

// Header values set on every request, shared rather than allocated each
// time: a header's values are only read, or replaced by Set.
var (
	mimeJSONValue = []string{mimeJSON}
	mimeXMLValue  = []string{mimeXML}
	nosniff       = []string{"nosniff"}
)

// routePattern is the pattern of the route grpc-gateway matched, as the
// access log and metrics name it ("/api/v2.0/jobs.json/{id}"), or "" for
// none. grpc-gateway wraps each route's handler in the middleware once, so
// the route's pattern, rendered on its first request (rendering
// allocates), is kept in rendered for the next ones.
func routePattern(ctx context.Context, rendered *atomic.Pointer[string]) string {
	if p := rendered.Load(); p != nil {
		return *p
	}
	p, ok := runtime.HTTPPattern(ctx)
	if !ok {
		return ""
	}
	pattern := strings.ReplaceAll(p.String(), "=*}", "}")
	rendered.Store(&pattern)
	return pattern
}

// clientAddress is the address a request came from, as failed
// authentications are limited by: the peer of the connection, or the client
// a trusted proxy names in X-Forwarded-For.
func (g *gateway) clientAddress(r *http.Request) string {
	return g.proxies.Client(r.RemoteAddr, strings.Join(r.Header.Values("X-Forwarded-For"), ","))
}

// checkParams refuses path and query values that are not UTF-8 or hold a
// NUL: no field can store them, and PostgreSQL would reject them. It
// returns the query, parsed once for every check of the request.
func checkParams(r *http.Request, params map[string]string) (url.Values, *apiError) {
	bad := func(name, value string) *apiError {
		return &apiError{http.StatusBadRequest, "INVALID_ARGUMENT",
			fmt.Sprintf("%s: %q is not valid; values must be UTF-8 text without NUL characters", name, value)}
	}
	for name, v := range params {
		if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
			return nil, bad(name, v)
		}
	}
	query, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		// Go's own message ("invalid semicolon separator in query") names
		// neither the text nor the rule a client can act on.
		raw := r.URL.RawQuery
		if len(raw) > 200 {
			raw = raw[:200] + "..."
		}
		return nil, &apiError{http.StatusBadRequest, "INVALID_ARGUMENT", fmt.Sprintf(
			"query: %q is not a valid query string: parameters are name=value pairs separated by &, with ; %% and other reserved characters percent-encoded (%%3B for ;)", raw)}
	}
	for name, vs := range query {
		for _, v := range vs {
			if !utf8.ValidString(name) || !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
				return nil, bad(strings.ToValidUTF8(name, "\uFFFD"), v)
			}
		}
	}
	return query, nil
}

// notAnID is the refusal of a path id that should be a whole number.
func notAnID(raw string) *apiError {
	return &apiError{http.StatusBadRequest, "INVALID_ARGUMENT", fmt.Sprintf("id: %q is not an id (a whole number)", raw)}
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

type requestURLKey struct{}

// calledURL is the absolute URL the client called, for links: the request's
// host and scheme, or those a trusted proxy in front says the client used.
func (g *gateway) calledURL(r *http.Request) *url.URL {
	u := *r.URL
	u.Host = r.Host
	u.Scheme = "http"
	if r.TLS != nil {
		u.Scheme = "https"
	}
	if g.proxies.Trusts(r.RemoteAddr) {
		if host := forwarded.Host(r.Header.Get("X-Forwarded-Host")); host != "" {
			u.Host = host
		}
		if proto := forwarded.Proto(r.Header.Get("X-Forwarded-Proto")); proto != "" {
			u.Scheme = proto
		}
	}
	return &u
}

// answerAsRoute sends a successful answer as its route's row of the route
// table says: its status, Location, whether it has a body and paging
// headers. A route outside the table (none is) answers 200.
func answerAsRoute(ctx context.Context, w http.ResponseWriter, msg proto.Message) error {
	r, _ := ctx.Value(routeKey{}).(*route)
	if r == nil {
		return nil
	}
	if r.paged {
		pagingHeaders(ctx, w, msg)
	}
	if r.location {
		w.Header().Set("Location", selfLink(msg))
	}
	if r.noBody {
		w.Header().Del("Content-Type")
	}
	if r.status != 0 {
		w.WriteHeader(r.status)
	}
	return nil
}

// routeKey holds the *route of a request in its context.
type routeKey struct{}

// selfLink is the links.self of an answer: the created resource's URL.
func selfLink(msg proto.Message) string {
	m := msg.ProtoReflect()
	links := m.Descriptor().Fields().ByName("links")
	if links == nil || links.Message() == nil {
		return ""
	}
	self := links.Message().Fields().ByName("self")
	if self == nil || !m.Has(links) {
		return ""
	}
	return m.Get(links).Message().Get(self).String()
}

// pagingHeaders adds X-Total-Count and, when another page follows, a Link
// with rel="next" to a paged list's answer.
func pagingHeaders(ctx context.Context, w http.ResponseWriter, msg proto.Message) {
	// msg is grpc-gateway's wrapper around the response (http.yaml sends
	// only its drivers field as the body); it has the response's getters.
	list, ok := msg.(interface {
		GetTotalCount() int64
		GetHasNextPage() bool
		GetPage() int32
		GetMax() int32
	})
	if !ok {
		return
	}
	w.Header().Set("X-Total-Count", strconv.FormatInt(list.GetTotalCount(), 10))
	if list.GetHasNextPage() {
		setNextLink(ctx, w, url.Values{"page": {strconv.Itoa(int(list.GetPage()) + 1)}, "max": {strconv.Itoa(int(list.GetMax()))}})
	}
}

// apiKey takes the key from the Authorization header: HTTP Basic (the key
// as user name, as curl -u KEY: sends it) or a Bearer token.
func apiKey(r *http.Request) string {
	key, _ := authheader.Key(r.Header.Get("Authorization"))
	return key
}

// recoverPanics turns a panic in a handler into a 500 and a log line with
// the stack (boundary.Panic) instead of a dropped connection.
func (g *gateway) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p) // net/http's way to abort a response, not a failure
				}
				g.writeStatusError(r.Context(), w, r, boundary.Panic(r.Context(), p, "path", r.URL.Path))
			}
		}()
		next.ServeHTTP(w, r)
	})
}
