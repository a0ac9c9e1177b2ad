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

// GetJobImport answers the import with a page of its results.errors
// (contract §10): the whole list can be tens of megabytes, past the 4 MiB
// a client takes by default. REST's GET and the callback keep it whole.
func (g *grpcImports) GetJobImport(ctx context.Context, req *jobboardv2.GetJobImportRequest) (*jobboardv2.GetJobImportResponse, error) {
	if req.GetId() == "" {
		return nil, invalidFieldText("id", `"" (unset) is not valid; the field is required`)
	}
	caller, err := callerFrom(ctx)
	if err != nil {
		return nil, err
	}
	size, err := pageSize(req.GetPageSize(), maxImportErrorsPage, maxImportErrorsPage, "errors entries")
	if err != nil {
		return nil, err
	}
	resp, err := g.core.GetJobImport(ctx, &restv2.GetJobImportRequest{Id: req.GetId()})
	if err != nil {
		return nil, err
	}
	imp := resp.GetData()
	errs := imp.GetResults().GetErrors()
	// The scope is the import's own id as stored, so a token walks only
	// the errors of the import (and account) it was answered for.
	scope := importErrorsScope(imp.GetId())
	offset, err := g.errorsOffset(req.GetPageToken(), caller.AccountID, scope, len(errs))
	if err != nil {
		return nil, err
	}
	out := &jobboardv2.GetJobImportResponse{Links: natural.JobImportLinks(resp.GetLinks()), TotalSize: int32(len(errs))}
	if r := imp.GetResults(); r != nil {
		r.Errors = importErrorsPage(errs, offset, size, importErrorProtoSize)
		if next := offset + len(r.Errors); next < len(errs) {
			out.NextPageToken = g.core.tokens.EncodeID(caller.AccountID, scope, int64(next))
		}
	}
	out.Data = natural.JobImport(imp)
	return out, nil
}

// errorsOffset is where the page a token asks for starts in an import's
// errors (0 without a token): a position this service answered as a
// next_page_token for the account and scope, within the errors' count.
func (g *grpcImports) errorsOffset(token string, accountID int64, scope string, count int) (int, error) {
	if token == "" {
		return 0, nil
	}
	offset, err := g.core.tokens.DecodeID(token, accountID, scope)
	if err != nil || offset <= 0 || offset >= int64(count) {
		return 0, invalidFieldText("page_token", quoted(token)+" is not a next_page_token answered for this import")
	}
	return int(offset), nil
}
