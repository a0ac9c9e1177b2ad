package server

import (
	"context"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/server/natural"
)

// grpcImports serves jobboard.v2.JobImportService over the core
// JobImportService. What is stored is the lenient form, as for REST.
type grpcImports struct {
	jobboardv2.UnimplementedJobImportServiceServer
	core *JobImportService
}

func (g *grpcImports) CreateJobImport(ctx context.Context, req *jobboardv2.CreateJobImportRequest) (*jobboardv2.CreateJobImportResponse, error) {
	resp, err := g.core.CreateJobImport(ctx, natural.CreateJobImportRequest(req))
	if err != nil {
		return nil, err
	}
	return &jobboardv2.CreateJobImportResponse{Data: natural.JobImport(resp.GetData()), Links: natural.JobImportLinks(resp.GetLinks())}, nil
}

// GetJobImport answers the import with a page of its results.errors and
// results.ignoredValues (contract §10): either list can be tens of
// megabytes, past the 4 MiB a client takes by default. One token walks
// both; REST's GET and the callback keep them whole.
func (g *grpcImports) GetJobImport(ctx context.Context, req *jobboardv2.GetJobImportRequest) (*jobboardv2.GetJobImportResponse, error) {
	if req.GetId() == "" {
		return nil, invalidFieldText("id", `"" (unset) is not valid; the field is required`)
	}
	caller, err := callerFrom(ctx)
	if err != nil {
		return nil, err
	}
	size, err := pageSize(req.GetPageSize(), maxImportResultsPage, maxImportResultsPage, "entries of each list")
	if err != nil {
		return nil, err
	}
	resp, err := g.core.GetJobImport(ctx, &restv2.GetJobImportRequest{Id: req.GetId()})
	if err != nil {
		return nil, err
	}
	imp := resp.GetData()
	r := imp.GetResults()
	// The scope is the import's own id as stored, so a token walks only
	// the lists of the import (and account) it was answered for.
	scope := importResultsScope(imp.GetId())
	at, err := g.resultsPosition(req.GetPageToken(), caller.AccountID, scope, r)
	if err != nil {
		return nil, err
	}
	out := &jobboardv2.GetJobImportResponse{Links: natural.JobImportLinks(resp.GetLinks()),
		TotalSize: int32(len(r.GetErrors())), IgnoredValuesTotalSize: int32(len(r.GetIgnoredValues()))}
	if r != nil {
		errs, ignored := importResultsPage(r, at, size, importProtoSizes)
		next := importResultsPosition{errors: at.errors + len(errs), ignoredValues: at.ignoredValues + len(ignored)}
		if next.errors < len(r.Errors) || next.ignoredValues < len(r.IgnoredValues) {
			out.NextPageToken = g.core.tokens.Encode(caller.AccountID, scope, next.appendPosition(nil))
		}
		r.Errors, r.IgnoredValues = errs, ignored
	}
	out.Data = natural.JobImport(imp)
	return out, nil
}

// resultsPosition is where the page a token asks for starts in an import's
// lists (their starts without a token): a position this service answered
// as a next_page_token for the account and scope, within the lists, with
// entries left in one of them.
func (g *grpcImports) resultsPosition(token string, accountID int64, scope string, r *restv2.JobImportResults) (importResultsPosition, error) {
	if token == "" {
		return importResultsPosition{}, nil
	}
	p, err := g.core.tokens.Decode(token, accountID, scope)
	at, ok := parseResultsPosition(p)
	errs, ignored := len(r.GetErrors()), len(r.GetIgnoredValues())
	if err != nil || !ok || at.errors > errs || at.ignoredValues > ignored ||
		(at.errors == errs && at.ignoredValues == ignored) || at == (importResultsPosition{}) {
		return importResultsPosition{}, invalidFieldText("page_token", quoted(token)+" is not a next_page_token answered for this import")
	}
	return at, nil
}
