package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"gopkg.in/yaml.v3"

	"jobboard"
	"jobboard/gateway"
)

// route is one REST operation: an HTTP method and a path template whose
// parameters are written {} (names differ in case between the two sources).
type route struct{ method, path string }

var pathParam = regexp.MustCompile(`\{[^}]*\}`)

func normalise(method, path string) route {
	return route{strings.ToUpper(method), pathParam.ReplaceAllString(path, "{}")}
}

// configuredRoutes reads the routes from http.yaml, the configuration both
// the gateway's generated handlers and the OpenAPI document come from.
func configuredRoutes(t *testing.T) []route {
	t.Helper()
	data, err := os.ReadFile("../proto/jobboard/v2/http.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		HTTP struct {
			Rules []map[string]any
		}
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	var routes []route
	add := func(b map[string]any) {
		for _, m := range []string{"get", "post", "put", "patch", "delete"} {
			if p, ok := b[m].(string); ok {
				routes = append(routes, normalise(m, p))
			}
		}
	}
	for _, rule := range cfg.HTTP.Rules {
		add(rule)
		extra, _ := rule["additional_bindings"].([]any)
		for _, b := range extra {
			if b, ok := b.(map[string]any); ok {
				add(b)
			}
		}
	}
	if len(routes) < 20 {
		t.Fatalf("read only %d routes from http.yaml", len(routes))
	}
	return routes
}

type openAPIDoc struct {
	SecurityDefinitions map[string]struct {
		Type, In, Name string
	}
	Paths map[string]map[string]struct {
		Parameters []struct {
			Name, In string
			Schema   *json.RawMessage
		}
		Responses map[string]struct {
			Schema  map[string]any
			Headers map[string]any
		}
	}
}

func openAPI(t *testing.T) openAPIDoc {
	t.Helper()
	var doc openAPIDoc
	if err := json.Unmarshal(jobboard.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestOpenAPICoversEveryRoute: every route the gateway serves is in the
// OpenAPI document and the document has nothing the gateway does not serve.
func TestOpenAPICoversEveryRoute(t *testing.T) {
	configured := configuredRoutes(t)
	var documented []route
	for path, ops := range openAPI(t).Paths {
		for method := range ops {
			documented = append(documented, normalise(method, path))
		}
	}
	for _, r := range configured {
		if !slices.Contains(documented, r) {
			t.Errorf("%s %s is served but not in the OpenAPI document", r.method, r.path)
		}
	}
	for _, r := range documented {
		if !slices.Contains(configured, r) {
			t.Errorf("%s %s is in the OpenAPI document but not served", r.method, r.path)
		}
	}

	// And the gateway does route each of them: an unauthenticated call gets
	// 401 from the route's middleware rather than the router's 404 or 405.
	h, err := gateway.New(context.Background(), gateway.Config{
		Authenticate: func(context.Context, string) (context.Context, error) {
			return nil, status.Error(codes.Unauthenticated, "no key")
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	call := func(method, path string) int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
		return rec.Code
	}
	for _, r := range configured {
		if got := call(r.method, strings.ReplaceAll(r.path, "{}", "1")); got != http.StatusUnauthorized {
			t.Errorf("%s %s: status %d, want 401 (routed)", r.method, r.path, got)
		}
	}
	if got := call(http.MethodGet, "/api/v2.0/nothing.json"); got != http.StatusNotFound {
		t.Errorf("unknown path: status %d, want 404", got)
	}
}

// TestOpenAPIDescribesTheWire checks the places where the REST contract
// differs from what protoc-gen-openapiv2 would say without configuration.
func TestOpenAPIDescribesTheWire(t *testing.T) {
	doc := openAPI(t)
	var info struct {
		Info struct{ Title, Version string }
	}
	if err := json.Unmarshal(jobboard.OpenAPI, &info); err != nil {
		t.Fatal(err)
	}
	if info.Info.Title != "Job board API" || info.Info.Version != "2.0" {
		t.Errorf("info = %+v, want the API's title and version 2.0", info.Info)
	}
	if b := doc.SecurityDefinitions["basic"]; b.Type != "basic" {
		t.Errorf("basic security scheme = %+v", b)
	}
	if b := doc.SecurityDefinitions["bearer"]; b.Type != "apiKey" || b.In != "header" || b.Name != "Authorization" {
		t.Errorf("bearer security scheme = %+v", b)
	}
	for _, tt := range []struct{ method, path string }{
		{"get", "/api/v2.0/jobs.json"}, {"get", "/api/v2.0/jobs.xml"},
		{"get", "/api/v2.0/drivers.json"}, {"get", "/api/v2.0/drivers.xml"},
	} {
		if got := doc.Paths[tt.path][tt.method].Responses["200"].Schema["type"]; got != "array" {
			t.Errorf("%s %s: 200 schema type %v, want a top-level array", tt.method, tt.path, got)
		}
	}
	for _, path := range []string{"/api/v2.0/jobs.json", "/api/v2.0/jobs.json/reference"} {
		for method, op := range doc.Paths[path] {
			if method == "get" {
				continue
			}
			var body struct{ Type string }
			for _, p := range op.Parameters {
				if p.In == "body" {
					_ = json.Unmarshal(*p.Schema, &body)
				}
			}
			if body.Type != "array" {
				t.Errorf("%s %s: body schema type %q, want a top-level array", method, path, body.Type)
			}
		}
	}
	create := doc.Paths["/api/v2.0/job-imports"]["post"]
	if _, ok := create.Responses["202"].Headers["Location"]; !ok {
		t.Errorf("POST /api/v2.0/job-imports: no 202 with a Location header: %+v", create.Responses)
	}
	if got := doc.Paths["/api/v2.0/drivers.json"]["get"].Responses["200"].Headers; got["X-Total-Count"] == nil || got["Link"] == nil {
		t.Errorf("drivers list: headers %v, want X-Total-Count and Link", got)
	}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			if ref := op.Responses["401"].Schema["$ref"]; ref != "#/definitions/v2ErrorResponse" {
				t.Errorf("%s %s: 401 schema %v, want the error body", method, path, ref)
			}
		}
	}
}
