package jobs

import (
	"context"
	"encoding/binary"

	"github.com/truckjobs/jobboard/domain"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/server/call"
)

// wholeListScope is the scope of the whole list's page tokens, which
// never leave the service: the REST list reads its pages in one request.
const wholeListScope = "jobs whole list"

// EachOfWholeListPage reads a page of the whole list of the account's
// active jobs, which the REST jobs list (without page_size) writes as it
// reads: up to maxJobsPage jobs of about jobsPageBytes first, so that the
// writing starts at once, then pages of as many jobs as the page before
// says fill jobsPageBytes (never over weighedPageBytes but for one larger
// job). It hands each job to each, as a message, as its row arrives, so the
// list's writing need not wait for the page's last row, and returns the
// next page's token ("" on the last).
//
// A page weighs every row it takes, kept or not (store.EachJobOfPage), so
// taking the size a page's budget would need for the smallest jobs would
// weigh most of the list's rest again for each page. Planning the pages in
// one pass over the jobs' sizes avoided that, but the pass read every job's
// row once more before the second page could start: 14-23 ms of lists of
// 10,000 jobs that took 64-105 ms, by the statement log (bench scenario 3:
// 88.5 ms with the pass, 67.2 ms without, one after the other). An
// account's jobs are mostly alike in size, so the page before is a good
// guess; when it is wrong, the bytes still end the page.
func (s *Service) EachOfWholeListPage(ctx context.Context, pageToken string, each func(*restv2.Job) error) (string, error) {
	caller, err := call.From(ctx)
	if err != nil {
		return "", err
	}
	at := wholeListPosition{jobs: maxJobsPage}
	bytes := jobsPageBytes
	if pageToken != "" {
		raw, err := s.tokens.Decode(pageToken, caller.AccountID, wholeListScope)
		var ok bool
		if at, ok = decodeWholeListPosition(raw); err != nil || !ok {
			return "", unansweredToken(pageToken)
		}
		bytes = weighedPageBytes
	}
	next := at
	read := 0
	end, err := s.store.EachJobOfPage(ctx, caller.AccountID, at.after, at.jobs, bytes, func(j *domain.Job) error {
		next.after = j.ID
		read++
		return each(jobMessage(j))
	})
	if err != nil {
		return "", call.Internal(ctx, err)
	}
	if !end.More {
		return "", nil
	}
	next.jobs = jobsToFill(read, end.Bytes)
	return s.tokens.Encode(caller.AccountID, wholeListScope, next.encode()), nil
}

// jobsToFill is how many jobs like the read ones, which weighed bytes, fill
// a page of jobsPageBytes: at least one, at most wholeListPage.
func jobsToFill(read int, bytes int64) int {
	if read == 0 || bytes <= 0 {
		return wholeListPage
	}
	n := int64(jobsPageBytes) * int64(read) / bytes
	return int(max(1, min(n, wholeListPage)))
}

// wholeListPosition is where a page of the whole list after the first
// starts (after the job with id after), and how many jobs it takes.
type wholeListPosition struct {
	after int64
	jobs  int
}

// encode writes the position as a token's: after, then jobs, as varints.
func (p wholeListPosition) encode() []byte {
	b := binary.AppendUvarint(nil, uint64(p.after))
	return binary.AppendUvarint(b, uint64(p.jobs))
}

// decodeWholeListPosition reads what encode wrote; false when b is not
// such a position.
func decodeWholeListPosition(b []byte) (wholeListPosition, bool) {
	var values []uint64
	for len(b) > 0 && len(values) < 3 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return wholeListPosition{}, false
		}
		values, b = append(values, v), b[n:]
	}
	if len(values) != 2 || values[0] > 1<<62 || values[1] < 1 || values[1] > wholeListPage {
		return wholeListPosition{}, false
	}
	return wholeListPosition{after: int64(values[0]), jobs: int(values[1])}, true
}
