package render

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/truckjobs/jobboard/gateway/wire"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
)

// JSON writes msg as the REST API's JSON: what a client retrieving it
// would get (the import callback's body, an event's data).
func JSON(msg proto.Message) ([]byte, error) { return Message(wire.JSON, msg) }

// Message writes msg in its docs/api.md shape for f. Each resource of the
// v2.0 shapes has one writing function shared by both formats; the others
// are written as their messages say (walk). Lists arrive as the response's
// repeated field (http.yaml's response_body), since they are top-level
// arrays on the wire.
func Message(f wire.Format, msg any) ([]byte, error) {
	w := wire.New(f, capacity(msg))
	switch m := msg.(type) {
	case []*restv2.Job:
		w.BeginList("jobs")
		for _, j := range m {
			Job(w, j)
		}
		w.EndList()
	case *restv2.Job:
		w.BeginXMLOnly("jobs")
		Job(w, m)
		w.EndXMLOnly()
	case []*restv2.DriverSummary:
		w.BeginList("drivers")
		for _, d := range m {
			w.BeginObject("driver")
			writeDriverSummary(w, d, d.Address2)
			writeIncluded(w, d.Status)
			w.EndObject()
		}
		w.EndList()
	case *restv2.DriverDetail:
		w.BeginXMLOnly("drivers")
		writeDriverDetail(w, m)
		w.EndXMLOnly()
	case *restv2.CreateJobImportResponse:
		writeImport(w, m.GetData(), m.GetLinks())
	case *restv2.GetJobImportResponse:
		writeImport(w, m.GetData(), m.GetLinks())
	case *restv2.JobImport:
		// The data object alone: a job_import.completed event's data.
		writeImportData(w, m)
	case *restv2.PostJobsResponse:
		w.BeginObject("jobs")
		writeSummaryCounts(w, m, true)
		writeEntries(w, "ignoredValues", "ignoredValue", m.IgnoredValues, true)
		w.EndObject()
	case *restv2.Event:
		writeEvent(w, m)
	case *restv2.ListEventsResponse:
		writeEventPage(w, m)
	case *restv2.DeleteWebhookResponse, *restv2.DeleteDriverResponse:
		return nil, nil // 204: no body
	case *restv2.RedeliverWebhookEventResponse:
		// 202 without a body: the delivery is queued, there is nothing to show.
		return nil, nil
	case *restv2.BatchSummary:
		w.BeginObject("jobs")
		writeSummaryCounts(w, m, false)
		w.EndObject()
	case proto.Message:
		// A resource whose shape is its message's (walk).
		return walked(f, m)
	default:
		return nil, fmt.Errorf("no REST representation for %T", msg)
	}
	return w.Bytes(), nil
}

// capacity is about how many bytes msg's document takes, so that its
// writer's buffer is allocated once: a retrieved job's grew from 512
// bytes, two allocations of each read where one does.
func capacity(msg any) int {
	switch m := msg.(type) {
	case []*restv2.Job:
		return 1024*len(m) + 64
	case *restv2.Job:
		return jobCapacity(m)
	case []*restv2.DriverSummary:
		return 512*len(m) + 64
	case *restv2.Event:
		return len(m.GetData()) + 256
	case *restv2.ListEventsResponse:
		size := 64
		for _, e := range m.GetData() {
			size += len(e.GetData()) + 160
		}
		return size
	}
	return 512
}

// jobCapacity is room for a job in either format. Its fields but the
// free texts take about 600 bytes in XML, the larger format, whose
// element names come twice and whose rich texts are CDATA sections.
func jobCapacity(j *restv2.Job) int {
	return 640 + len(j.GetReferenceNumber()) + len(j.GetTitle()) + len(j.GetCity()) +
		len(j.GetDescription()) + len(j.GetRequirements())
}

// writeImport writes the wrapped job import: {"data": ..., "links": {"self": ...}}.
func writeImport(w wire.Writer, imp *restv2.JobImport, links *restv2.JobImportLinks) {
	w.BeginObject("jobImport")
	writeImportData(w, imp)
	w.BeginObject("links")
	w.String("self", links.GetSelf())
	w.EndObject()
	w.EndObject()
}

// writeImportData writes an import's data object. The counts of errors and
// ignored values left out follow their lists when set (an event's data).
func writeImportData(w wire.Writer, imp *restv2.JobImport) {
	w.BeginObject("data")
	w.String("id", imp.GetId())
	w.String("requestedAt", imp.GetRequestedAt())
	w.NullableString("completedAt", imp.CompletedAt)
	if r := imp.GetResults(); r == nil {
		w.NullableString("results", nil)
	} else {
		w.BeginObject("results")
		w.Int("added", int64(r.Added))
		w.Int("updated", int64(r.Updated))
		w.Int("unchanged", int64(r.Unchanged))
		w.Int("deleted", int64(r.Deleted))
		w.Int("failed", int64(r.Failed))
		w.Int("processed", int64(r.Processed))
		w.BeginList("errors")
		for _, e := range r.Errors {
			w.BeginObject("error")
			w.Int("index", int64(e.Index))
			w.BeginList("messages")
			for _, m := range e.Messages {
				w.String("message", m)
			}
			w.EndList()
			w.NullableString("referenceNumber", e.ReferenceNumber)
			w.EndObject()
		}
		w.EndList()
		if r.ErrorsOmitted != nil {
			w.Int("errorsOmitted", int64(*r.ErrorsOmitted))
		}
		writeEntries(w, "ignoredValues", "ignoredValue", r.IgnoredValues, true)
		if r.IgnoredValuesOmitted != nil {
			w.Int("ignoredValuesOmitted", int64(*r.IgnoredValuesOmitted))
		}
		w.EndObject()
	}
	w.String("status", imp.GetStatus())
	w.EndObject()
}

// summaryCounts are the fields a post's answer shares with a delete's.
type summaryCounts interface {
	GetUnchanged() int32
	GetUpdated() int32
	GetAdded() int32
	GetDeleted() int32
	GetErrors() int32
	GetErrorMessages() *restv2.ErrorMessages
}

// writeSummaryCounts writes the counts and the four error lists. Post entries
// always carry index, referenceNumber, field, value and message; delete
// entries carry only what names the job asked for.
func writeSummaryCounts(w wire.Writer, s summaryCounts, postEntries bool) {
	w.Int("unchanged", int64(s.GetUnchanged()))
	w.Int("updated", int64(s.GetUpdated()))
	w.Int("added", int64(s.GetAdded()))
	w.Int("deleted", int64(s.GetDeleted()))
	w.Int("errors", int64(s.GetErrors()))
	em := s.GetErrorMessages()
	w.BeginObject("errorMessages")
	for _, l := range []struct {
		name string
		list *restv2.ErrorList
	}{
		{"missingErrors", em.GetMissingErrors()},
		{"invalidErrors", em.GetInvalidErrors()},
		{"duplicationErrors", em.GetDuplicationErrors()},
		{"limitErrors", em.GetLimitErrors()},
	} {
		w.BeginObject(l.name)
		writeEntries(w, "errors", "error", l.list.GetErrors(), postEntries)
		w.EndObject()
	}
	w.EndObject()
}

func writeEntries(w wire.Writer, listName, itemName string, entries []*restv2.BatchEntry, postEntries bool) {
	w.BeginList(listName)
	for _, e := range entries {
		w.BeginObject(itemName)
		if postEntries {
			w.NullableInt("index", int64Of(e.Index))
			w.NullableString("referenceNumber", e.ReferenceNumber)
			w.NullableString("field", e.Field)
			w.NullableString("value", e.Value)
		} else {
			if e.Index != nil {
				w.Int("index", int64(*e.Index))
			}
			if e.Id != nil {
				w.Int("id", *e.Id)
			}
			if e.ReferenceNumber != nil {
				w.String("referenceNumber", *e.ReferenceNumber)
			}
			if e.Value != nil {
				w.String("value", *e.Value)
			}
		}
		w.String("message", e.Message)
		w.EndObject()
	}
	w.EndList()
}

// int64Of widens an optional 32-bit number.
func int64Of(p *int32) *int64 {
	if p == nil {
		return nil
	}
	v := int64(*p)
	return &v
}
