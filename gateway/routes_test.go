package gateway

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"gopkg.in/yaml.v3"

	"github.com/truckjobs/jobboard/internal/rules"
)

// binding is one REST binding of http.yaml, as the route table writes it.
type binding struct {
	key, request, body string
}

// httpBindings reads http.yaml, the configuration grpc-gateway's routes
// come from, keyed like routes: method and full path pattern.
func httpBindings(t *testing.T) map[string]binding {
	t.Helper()
	data, err := os.ReadFile("../proto/jobboard/rest/v2/http.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type rule struct {
		Selector                      string
		Get, Post, Put, Patch, Delete string
		Body                          string
		AdditionalBindings            []rule `yaml:"additional_bindings"`
	}
	var cfg struct{ HTTP struct{ Rules []rule } }
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	out := map[string]binding{}
	add := func(selector string, r rule) {
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(selector))
		if err != nil {
			t.Fatalf("%s: %v", selector, err)
		}
		request := string(d.(protoreflect.MethodDescriptor).Input().FullName())
		for method, path := range map[string]string{http.MethodGet: r.Get, http.MethodPost: r.Post,
			http.MethodPut: r.Put, http.MethodPatch: r.Patch, http.MethodDelete: r.Delete} {
			if path != "" {
				out[method+" "+path] = binding{method + " " + path, request, r.Body}
			}
		}
	}
	for _, r := range cfg.HTTP.Rules {
		add(r.Selector, r)
		for _, extra := range r.AdditionalBindings {
			add(r.Selector, extra)
		}
	}
	return out
}

// TestRouteTableMatchesHTTPConfig: every binding of http.yaml is in the
// route table with the same request message and body field, and the table
// holds nothing else.
func TestRouteTableMatchesHTTPConfig(t *testing.T) {
	bindings := httpBindings(t)
	for key, b := range bindings {
		r, ok := routes[key]
		if !ok {
			t.Errorf("%s: in http.yaml, not in the route table", key)
			continue
		}
		if got := string(r.request.ProtoReflect().Descriptor().FullName()); got != b.request {
			t.Errorf("%s: the route table says %s, http.yaml %s", key, got, b.request)
		}
		if r.body != b.body {
			t.Errorf("%s: the route table's body is %q, http.yaml's %q", key, r.body, b.body)
		}
	}
	for key := range routes {
		if _, ok := bindings[key]; !ok {
			t.Errorf("%s: in the route table, not in http.yaml", key)
		}
	}
}

func TestRouteFacts(t *testing.T) {
	tests := []struct {
		key       string
		limit     int64
		list      deleteList
		numericID bool
		params    string // sorted, comma-separated
	}{
		{"GET /api/v2.0/jobs.json", defaultLimit, deleteByID, false, "pageSize,pageToken,page_size,page_token"},
		{"POST /api/v2.0/jobs.xml", rules.JobsPostLimit, deleteByID, false, ""},
		{"GET /api/v2.0/jobs.xml/{id}", defaultLimit, deleteByID, true, ""},
		{"DELETE /api/v2.0/jobs.json/reference", defaultLimit, deleteByReference, false, ""},
		{"DELETE /api/v2.0/jobs.xml", defaultLimit, deleteByID, false, ""},
		{"GET /api/v2.0/drivers.xml/{id}", defaultLimit, deleteByID, true, "include"},
		{"POST /api/v2.0/job-imports", rules.JobImportLimit, deleteByID, false, ""},
		{"GET /api/v2.0/job-imports/{id}", defaultLimit, deleteByID, false, ""},
		{"GET /api/v2.0/drivers.json", defaultLimit, deleteByID, false, "certifications,driver_type,email,end_date," +
			"first_name,has_job_apps,include,job_title,last_name,lives_within_radius,lives_within_zip,max,min_experience," +
			"page,phone,sort,start_date,state,status"},
	}
	for _, tt := range tests {
		r, ok := routes[tt.key]
		if !ok {
			t.Errorf("%s: not in the route table", tt.key)
			continue
		}
		var params []string
		for p := range r.params {
			params = append(params, p)
		}
		slices.Sort(params)
		if r.bodyLimit != tt.limit || r.list != tt.list || r.numericID != tt.numericID || strings.Join(params, ",") != tt.params {
			t.Errorf("%s: limit %d, list %v, numeric id %v, params %v; want %d, %v, %v, %s",
				tt.key, r.bodyLimit, r.list, r.numericID, params, tt.limit, tt.list, tt.numericID, tt.params)
		}
	}
	if r := routeOf(http.MethodGet, "/elsewhere"); r.bodyLimit != defaultLimit || len(r.params) != 0 {
		t.Errorf("an unknown route: %+v", r)
	}
}

func TestIgnoredParams(t *testing.T) {
	known := routes["GET /api/v2.0/drivers.xml"].params
	long := strings.Repeat("x", 100)
	var many []string
	for i := range 200 {
		many = append(many, fmt.Sprintf("unknown_parameter_%03d=1", i))
	}
	manyWant := regexp.MustCompile(`^unknown_parameter_000, unknown_parameter_001, .*, \(and \d+ more\)$`)
	tests := []struct {
		name, query, want string
	}{
		{"none", "state=TX&max=5", ""},
		{"the issue's example", "state=TX&radius=50&zip=75001", "radius, zip"},
		{"sorted and once", "zip=1&a=1&zip=2&state=TX", "a, zip"},
		{"values never shown", "secret=hunter2", "secret"},
		{"JSON name of a field", "driver_type=Solo&maxResults=3", "maxResults"},
		{"case matters", "STATE=TX", "STATE"},
		{"escaped", "a%2Cb=1&c+d=1&e%0Af=1", "a%2Cb, c+d, e%0Af"},
		{"empty name", "=1", `""`},
		{"cut", long + "=1", strings.Repeat("x", maxIgnoredName)},
		{"cut on a character", strings.Repeat("x", maxIgnoredName-1) + "%C3%A9=1", strings.Repeat("x", maxIgnoredName-1)},
		{"cut names collapse", long + "=1&" + long + "y=1", strings.Repeat("x", maxIgnoredName)},
	}
	for _, tt := range tests {
		q, err := url.ParseQuery(tt.query)
		if err != nil {
			t.Fatal(err)
		}
		if got := ignoredParams(q, known); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	q, _ := url.ParseQuery(strings.Join(many, "&"))
	got := ignoredParams(q, known)
	if len(got) > maxIgnoredList+len(", (and 200 more)") || !manyWant.MatchString(got) {
		t.Errorf("200 names: %d bytes %q", len(got), got)
	}
}
