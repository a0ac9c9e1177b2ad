// Package openapicheck holds REST answers to the OpenAPI document the
// service serves, for tests: an answer's status must be one its operation
// declares, and its JSON body must match the schema declared for that
// status (members, types, required members, enums, nullability). The
// gateway's tests check every answer of their server with Handler, the
// command's tests every answer their REST helper reads with Answer.
package openapicheck

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/truckjobs/jobboard"
	"github.com/truckjobs/jobboard/internal/openapiv3"
)

// router finds a request's operation in the document, converted to
// OpenAPI 3 (what kin-openapi validates against). Loaded once.
var router = sync.OnceValues(func() (routers.Router, error) {
	v3, err := openapiv3.FromV2(jobboard.OpenAPI)
	if err != nil {
		return nil, err
	}
	return legacy.NewRouter(v3)
})

// Load reports whether the document converts to a valid OpenAPI 3
// document, which the checks rely on.
func Load() error {
	_, err := router()
	return err
}

// Answer checks one answer to r. Answers in XML (whose shape the document
// does not describe) and answers to paths the document does not describe
// (/docs, /healthz, /metrics) pass unchecked.
func Answer(r *http.Request, status int, header http.Header, body []byte) error {
	rt, err := router()
	if err != nil {
		return err
	}
	if strings.HasSuffix(r.URL.Path, ".xml") || strings.Contains(r.URL.Path, ".xml/") {
		return nil
	}
	route, params, err := rt.FindRoute(r)
	if err != nil {
		return nil
	}
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(r.Context(), input); err != nil {
		return fmt.Errorf("%s %s answered %d against the OpenAPI document: %w\nbody: %.600s", r.Method, r.URL, status, err, body)
	}
	return nil
}

// Handler is h with every answer checked by Answer, each mismatch given
// to report. The answer goes to the client as h writes it.
func Handler(h http.Handler, report func(error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &answerCopy{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		if err := Answer(r, status, w.Header(), rec.body.Bytes()); err != nil {
			report(err)
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
