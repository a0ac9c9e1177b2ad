package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"gopkg.in/yaml.v3"

	"github.com/truckjobs/jobboard"
	"github.com/truckjobs/jobboard/domain"
	"github.com/truckjobs/jobboard/gateway"
	"github.com/truckjobs/jobboard/server/natural"
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
	data, err := os.ReadFile("../proto/jobboard/rest/v2/http.yaml")
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
		Authenticate: func(context.Context, string, string) (context.Context, error) {
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

// TestOpenAPIDescribesTheWire checks the places where the REST API (docs/api.md)
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
	webhooks := doc.Paths["/api/v2.0/webhooks"]["post"]
	if _, ok := webhooks.Responses["201"].Headers["Location"]; !ok || webhooks.Responses["422"].Schema == nil {
		t.Errorf("POST /api/v2.0/webhooks: want 201 with a Location header and 422: %+v", webhooks.Responses)
	}
	if r, ok := doc.Paths["/api/v2.0/webhooks/{id}"]["delete"].Responses["204"]; !ok || len(r.Schema) != 0 {
		t.Errorf("DELETE /api/v2.0/webhooks/{id}: want 204 without a body: %+v", r)
	}
	if got := doc.Paths["/api/v2.0/drivers.json"]["get"].Responses["200"].Headers; got["X-Total-Count"] == nil || got["Link"] == nil {
		t.Errorf("drivers list: headers %v, want X-Total-Count and Link", got)
	}
	var defs struct {
		Definitions map[string]struct {
			Properties map[string]struct{ Type string }
		}
	}
	if err := json.Unmarshal(jobboard.OpenAPI, &defs); err != nil {
		t.Fatal(err)
	}
	// An event's data is written as the JSON object it stores.
	if got := defs.Definitions["v2Event"].Properties["data"].Type; got != "object" {
		t.Errorf("Event.data: type %q, want object", got)
	}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			if ref := op.Responses["401"].Schema["$ref"]; ref != "#/definitions/v2ErrorResponse" {
				t.Errorf("%s %s: 401 schema %v, want the error body", method, path, ref)
			}
		}
	}
}

// TestGoldensMatchOpenAPI checks every JSON golden answer against the
// schema the OpenAPI document gives for its operation and status: no
// property the document does not name, every value of the documented type,
// null only where the document says x-nullable.
func TestGoldensMatchOpenAPI(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]struct{ Schema map[string]any }
		}
		Definitions map[string]map[string]any
	}
	if err := json.Unmarshal(jobboard.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	// Each golden and the operation that produced it (method, OpenAPI path).
	goldens := map[string][2]string{
		"list": {"get", "/api/v2.0/jobs.json"}, "list_empty": {"get", "/api/v2.0/jobs.json"},
		"retrieve": {"get", "/api/v2.0/jobs.json/{id}"}, "retrieve_markup": {"get", "/api/v2.0/jobs.json/{id}"},
		"post_added": {"post", "/api/v2.0/jobs.json"}, "post_upsert": {"post", "/api/v2.0/jobs.json"},
		"post_every_problem": {"post", "/api/v2.0/jobs.json"}, "post_active_limit": {"post", "/api/v2.0/jobs.json"},
		"delete_one": {"delete", "/api/v2.0/jobs.json/{id}"}, "delete_one_missing": {"delete", "/api/v2.0/jobs.json/{id}"},
		"delete_one_not_an_id": {"delete", "/api/v2.0/jobs.json/{id}"}, "delete_many": {"delete", "/api/v2.0/jobs.json"},
		"delete_reference":         {"delete", "/api/v2.0/jobs.json/reference/{referenceNumber}"},
		"delete_reference_missing": {"delete", "/api/v2.0/jobs.json/reference/{referenceNumber}"},
		"delete_many_reference":    {"delete", "/api/v2.0/jobs.json/reference"},
		"error_unauthenticated":    {"get", "/api/v2.0/jobs.json"}, "error_not_found": {"get", "/api/v2.0/jobs.json/{id}"},
		"error_bad_id": {"get", "/api/v2.0/jobs.json/{id}"}, "error_malformed": {"post", "/api/v2.0/jobs.json"},
		"error_wrong_shape": {"post", "/api/v2.0/jobs.json"}, "error_not_utf8": {"post", "/api/v2.0/jobs.json"},
		"error_too_large": {"post", "/api/v2.0/jobs.json"}, "error_query_not_utf8": {"get", "/api/v2.0/drivers.json"},
		"error_path_nul": {"delete", "/api/v2.0/jobs.json/reference/{referenceNumber}"},
		"drivers_list":   {"get", "/api/v2.0/drivers.json"}, "drivers_list_page": {"get", "/api/v2.0/drivers.json"},
		"drivers_list_empty": {"get", "/api/v2.0/drivers.json"}, "drivers_list_unknown_param": {"get", "/api/v2.0/drivers.json"},
		"driver_detail": {"get", "/api/v2.0/drivers.json/{id}"}, "driver_detail_minimal": {"get", "/api/v2.0/drivers.json/{id}"},
		"drivers_error_not_found": {"get", "/api/v2.0/drivers.json/{id}"}, "drivers_error_param": {"get", "/api/v2.0/drivers.json"},
		"drivers_list_status": {"get", "/api/v2.0/drivers.json"}, "driver_detail_status": {"get", "/api/v2.0/drivers.json/{id}"},
		"drivers_error_status": {"get", "/api/v2.0/drivers.json"}, "drivers_error_include": {"get", "/api/v2.0/drivers.json/{id}"},
	}
	files, err := filepath.Glob("testdata/*.json")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		op, ok := goldens[name]
		if !ok {
			// Goldens of routes the document does not cover (unknown path,
			// wrong method) have no operation to check against.
			if name != "error_unknown_path" && name != "error_method" {
				t.Errorf("%s: no operation listed for this golden", name)
			}
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		head, body, _ := strings.Cut(string(data), "\n\n")
		code := strings.Fields(head)[1]
		resp, ok := doc.Paths[op[1]][op[0]].Responses[code]
		if !ok {
			t.Errorf("%s: %s %s answers %s, which the document does not list", name, op[0], op[1], code)
			continue
		}
		var v any
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, problem := range conforms(v, resp.Schema, doc.Definitions, "$") {
			t.Errorf("%s (%s %s %s): %s", name, op[0], op[1], code, problem)
		}
		checked++
	}
	if checked < 30 {
		t.Errorf("checked %d goldens, want them all", checked)
	}
}

// conforms lists how v departs from a Swagger 2.0 schema: the subset the
// generated document uses ($ref, type, properties, items, x-nullable).
func conforms(v any, schema map[string]any, defs map[string]map[string]any, at string) []string {
	if ref, ok := schema["$ref"].(string); ok {
		def, ok := defs[strings.TrimPrefix(ref, "#/definitions/")]
		if !ok {
			return []string{at + ": unknown " + ref}
		}
		return conforms(v, def, defs, at)
	}
	if v == nil {
		if schema["x-nullable"] == true {
			return nil
		}
		return []string{at + ": null where the document does not allow it"}
	}
	typ, _ := schema["type"].(string)
	if typ == "" && schema["properties"] != nil {
		typ = "object"
	}
	var problems []string
	wrong := func() []string { return []string{fmt.Sprintf("%s: %T where the document says %s", at, v, typ)} }
	switch typ {
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return wrong()
		}
		props, _ := schema["properties"].(map[string]any)
		for k, fv := range obj {
			p, ok := props[k].(map[string]any)
			if !ok {
				problems = append(problems, fmt.Sprintf("%s.%s: not in the document", at, k))
				continue
			}
			problems = append(problems, conforms(fv, p, defs, at+"."+k)...)
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			return wrong()
		}
		items, _ := schema["items"].(map[string]any)
		for i, item := range arr {
			problems = append(problems, conforms(item, items, defs, fmt.Sprintf("%s[%d]", at, i))...)
		}
	case "string":
		if _, ok := v.(string); !ok {
			return wrong()
		}
	case "integer":
		if n, ok := v.(float64); !ok || n != float64(int64(n)) {
			return wrong()
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return wrong()
		}
	case "number":
		if _, ok := v.(float64); !ok {
			return wrong()
		}
	default:
		problems = append(problems, fmt.Sprintf("%s: the document gives no type", at))
	}
	return problems
}

// TestOpenAPIEnumsAreTheVocabularies: each closed value set openapi.yaml
// declares is the list the service checks against and answers from, in
// the same order, so that the document and the code cannot drift apart.
func TestOpenAPIEnumsAreTheVocabularies(t *testing.T) {
	var doc struct {
		Definitions map[string]struct {
			Properties map[string]struct {
				Enum  []string
				Items struct{ Enum []string }
			}
		}
	}
	if err := json.Unmarshal(jobboard.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	subscribable := domain.Names(domain.SubscribableEventTypes())
	tests := []struct {
		definition, property string
		want                 []string
	}{
		{"v2Job", "driverType", natural.DriverTypes.Labels()},
		{"v2Job", "preference", natural.Preferences.Labels()},
		{"v2Job", "freightType", natural.FreightTypes.Labels()},
		{"v2Job", "payFrequency", natural.PayFrequencies.Labels()},
		{"v2Job", "employmentType", natural.EmploymentTypes.Labels()},
		{"v2Job", "routeType", natural.RouteTypes.Labels()},
		{"v2Job", "licenseClass", natural.LicenseClasses.Labels()},
		{"v2JobInput", "driverType", natural.DriverTypes.Labels()},
		{"v2JobInput", "preference", natural.Preferences.Labels()},
		{"v2JobInput", "freightType", natural.FreightTypes.Labels()},
		{"v2JobInput", "payFrequency", natural.PayFrequencies.Labels()},
		{"v2JobInput", "employmentType", natural.EmploymentTypes.Labels()},
		{"v2JobInput", "routeType", natural.RouteTypes.Labels()},
		{"v2JobInput", "licenseClass", natural.LicenseClasses.Labels()},
		{"v2JobImport", "status", natural.JobImportStatuses.Labels()},
		{"v2Webhook", "events", subscribable},
		{"v2WebhookInput", "events", subscribable},
		{"v2Webhook", "disabledReason", natural.WebhookDisabledReasons.Labels()},
		{"v2WebhookAuth", "type", natural.WebhookAuthTypes.Labels()},
		{"v2WebhookAuthInput", "type", natural.WebhookAuthTypes.Labels()},
		{"v2WebhookDelivery", "eventType", natural.EventTypes.Labels()},
		{"v2Event", "type", natural.EventTypes.Labels()},
		{"v2DriverStatus", "status", natural.LeadStatuses.Labels()},
		{"v2DriverStatusEntry", "status", natural.LeadStatuses.Labels()},
		{"v2DriverStatusInput", "status", natural.LeadStatuses.Labels()},
		{"v2DriverStatus", "reason", natural.RejectionReasons.Labels()},
		{"v2DriverStatusEntry", "reason", natural.RejectionReasons.Labels()},
		{"v2DriverStatusInput", "reason", natural.RejectionReasons.Labels()},
		{"v2DriverStatusBatchEntry", "status", natural.LeadStatuses.Labels()},
		{"v2DriverStatusBatchEntry", "reason", natural.RejectionReasons.Labels()},
	}
	for _, tt := range tests {
		p, ok := doc.Definitions[tt.definition].Properties[tt.property]
		enum := p.Enum
		if enum == nil {
			enum = p.Items.Enum
		}
		if !ok || !slices.Equal(enum, tt.want) {
			t.Errorf("%s.%s: enum %q, want %q", tt.definition, tt.property, enum, tt.want)
		}
	}
}
