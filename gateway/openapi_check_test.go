package gateway_test

import (
	"net/http"
	"testing"

	"github.com/truckjobs/jobboard/internal/openapicheck"
)

// checkedByOpenAPI is h with every answer it gives checked against the
// OpenAPI document (internal/openapicheck), a mismatch failing t.
func checkedByOpenAPI(t testing.TB, h http.Handler) http.Handler {
	if err := openapicheck.Load(); err != nil {
		t.Fatal(err)
	}
	return openapicheck.Handler(h, func(err error) { t.Error(err) })
}

// TestOpenAPIDocumentLoads: the document converts to a valid OpenAPI 3
// document, which checkedByOpenAPI relies on.
func TestOpenAPIDocumentLoads(t *testing.T) {
	if err := openapicheck.Load(); err != nil {
		t.Fatal(err)
	}
}
