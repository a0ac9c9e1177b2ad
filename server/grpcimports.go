package server

import (
	"context"
	"errors"
	"strings"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/natural"
	"github.com/truckjobs/jobboard/server/store"
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
// results.ignoredValues (docs/api.md 7): either list can be tens of
// megabytes, past the 4 MiB a client takes by default. One token walks
// both; REST's GET and the callback keep them whole.
func (g *grpcImports) GetJobImport(ctx context.Context, req *jobboardv2.GetJobImportRequest) (*jobboardv2.GetJobImportResponse, error) {
	if req.GetId() == "" {
		return nil, call.InvalidFieldText("id", `"" (unset) is not valid; the field is required`)
	}
	caller, err := call.From(ctx)
	if err != nil {
		return nil, err
	}
	size, err := call.PageSize(req.GetPageSize(), maxImportResultsPage, maxImportResultsPage, "entries of each list")
	if err != nil {
		return nil, err
	}
	// The scope is the import's id as stored: the store takes only the
	// hyphenated hexadecimal form, which it holds in lower case. So a
	// token walks only the lists of the import (and account) it was
	// answered for.
	scope := importResultsScope(strings.ToLower(req.GetId()))
	at, tokenErr := g.resultsPosition(req.GetPageToken(), caller.AccountID, scope)
	// Only this page's entries are decoded: the window is where the token
	// says, as many as the page may hold. A token that does not verify
	// reads the first page, and is refused once the import is found.
	resp, lengths, err := g.core.jobImportWindow(ctx, req.GetId(),
		store.ResultsWindow{ErrorsFrom: at.errors, IgnoredFrom: at.ignoredValues, Limit: size})
	if err != nil {
		return nil, err
	}
	if tokenErr != nil || !at.within(lengths) {
		return nil, call.InvalidFieldText("page_token", call.Quoted(req.GetPageToken())+" is not a next_page_token answered for this import")
	}
	imp := resp.GetData()
	out := &jobboardv2.GetJobImportResponse{Links: natural.JobImportLinks(resp.GetLinks()),
		TotalSize: int32(lengths.Errors), IgnoredValuesTotalSize: int32(lengths.IgnoredValues)}
	if r := imp.GetResults(); r != nil {
		// r holds the window only: its page starts at its first entries.
		errs, ignored := importResultsPage(r, importResultsPosition{}, size, importProtoSizes)
		next := importResultsPosition{errors: at.errors + len(errs), ignoredValues: at.ignoredValues + len(ignored)}
		if next.errors < lengths.Errors || next.ignoredValues < lengths.IgnoredValues {
			out.NextPageToken = g.core.tokens.Encode(caller.AccountID, scope, next.appendPosition(nil))
		}
		r.Errors, r.IgnoredValues = errs, ignored
	}
	out.Data = natural.JobImport(imp)
	return out, nil
}

// resultsPosition is where the page a token asks for starts in an import's
// lists (their starts without a token): a position this service answered
// as a next_page_token for the account and scope.
func (g *grpcImports) resultsPosition(token string, accountID int64, scope string) (importResultsPosition, error) {
	if token == "" {
		return importResultsPosition{}, nil
	}
	p, err := g.core.tokens.Decode(token, accountID, scope)
	if err != nil {
		return importResultsPosition{}, err
	}
	at, ok := parseResultsPosition(p)
	if !ok || at == (importResultsPosition{}) {
		return importResultsPosition{}, errors.New("not a position")
	}
	return at, nil
}
