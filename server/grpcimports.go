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

func (g *grpcImports) GetJobImport(ctx context.Context, req *jobboardv2.GetJobImportRequest) (*jobboardv2.GetJobImportResponse, error) {
	if req.GetId() == "" {
		return nil, invalidFieldText("id", `"" (unset) is not valid; the field is required`)
	}
	resp, err := g.core.GetJobImport(ctx, &restv2.GetJobImportRequest{Id: req.GetId()})
	if err != nil {
		return nil, err
	}
	return &jobboardv2.GetJobImportResponse{Data: natural.JobImport(resp.GetData()), Links: natural.JobImportLinks(resp.GetLinks())}, nil
}
