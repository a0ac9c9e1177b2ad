package restroutes_test

import (
	"bytes"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/internal/restroutes"
)

// TestHTTPConfigIsWrittenFromTheRoutes: the committed http.yaml is what
// the routes write (make generate writes it; this fails when it was not
// run after a route changed).
func TestHTTPConfigIsWrittenFromTheRoutes(t *testing.T) {
	routes, err := restroutes.All()
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("../../proto/jobboard/rest/v2/http.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := restroutes.HTTPConfig(routes); !bytes.Equal(got, committed) {
		t.Errorf("proto/jobboard/rest/v2/http.yaml is not what the routes write; run make generate:\n%s", got)
	}
}

// TestEveryRouteIsServable: each route names a method grpc-gateway binds, a
// path under the API's prefix whose variables are fields of its request,
// and a body and a response body its messages have.
func TestEveryRouteIsServable(t *testing.T) {
	routes, err := restroutes.All()
	if err != nil {
		t.Fatal(err)
	}
	if len(routes) < 21 {
		t.Fatalf("%d routes", len(routes))
	}
	variable := regexp.MustCompile(`\{(\w+)\}`)
	for _, r := range routes {
		name := string(r.RPC.FullName())
		if !slices.Contains([]string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}, r.GetMethod()) {
			t.Errorf("%s: method %q", name, r.GetMethod())
		}
		if !strings.HasPrefix(r.GetPath(), "/api/v2.0/") {
			t.Errorf("%s: path %q is outside /api/v2.0/", name, r.GetPath())
		}
		for _, m := range variable.FindAllStringSubmatch(r.GetPath(), -1) {
			if m[1] != "format" && r.RPC.Input().Fields().ByName(protoName(m[1])) == nil {
				t.Errorf("%s: path variable %s is no field of %s", name, m[1], r.RPC.Input().FullName())
			}
		}
		if b := r.GetBody(); b != "" && b != "*" && r.RPC.Input().Fields().ByName(protoName(b)) == nil {
			t.Errorf("%s: body %s is no field of %s", name, b, r.RPC.Input().FullName())
		}
		if b := r.GetResponseBody(); b != "" && r.RPC.Output().Fields().ByName(protoName(b)) == nil {
			t.Errorf("%s: response body %s is no field of %s", name, b, r.RPC.Output().FullName())
		}
	}
}

func TestPaths(t *testing.T) {
	for _, tt := range []struct {
		path string
		want []string
	}{
		{"/api/v2.0/jobs.{format}/{id}", []string{"/api/v2.0/jobs.json/{id}", "/api/v2.0/jobs.xml/{id}"}},
		{"/api/v2.0/job-imports/{id}", []string{"/api/v2.0/job-imports/{id}"}},
	} {
		r := restroutes.Route{Route: restv2Route(tt.path)}
		if got := r.Paths(); !slices.Equal(got, tt.want) {
			t.Errorf("Paths(%s) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

func protoName(s string) protoreflect.Name { return protoreflect.Name(s) }

func restv2Route(path string) *restv2.Route { return &restv2.Route{Method: "GET", Path: path} }
