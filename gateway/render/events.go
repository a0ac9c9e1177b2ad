package render

import (
	"github.com/truckjobs/jobboard/gateway/wire"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
)

// writeEvent writes an event object: the body of its deliveries and an
// item of the feed, the same bytes in both.
func writeEvent(w wire.Writer, e *restv2.Event) {
	w.BeginObject("event")
	w.String("id", e.GetId())
	w.String("type", e.GetType())
	w.String("createdAt", e.GetCreatedAt())
	w.JSONValue("data", e.GetData())
	w.EndObject()
}

// writeEventPage writes a page of the feed with the address of the next.
func writeEventPage(w wire.Writer, page *restv2.ListEventsResponse) {
	w.BeginObject("events")
	w.BeginList("data")
	for _, e := range page.GetData() {
		writeEvent(w, e)
	}
	w.EndList()
	w.BeginObject("links")
	w.String("next", page.GetLinks().GetNext())
	w.EndObject()
	w.EndObject()
}
