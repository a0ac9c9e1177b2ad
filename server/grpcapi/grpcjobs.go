package grpcapi

import (
	"context"
	"strconv"

	"github.com/truckjobs/jobboard/server/jobs"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/natural"
)

// This file and the other grpc*.go files are the gRPC API (package
// jobboard.v2): each method converts the natural request into the lenient
// form (package natural), lets the service REST uses too answer it, and
// converts the answer back. Checks only gRPC needs, such as a missing id,
// are made here; every other rule is the core's.

// grpcJobs serves jobboard.v2.JobService over the core JobService.
type grpcJobs struct {
	jobboardv2.UnimplementedJobServiceServer
	core *jobs.Service
}

// JobService is the jobs' adapter alone, for a server of its own (the
// benchmark's bare floor).
func JobService(core *jobs.Service) jobboardv2.JobServiceServer { return &grpcJobs{core: core} }

// requiredID refuses a missing id: 0 is never an id, and answering NotFound
// for it would hide the caller's mistake.
func requiredID(field string, id int64) error {
	if id == 0 {
		return call.InvalidFieldText(field, "0 (unset) is not valid; the field is required")
	}
	return nil
}

func (g *grpcJobs) ListJobs(ctx context.Context, req *jobboardv2.ListJobsRequest) (*jobboardv2.ListJobsResponse, error) {
	page, next, err := g.core.Page(ctx, req.GetPageSize(), req.GetPageToken())
	if err != nil {
		return nil, err
	}
	return &jobboardv2.ListJobsResponse{Jobs: natural.Jobs(page), NextPageToken: next}, nil
}

func (g *grpcJobs) PostJobs(ctx context.Context, req *jobboardv2.PostJobsRequest) (*jobboardv2.PostJobsResponse, error) {
	if err := jobs.CheckPostLength(len(req.GetJobs())); err != nil {
		return nil, err
	}
	inputs := make([]jobs.Input, len(req.GetJobs()))
	for i, in := range req.GetJobs() {
		inputs[i] = jobInput(in)
	}
	r, err := g.core.Post(ctx, inputs, jobs.GRPCNames)
	if err != nil {
		return nil, err
	}
	lists := make([]*jobboardv2.ErrorList, len(r.Problems))
	var errs int32
	for l, list := range r.Problems {
		lists[l] = &jobboardv2.ErrorList{Errors: naturalEntries(list)}
		errs += int32(len(list))
	}
	return &jobboardv2.PostJobsResponse{Added: r.Added, Updated: r.Updated, Unchanged: r.Unchanged, Errors: errs,
		ErrorMessages: &jobboardv2.ErrorMessages{MissingErrors: lists[0], InvalidErrors: lists[1],
			DuplicationErrors: lists[2], LimitErrors: lists[3]},
		IgnoredValues: naturalEntries(r.Ignored)}, nil
}

func (g *grpcJobs) GetJob(ctx context.Context, req *jobboardv2.GetJobRequest) (*jobboardv2.GetJobResponse, error) {
	if err := requiredID("id", req.GetId()); err != nil {
		return nil, err
	}
	j, err := g.core.Job(ctx, req.GetId())
	if err != nil {
		return nil, err
	}
	return &jobboardv2.GetJobResponse{Job: natural.Job(&j)}, nil
}

func (g *grpcJobs) DeleteJob(ctx context.Context, req *jobboardv2.DeleteJobRequest) (*jobboardv2.DeleteJobResponse, error) {
	if err := requiredID("id", req.GetId()); err != nil {
		return nil, err
	}
	resp, err := g.core.DeleteJob(ctx, &restv2.DeleteJobRequest{Id: strconv.FormatInt(req.GetId(), 10)})
	if err != nil {
		return nil, err
	}
	return &jobboardv2.DeleteJobResponse{Summary: natural.Summary(resp.GetSummary())}, nil
}

func (g *grpcJobs) DeleteJobs(ctx context.Context, req *jobboardv2.DeleteJobsRequest) (*jobboardv2.DeleteJobsResponse, error) {
	ids := make([]string, len(req.GetIds()))
	for i, id := range req.GetIds() {
		ids[i] = strconv.FormatInt(id, 10)
	}
	resp, err := g.core.DeleteJobs(ctx, &restv2.DeleteJobsRequest{Ids: ids})
	if err != nil {
		return nil, err
	}
	return &jobboardv2.DeleteJobsResponse{Summary: natural.Summary(resp.GetSummary())}, nil
}

func (g *grpcJobs) DeleteJobByReference(ctx context.Context, req *jobboardv2.DeleteJobByReferenceRequest) (*jobboardv2.DeleteJobByReferenceResponse, error) {
	resp, err := g.core.DeleteJobByReference(ctx, &restv2.DeleteJobByReferenceRequest{ReferenceNumber: req.GetReferenceNumber()})
	if err != nil {
		return nil, err
	}
	return &jobboardv2.DeleteJobByReferenceResponse{Summary: natural.Summary(resp.GetSummary())}, nil
}

func (g *grpcJobs) DeleteJobsByReference(ctx context.Context, req *jobboardv2.DeleteJobsByReferenceRequest) (*jobboardv2.DeleteJobsByReferenceResponse, error) {
	resp, err := g.core.DeleteJobsByReference(ctx, &restv2.DeleteJobsByReferenceRequest{ReferenceNumbers: req.GetReferenceNumbers()})
	if err != nil {
		return nil, err
	}
	return &jobboardv2.DeleteJobsByReferenceResponse{Summary: natural.Summary(resp.GetSummary())}, nil
}

// naturalEntries are a post's entries, already in the gRPC API's words.
func naturalEntries(in []jobs.Entry) []*jobboardv2.BatchEntry {
	out := make([]*jobboardv2.BatchEntry, len(in))
	for i, e := range in {
		out[i] = &jobboardv2.BatchEntry{Index: &e.Index, ReferenceNumber: e.ReferenceNumber, Field: e.Field, Value: e.Value, Message: e.Message}
	}
	return out
}
