package jobs

import (
	"context"
	"encoding/binary"
	"math"

	"github.com/truckjobs/jobboard/domain"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/server/call"
)

// wholeListScope is the scope of the whole list's page tokens, which
// never leave the service: the REST list reads its pages in one request.
const wholeListScope = "jobs whole list"

// EachOfWholeListPage reads a page of the whole list of the account's
// active jobs, which the REST jobs list (without page_size) writes as it
// reads: up to wholeListPage jobs of about jobsPageBytes (never over
// plannedPageBytes but for one larger job). It hands each job to each, as
// a message, as its row arrives, so the list's writing need not wait for
// the page's last row, and returns the next page's token ("" on the
// last).
//
// A page that weighs its own jobs by reading on until they pass its size
// weighs every job after it too, so the list is planned once: the first
// page weighs its own, ListJobs' largest, so that the writing starts at
// once and a list of no more is read in one query; the second plans the
// pages of the rest (store.JobPageCuts), and each page then weighs only
// the jobs of its planned range.
func (s *Service) EachOfWholeListPage(ctx context.Context, pageToken string, each func(*restv2.Job) error) (string, error) {
	caller, err := call.From(ctx)
	if err != nil {
		return "", err
	}
	at := wholeListPosition{mode: firstPage}
	if pageToken != "" {
		raw, err := s.tokens.Decode(pageToken, caller.AccountID, wholeListScope)
		var ok bool
		if at, ok = decodeWholeListPosition(raw); err != nil || !ok {
			return "", unansweredToken(pageToken)
		}
	}
	next, err := s.eachOfWholeListPage(ctx, caller.AccountID, at, func(j *domain.Job) error { return each(jobMessage(j)) })
	if err != nil {
		return "", call.Internal(ctx, err)
	}
	if next.mode == listEnds {
		return "", nil
	}
	return s.tokens.Encode(caller.AccountID, wholeListScope, next.encode()), nil
}

// eachOfWholeListPage reads the page at and returns the position of the
// next.
func (s *Service) eachOfWholeListPage(ctx context.Context, accountID int64, at wholeListPosition, each func(*domain.Job) error) (wholeListPosition, error) {
	if at.mode == planNext {
		cuts, whole, err := s.store.JobPageCuts(ctx, accountID, at.after, wholeListPage, jobsPageBytes, wholeListPlanJobs)
		if err != nil {
			return at, err
		}
		at = wholeListPosition{after: at.after, cuts: cuts, mode: planned}
		if !whole {
			at.mode = plannedThenWeighed
		}
	}
	if at.mode == planned && len(at.cuts) == 0 {
		return wholeListPosition{mode: listEnds}, nil // nothing was left to plan
	}
	// The first page, a planned range (which may take more than one page),
	// or, past a plan that stopped short, a page of the rest.
	size, bytes, through := wholeListPage, jobsPageBytes, int64(math.MaxInt64)
	next := at
	switch {
	case at.mode == firstPage:
		size, next.mode = maxJobsPage, planNext
	case len(at.cuts) > 0:
		// A planned range holds about jobsPageBytes: less than that and
		// the job that passes it. Weighed with a quarter more, it is one
		// page unless that job passes a quarter of the size, or a post
		// grew the range's jobs since the plan.
		bytes, through = plannedPageBytes, at.cuts[0]
	}
	more, err := s.store.EachJobOfPageThrough(ctx, accountID, at.after, through, size, bytes, func(j *domain.Job) error {
		next.after = j.ID
		return each(j)
	})
	switch {
	case more:
		// The page goes on from the last job read.
	case len(at.cuts) > 0:
		next.after, next.cuts = at.cuts[0], at.cuts[1:]
		if len(next.cuts) == 0 && next.mode == planned {
			next.mode = listEnds
		}
	default:
		next.mode = listEnds
	}
	return next, err
}

// wholeListPosition is where a page of the whole list starts (after the
// job with id after), and how it is read (mode); a planned page ends at the
// first of cuts, the last id of each planned page.
type wholeListPosition struct {
	after int64
	cuts  []int64
	mode  wholeListMode
}

// wholeListMode says how the pages from a position are read.
type wholeListMode uint8

const (
	// firstPage: the page weighs its own jobs, at most maxJobsPage.
	firstPage wholeListMode = iota
	// planNext: the page plans the rest of the list, then reads its first
	// planned page.
	planNext
	// planned: the planned pages reach the list's end.
	planned
	// plannedThenWeighed: the plan stopped short of the list's end; the
	// pages after it weigh their own jobs.
	plannedThenWeighed
	// listEnds: no page follows.
	listEnds
)

// encode writes the position as a token's: after, the mode, then each cut
// as its distance from the one before, all varints.
func (p wholeListPosition) encode() []byte {
	b := binary.AppendUvarint(nil, uint64(p.after))
	b = binary.AppendUvarint(b, uint64(p.mode))
	prev := p.after
	for _, c := range p.cuts {
		b = binary.AppendUvarint(b, uint64(c-prev))
		prev = c
	}
	return b
}

// decodeWholeListPosition reads what encode wrote; false when b is not
// such a position (a mode of pages to come, cuts that rise).
func decodeWholeListPosition(b []byte) (wholeListPosition, bool) {
	var values []uint64
	for len(b) > 0 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return wholeListPosition{}, false
		}
		values, b = append(values, v), b[n:]
	}
	if len(values) < 2 || values[0] > 1<<62 || values[1] >= uint64(listEnds) {
		return wholeListPosition{}, false
	}
	p := wholeListPosition{after: int64(values[0]), mode: wholeListMode(values[1])}
	prev := p.after
	for _, d := range values[2:] {
		if d == 0 || d > 1<<62-uint64(prev) {
			return wholeListPosition{}, false
		}
		prev += int64(d)
		p.cuts = append(p.cuts, prev)
	}
	return p, true
}
