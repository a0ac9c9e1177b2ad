package gateway

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/truckjobs/jobboard/internal/restroutes"
	"github.com/truckjobs/jobboard/internal/rules"
)

// The default body limit (docs/api.md, Limits against abuse), the same as
// gRPC's; a route that takes more says so in its option.
const defaultLimit = rules.DefaultLimit

// route is what the gateway knows of one REST route: its request message
// (whose fields outside the path and the body are the route's query
// parameters), how large a body it takes, which list a delete body holds,
// whether its id is numeric, and how a successful answer is sent. It is
// read from the rpc's (jobboard.rest.v2.route) option, from which
// http.yaml, and so grpc-gateway's routes, are written too.
type route struct {
	method string
	// pattern is the path as grpc-gateway reports the route, with
	// "{format}" standing for json and xml (both are routes).
	pattern string
	request proto.Message
	// body is the request field the body fills: "" for none, "*" for the
	// whole message.
	body      string
	bodyLimit int64
	list      deleteList
	// numericID says the {id} of a GET is an integer, checked before the
	// call; imports have UUIDs, which the service checks.
	numericID bool
	// alsoReads are query parameters the route reads beyond its request
	// message's fields: other spellings its handler takes.
	alsoReads []string
	// How a successful answer is sent (answerAsRoute): status is its HTTP
	// status (0 for 200); location sets Location to the answer's
	// links.self; noBody drops the Content-Type of an answer that has no
	// body (the renderer writes none); paged adds X-Total-Count and the
	// next page's Link.
	status   int
	location bool
	noBody   bool
	paged    bool
	// params are the query parameter names the route reads (queryParams).
	params map[string]bool
}

// routeTable is every REST route, read from the protos once.
var routeTable = readRoutes()

// readRoutes reads the routes of the REST rpcs (internal/restroutes). An
// rpc the table cannot serve stops the program at its start.
func readRoutes() []route {
	all, err := restroutes.All()
	if err != nil {
		panic("gateway: " + err.Error())
	}
	table := make([]route, len(all))
	for i, r := range all {
		request, err := protoregistry.GlobalTypes.FindMessageByName(r.RPC.Input().FullName())
		if err != nil {
			panic(fmt.Sprintf("gateway: the request of %s: %v", r.RPC.FullName(), err))
		}
		table[i] = route{
			method: r.GetMethod(), pattern: strings.TrimPrefix(r.GetPath(), apiPrefix),
			request: request.New().Interface(), body: r.GetBody(), bodyLimit: r.GetBodyLimitBytes(),
			numericID: r.GetNumericId(), alsoReads: otherSpellings[r.RPC.FullName()],
			status: int(r.GetStatus()), location: r.GetLocation(), noBody: r.GetNoBody(), paged: r.GetPaged(),
		}
		// A delete body lists ids or reference numbers, as its field says.
		if r.GetBody() == "reference_numbers" {
			table[i].list = deleteByReference
		}
	}
	return table
}

// routes indexes routeTable by method and full path pattern, one entry for
// each format.
var routes = indexRoutes(routeTable)

func indexRoutes(table []route) map[string]*route {
	index := map[string]*route{}
	for i := range table {
		r := &table[i]
		if r.bodyLimit == 0 {
			r.bodyLimit = defaultLimit
		}
		r.params = r.queryParams()
		for _, f := range []string{"json", "xml"} {
			index[r.method+" "+apiPrefix+strings.ReplaceAll(r.pattern, "{format}", f)] = r
		}
	}
	return index
}

// routeOf finds the route of a method and a path pattern as grpc-gateway
// reports it; a route missing from the table gets the defaults.
func routeOf(method, pattern string) *route {
	if r, ok := routes[method+" "+pattern]; ok {
		return r
	}
	return &route{method: method, pattern: pattern, bodyLimit: defaultLimit}
}

// queryParams is the set of query parameter names the route reads: each
// scalar field of its request message outside the path and the body, by its
// proto name and by its JSON name, as grpc-gateway's query parser accepts
// both. (No request message has a message field a query could reach into.)
func (r *route) queryParams() map[string]bool {
	known := map[string]bool{}
	if r.request == nil || r.body == "*" {
		return known
	}
	fields := r.request.ProtoReflect().Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		name := string(fd.Name())
		if name == r.body || strings.Contains(r.pattern, "{"+name+"}") || fd.Kind() == protoreflect.MessageKind {
			continue
		}
		known[name] = true
		known[fd.JSONName()] = true
	}
	for _, name := range r.alsoReads {
		known[name] = true
	}
	return known
}
