package grpcapi

import (
	"context"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/imports"
	"github.com/truckjobs/jobboard/server/natural"
)

// grpcImports serves jobboard.v2.JobImportService over the core
// JobImportService. What is stored is the lenient form, as for REST.
type grpcImports struct {
	jobboardv2.UnimplementedJobImportServiceServer
	core *imports.JobImportService
}

// JobImportService is the imports' adapter alone, for a caller in the
// same process.
func JobImportService(core *imports.JobImportService) jobboardv2.JobImportServiceServer {
	return &grpcImports{core: core}
}

func (g *grpcImports) CreateJobImport(ctx context.Context, req *jobboardv2.CreateJobImportRequest) (*jobboardv2.CreateJobImportResponse, error) {
	resp, err := g.core.CreateJobImport(ctx, natural.CreateJobImportRequest(req))
	if err != nil {
		return nil, err
	}
	return &jobboardv2.CreateJobImportResponse{Data: natural.JobImport(resp.GetData()), Links: natural.JobImportLinks(resp.GetLinks())}, nil
}

// GetJobImport answers the import with a page of its results.errors and
// results.ignoredValues (docs/api.md 7): either list can be tens of
// megabytes, past the 4 MiB a client takes by default. One token walks
// both; REST's GET and the callback keep them whole.
func (g *grpcImports) GetJobImport(ctx context.Context, req *jobboardv2.GetJobImportRequest) (*jobboardv2.GetJobImportResponse, error) {
	if req.GetId() == "" {
		return nil, call.InvalidFieldText("id", `"" (unset) is not valid; the field is required`)
	}
	page, err := g.core.GetResultsPage(ctx, req.GetId(), req.GetPageToken(), req.GetPageSize())
	if err != nil {
		return nil, err
	}
	return &jobboardv2.GetJobImportResponse{Data: natural.JobImport(page.Import.GetData()),
		Links: natural.JobImportLinks(page.Import.GetLinks()), NextPageToken: page.Next,
		TotalSize: int32(page.Errors), IgnoredValuesTotalSize: int32(page.IgnoredValues)}, nil
}
