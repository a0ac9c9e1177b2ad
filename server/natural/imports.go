package natural

import (
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
)

// CreateJobImportRequest is a natural import request in the lenient form.
func CreateJobImportRequest(r *jobboardv2.CreateJobImportRequest) *restv2.CreateJobImportRequest {
	return &restv2.CreateJobImportRequest{Jobs: JobTexts(r.GetJobs()), CallbackUrl: r.CallbackUrl, DeleteJobs: r.GetDeleteJobs()}
}

// JobImport converts an import as the core answers it. Its times are in the
// REST form, UTC with six fractional digits, which RFC 3339 reads exactly.
func JobImport(imp *restv2.JobImport) *jobboardv2.JobImport {
	if imp == nil {
		return nil
	}
	out := &jobboardv2.JobImport{Id: imp.GetId(), RequestedAt: timestamp(imp.GetRequestedAt()),
		Results: JobImportResults(imp.Results)}
	out.Status, _ = JobImportStatuses.Value(imp.GetStatus())
	if imp.CompletedAt != nil {
		out.CompletedAt = timestamp(imp.GetCompletedAt())
	}
	return out
}

// JobImportResults converts what an import did.
func JobImportResults(r *restv2.JobImportResults) *jobboardv2.JobImportResults {
	if r == nil {
		return nil
	}
	out := &jobboardv2.JobImportResults{Added: r.Added, Updated: r.Updated, Unchanged: r.Unchanged,
		Deleted: r.Deleted, Failed: r.Failed, Processed: r.Processed, IgnoredValues: Entries(r.IgnoredValues),
		Errors: make([]*jobboardv2.JobImportError, len(r.Errors))}
	for i, e := range r.Errors {
		out.Errors[i] = &jobboardv2.JobImportError{Index: e.Index, Messages: e.Messages, ReferenceNumber: e.ReferenceNumber}
	}
	return out
}

// JobImportLinks converts an import's addresses.
func JobImportLinks(l *restv2.JobImportLinks) *jobboardv2.JobImportLinks {
	if l == nil {
		return nil
	}
	return &jobboardv2.JobImportLinks{Self: l.Self}
}

// timestamp reads a time the core wrote in RFC 3339; text that is not one
// (never written) is left unset rather than shown as the epoch.
func timestamp(s string) *timestamppb.Timestamp {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return nil
	}
	return timestamppb.New(t)
}
