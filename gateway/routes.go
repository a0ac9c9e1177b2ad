package gateway

import (
	"net/http"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/internal/rules"
)

// Body limits (docs/api.md, Limits against abuse), the same as gRPC's.
const (
	jobsPostLimit  = rules.JobsPostLimit
	jobImportLimit = rules.JobImportLimit
	defaultLimit   = rules.DefaultLimit
)

// route is what the gateway knows of one REST route beyond what http.yaml
// tells grpc-gateway: its request message (whose fields outside the path
// and the body are the route's query parameters), how large a body it
// takes, which list a delete body holds, and whether its id is numeric.
// TestRouteTableMatchesHTTPConfig keeps the table and http.yaml in step.
type route struct {
	method string
	// pattern is the path as grpc-gateway reports the route, with
	// "{format}" standing for json and xml (both are routes).
	pattern string
	request proto.Message
	// body is the request field http.yaml maps the body onto: "" for
	// none, "*" for the whole message.
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

var routeTable = []route{
	{method: http.MethodGet, pattern: "jobs.{format}", request: &restv2.ListJobsRequest{}, alsoReads: jobsListOtherSpellings()},
	{method: http.MethodPost, pattern: "jobs.{format}", request: &restv2.PostJobsRequest{}, body: "jobs", bodyLimit: jobsPostLimit},
	{method: http.MethodGet, pattern: "jobs.{format}/{id}", request: &restv2.GetJobRequest{}, numericID: true},
	{method: http.MethodDelete, pattern: "jobs.{format}", request: &restv2.DeleteJobsRequest{}, body: "ids", list: deleteByID},
	{method: http.MethodDelete, pattern: "jobs.{format}/{id}", request: &restv2.DeleteJobRequest{}},
	{method: http.MethodDelete, pattern: "jobs.{format}/reference", request: &restv2.DeleteJobsByReferenceRequest{},
		body: "reference_numbers", list: deleteByReference},
	{method: http.MethodDelete, pattern: "jobs.{format}/reference/{reference_number}", request: &restv2.DeleteJobByReferenceRequest{}},
	{method: http.MethodGet, pattern: "drivers.{format}", request: &restv2.ListDriversRequest{}, paged: true},
	{method: http.MethodGet, pattern: "drivers.{format}/{id}", request: &restv2.GetDriverRequest{}, numericID: true},
	{method: http.MethodPost, pattern: "job-imports", request: &restv2.CreateJobImportRequest{}, body: "*", bodyLimit: jobImportLimit,
		status: http.StatusAccepted, location: true},
	{method: http.MethodGet, pattern: "job-imports/{id}", request: &restv2.GetJobImportRequest{}},
	{method: http.MethodPost, pattern: "webhooks", request: &restv2.CreateWebhookRequest{}, body: "webhook",
		status: http.StatusCreated, location: true},
	{method: http.MethodGet, pattern: "webhooks", request: &restv2.ListWebhooksRequest{}},
	{method: http.MethodGet, pattern: "webhooks/{id}", request: &restv2.GetWebhookRequest{}},
	{method: http.MethodPatch, pattern: "webhooks/{id}", request: &restv2.UpdateWebhookRequest{}, body: "webhook"},
	{method: http.MethodDelete, pattern: "webhooks/{id}", request: &restv2.DeleteWebhookRequest{}, status: http.StatusNoContent, noBody: true},
	{method: http.MethodPost, pattern: "webhooks/{id}/rotate-secret", request: &restv2.RotateWebhookSecretRequest{}},
	{method: http.MethodPost, pattern: "webhooks/{id}/test", request: &restv2.TestWebhookRequest{}, status: http.StatusAccepted},
	{method: http.MethodGet, pattern: "webhooks/{id}/deliveries", request: &restv2.ListWebhookDeliveriesRequest{}},
	{method: http.MethodPost, pattern: "webhooks/{id}/deliveries/{event_id}/redeliver", request: &restv2.RedeliverWebhookEventRequest{},
		status: http.StatusAccepted, noBody: true},
	{method: http.MethodGet, pattern: "events", request: &restv2.ListEventsRequest{}},
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
