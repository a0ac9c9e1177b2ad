package imports

import (
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/server/store"
)

// This file maps an import from the store's own stored form to the API's
// messages, field by field: a change to the messages changes this mapping,
// never what is already stored. The results are made in the stored form
// (jobs.ImportJobs), so they need no mapping the other way.

// resultsMessage is the API's form of stored results.
func resultsMessage(r *store.ImportResults) *restv2.JobImportResults {
	out := &restv2.JobImportResults{
		Added: r.Added, Updated: r.Updated, Unchanged: r.Unchanged, Deleted: r.Deleted,
		Failed: r.Failed, Processed: r.Processed,
	}
	for _, e := range r.Errors {
		out.Errors = append(out.Errors, &restv2.JobImportError{Index: e.Index, Messages: e.Messages, ReferenceNumber: e.ReferenceNumber})
	}
	for _, v := range r.IgnoredValues {
		out.IgnoredValues = append(out.IgnoredValues, &restv2.BatchEntry{Index: v.Index, Id: v.ID,
			ReferenceNumber: v.ReferenceNumber, Field: v.Field, Value: v.Value, Message: v.Message})
	}
	return out
}
