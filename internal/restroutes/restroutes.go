// Package restroutes reads the REST routes from the embedded descriptors:
// every rpc of package jobboard.rest.v2 with its (jobboard.rest.v2.route)
// option. The gateway builds its route table from them, and `make
// generate` writes http.yaml from them (HTTPConfig), the bindings
// grpc-gateway and protoc-gen-openapiv2 read: a path is said once, beside
// its rpc.
package restroutes

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
)

// Package is the REST API's proto package.
const Package = "jobboard.rest.v2"

// Formats are what "{format}" in a route's path stands for: each such
// route is served as both.
var Formats = []string{"json", "xml"}

// Route is one rpc of the REST services and how it is served.
type Route struct {
	RPC protoreflect.MethodDescriptor
	*restv2.Route
}

// All returns every REST route of the compiled protos, by file, service
// and rpc in their order. An rpc without its route is an error: it could
// be served by nothing.
func All() ([]Route, error) { return From(protoregistry.GlobalFiles) }

// From returns the REST routes of the files in registry, as All does.
func From(registry *protoregistry.Files) ([]Route, error) {
	var files []protoreflect.FileDescriptor
	registry.RangeFilesByPackage(Package, func(f protoreflect.FileDescriptor) bool {
		files = append(files, f)
		return true
	})
	slices.SortFunc(files, func(a, b protoreflect.FileDescriptor) int { return strings.Compare(a.Path(), b.Path()) })
	var routes []Route
	for _, f := range files {
		for i := range f.Services().Len() {
			methods := f.Services().Get(i).Methods()
			for k := range methods.Len() {
				m := methods.Get(k)
				r, _ := proto.GetExtension(m.Options(), restv2.E_Route).(*restv2.Route)
				if r == nil || r.GetMethod() == "" || r.GetPath() == "" {
					return nil, fmt.Errorf("%s has no (jobboard.rest.v2.route) with a method and a path", m.FullName())
				}
				routes = append(routes, Route{RPC: m, Route: r})
			}
		}
	}
	return routes, nil
}

// Paths are the paths the route is served at: one for each format when
// its path holds "{format}", else its path.
func (r Route) Paths() []string {
	if !strings.Contains(r.GetPath(), "{format}") {
		return []string{r.GetPath()}
	}
	paths := make([]string, len(Formats))
	for i, f := range Formats {
		paths[i] = strings.ReplaceAll(r.GetPath(), "{format}", f)
	}
	return paths
}

// HTTPConfig writes routes as a grpc-gateway API configuration: a rule
// for each rpc, its first path the binding and the others additional
// bindings.
func HTTPConfig(routes []Route) []byte {
	var b bytes.Buffer
	b.WriteString(`# Written by make generate from the (jobboard.rest.v2.route) option of each
# rpc (internal/restroutes): edit the protos, not this file. The REST
# bindings for grpc-gateway and protoc-gen-openapiv2; a resource with .json
# and .xml paths is two bindings of one rpc, and the gateway picks the
# representation from the suffix.
type: google.api.Service
config_version: 3
http:
  rules:
`)
	for _, r := range routes {
		fmt.Fprintf(&b, "    - selector: %s\n", r.RPC.FullName())
		paths := r.Paths()
		binding(&b, "      ", r, paths[0])
		if len(paths) > 1 {
			b.WriteString("      additional_bindings:\n")
			for _, p := range paths[1:] {
				binding(&b, "        - ", r, p)
			}
		}
	}
	return b.Bytes()
}

// binding writes one binding of r at path; its first line starts with
// first, the others line up under it.
func binding(b *bytes.Buffer, first string, r Route, path string) {
	indent := strings.Repeat(" ", len(first))
	fmt.Fprintf(b, "%s%s: %s\n", first, strings.ToLower(r.GetMethod()), path)
	switch body := r.GetBody(); body {
	case "":
	case "*":
		fmt.Fprintf(b, "%sbody: %s\n", indent, strconv.Quote(body)) // a bare * is YAML's alias mark
	default:
		fmt.Fprintf(b, "%sbody: %s\n", indent, body)
	}
	if r.GetResponseBody() != "" {
		fmt.Fprintf(b, "%sresponse_body: %s\n", indent, r.GetResponseBody())
	}
}
