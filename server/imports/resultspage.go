package imports

import (
	"context"
	"errors"
	"strings"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/store"
)

// ResultsPage is an import whose results hold one page of their errors
// and ignored values, as the gRPC API answers it.
type ResultsPage struct {
	Import *restv2.GetJobImportResponse
	// Next is the token of the following page; "" on the last.
	Next string
	// Errors and IgnoredValues are the whole lists' lengths.
	Errors, IgnoredValues int
}

// GetResultsPage answers the import with a page of its results.errors and
// results.ignoredValues (docs/api.md 7): either list can be tens of
// megabytes, past the 4 MiB a gRPC client takes by default. One token
// walks both; REST's GET and the callback keep them whole.
func (s *JobImportService) GetResultsPage(ctx context.Context, id, pageToken string, pageSize int32) (ResultsPage, error) {
	caller, err := call.From(ctx)
	if err != nil {
		return ResultsPage{}, err
	}
	size, err := call.PageSize(pageSize, MaxResultsPage, MaxResultsPage, "entries of each list")
	if err != nil {
		return ResultsPage{}, err
	}
	// The scope is the import's id as stored: the store takes only the
	// hyphenated hexadecimal form, which it holds in lower case. So a
	// token walks only the lists of the import (and account) it was
	// answered for.
	scope := importResultsScope(strings.ToLower(id))
	at, tokenErr := s.resultsPosition(pageToken, caller.AccountID, scope)
	// Only this page's entries are decoded: the window is where the token
	// says, as many as the page may hold. A token that does not verify
	// reads the first page, and is refused once the import is found.
	resp, lengths, err := s.jobImportWindow(ctx, id,
		store.ResultsWindow{ErrorsFrom: at.errors, IgnoredFrom: at.ignoredValues, Limit: size})
	if err != nil {
		return ResultsPage{}, err
	}
	if tokenErr != nil || !at.within(lengths) {
		return ResultsPage{}, call.InvalidFieldText("page_token", call.Quoted(pageToken)+" is not a next_page_token answered for this import")
	}
	page := ResultsPage{Import: resp, Errors: lengths.Errors, IgnoredValues: lengths.IgnoredValues}
	if r := resp.GetData().GetResults(); r != nil {
		// r holds the window only: its page starts at its first entries.
		errs, ignored := importResultsPage(r, importResultsPosition{}, size, importProtoSizes)
		next := importResultsPosition{errors: at.errors + len(errs), ignoredValues: at.ignoredValues + len(ignored)}
		if next.errors < lengths.Errors || next.ignoredValues < lengths.IgnoredValues {
			page.Next = s.tokens.Encode(caller.AccountID, scope, next.appendPosition(nil))
		}
		r.Errors, r.IgnoredValues = errs, ignored
	}
	return page, nil
}

// resultsPosition is where the page a token asks for starts in an import's
// lists (their starts without a token): a position this service answered
// as a next_page_token for the account and scope.
func (s *JobImportService) resultsPosition(token string, accountID int64, scope string) (importResultsPosition, error) {
	if token == "" {
		return importResultsPosition{}, nil
	}
	p, err := s.tokens.Decode(token, accountID, scope)
	if err != nil {
		return importResultsPosition{}, err
	}
	at, ok := parseResultsPosition(p)
	if !ok || at == (importResultsPosition{}) {
		return importResultsPosition{}, errors.New("not a position")
	}
	return at, nil
}
