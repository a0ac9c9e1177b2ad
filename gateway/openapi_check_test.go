package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/truckjobs/jobboard"
)

// The OpenAPI document the service serves, as OpenAPI 3 (kin-openapi
// validates against 3), and a router finding each request's operation in
// it. Loaded once for every test of the package.
var openAPIRouter = sync.OnceValues(func() (routers.Router, error) {
	var v2 openapi2.T
	if err := json.Unmarshal(jobboard.OpenAPI, &v2); err != nil {
		return nil, fmt.Errorf("read the OpenAPI 2 document: %w", err)
	}
	v3, err := openapi2conv.ToV3(&v2)
	if err != nil {
		return nil, fmt.Errorf("convert it to OpenAPI 3: %w", err)
	}
	if err := v3.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("the converted document is not valid OpenAPI 3: %w", err)
	}
	return legacy.NewRouter(v3)
})

// checkedByOpenAPI is h with every JSON answer checked against the OpenAPI
// document: its status must be one the operation declares, and its body
// must match the schema declared for that status (members, types,
// required members, enums, nullability). A mismatch fails t, naming the
// call. XML answers have no schema in the document and are not checked;
// neither are calls to paths the document does not describe (/docs,
// /healthz), which other tests cover.
func checkedByOpenAPI(t testing.TB, h http.Handler) http.Handler {
	router, err := openAPIRouter()
	if err != nil {
		t.Fatal(err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route, params, findErr := router.FindRoute(r)
		rec := &answerCopy{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		if findErr != nil || strings.HasSuffix(r.URL.Path, ".xml") || strings.Contains(r.URL.Path, ".xml/") {
			return
		}
		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		input := &openapi3filter.ResponseValidationInput{
			RequestValidationInput: &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route},
			Status:                 status,
			Header:                 w.Header(),
			Body:                   io.NopCloser(bytes.NewReader(rec.body.Bytes())),
			Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
		}
		if err := openapi3filter.ValidateResponse(r.Context(), input); err != nil {
			t.Errorf("%s %s answered %d against the OpenAPI document: %v\nbody: %.600s", r.Method, r.URL, status, err, rec.body.Bytes())
		}
	})
}

// answerCopy passes an answer on while keeping a copy of it.
type answerCopy struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (a *answerCopy) WriteHeader(code int) {
	if a.status == 0 {
		a.status = code
	}
	a.ResponseWriter.WriteHeader(code)
}

func (a *answerCopy) Write(b []byte) (int, error) {
	if a.status == 0 {
		a.status = http.StatusOK
	}
	a.body.Write(b)
	return a.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer (to
// flush a streamed list, or set deadlines).
func (a *answerCopy) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// Flush passes a flush on, for writers that check for http.Flusher.
func (a *answerCopy) Flush() {
	if f, ok := a.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// TestOpenAPIDocumentLoads: the document converts to a valid OpenAPI 3
// document, which checkedByOpenAPI relies on.
func TestOpenAPIDocumentLoads(t *testing.T) {
	if _, err := openAPIRouter(); err != nil {
		t.Fatal(err)
	}
}
