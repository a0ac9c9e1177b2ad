package gateway

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/truckjobs/jobboard/gateway/render"
	"github.com/truckjobs/jobboard/gateway/wire"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
)

// Streaming the jobs list (docs/api.md, Limits against abuse). The v2.0 answer is the
// whole list in one document; it is written while it is read, a page of
// jobs at a time, so the memory one list takes does not grow with the
// number or the size of the account's jobs.
const (
	// streamPageSize is the most jobs a page of the REST jobs list takes
	// when page_size asks for pages (the whole list reads pages of the
	// service's choosing, JobService.EachOfWholeListPage).
	streamPageSize = 1000
	// flushAt is how much written text is held before it is sent.
	flushAt = 64 << 10
	// listWriteWait is how long a client may take to read each flush.
	listWriteWait = time.Minute
)

// registerJobsList routes GET jobs.json and jobs.xml to the streaming
// list, in place of the generated route that would build the whole answer.
func (g *gateway) registerJobsList(mux *runtime.ServeMux, jobs JobService) error {
	return routeGETInEachFormat(mux, "jobs.{format}", func(f wire.Format) runtime.HandlerFunc { return g.streamJobs(jobs, f) })
}

// streamJobs answers a jobs list. With page_size (or page_token) in the
// query it answers one page, ListJobs' paging over REST, with a Link to
// the next; without, the whole list, as the v2.0 API does.
func (g *gateway) streamJobs(jobs JobService, f wire.Format) runtime.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, _ map[string]string) {
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		req, onePage, apiErr := listRequest(r.URL.Query())
		if apiErr != nil {
			writeError(w, r, *apiErr)
			return
		}
		// The list is read from the database as it is written: the place
		// is held for each page read, not while the client takes the pages
		// written before.
		feed := readPages(ctx, jobs, req, onePage, g.keepPlace(w))
		first, _ := feed.take(ctx)
		if first.err != nil {
			g.writeStatusError(ctx, w, r, first.err)
			return
		}
		w.Header().Set("Content-Type", marshaler{f}.ContentType(nil))
		if onePage && first.next != "" {
			setNextLink(ctx, w, url.Values{"page_token": {first.next}, "page_size": {strconv.Itoa(int(req.GetPageSize()))}})
		}
		out := wire.New(f, flushAt+flushAt/4)
		out.BeginList("jobs")
		for b, ok := first, true; !b.end; b, ok = feed.take(ctx) {
			if !ok || b.err != nil {
				// Part of the list is sent with a 200: all that can still
				// tell the client is a body that ends before the list does.
				slog.ErrorContext(ctx, "jobs list cut short", "error", cmp.Or(b.err, ctx.Err()))
				panic(http.ErrAbortHandler)
			}
			for _, j := range b.jobs {
				render.Job(out, j)
				if out.Buffered() >= flushAt {
					// The server's write timeout bounds a whole answer;
					// a list that keeps flowing gets more time.
					_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(listWriteWait))
					if err := out.Flush(w); err != nil {
						return // the client went away
					}
				}
			}
			if b.pageEnd {
				feed.written()
			}
		}
		out.EndList()
		_, _ = w.Write(out.Bytes())
	}
}

// listBatch is some of the jobs of a page of a list, in order, or why the
// page could not be read, or (end) the news that the list is complete. The
// last batch of each page says so (pageEnd), with the next page's token.
type listBatch struct {
	jobs    []*restv2.Job
	pageEnd bool
	next    string
	err     error
	end     bool
}

// listBatchJobs is how many jobs a batch hands over: the writer starts on
// a page's first jobs while the rest are read.
const listBatchJobs = 256

// listFeed carries a list's batches from its reader to its writer. The
// reader never waits to put one: a page's read, which holds a database
// connection and the request's place, is never held up by a slow client.
// What it holds is bounded by the pages instead: the reader starts a page
// only once the writer has written all but the one before (two pages in
// memory at most).
type listFeed struct {
	mu      sync.Mutex
	batches []listBatch
	ready   chan struct{} // a batch was put: cap 1
	pages   chan struct{} // a page was written: cap 2
}

func newListFeed() *listFeed {
	return &listFeed{ready: make(chan struct{}, 1), pages: make(chan struct{}, 2)}
}

// put hands b to the writer.
func (f *listFeed) put(b listBatch) {
	f.mu.Lock()
	f.batches = append(f.batches, b)
	f.mu.Unlock()
	select {
	case f.ready <- struct{}{}:
	default: // already signalled
	}
}

// take returns the next batch, waiting for it; false when ctx ended first.
func (f *listFeed) take(ctx context.Context) (listBatch, bool) {
	for {
		f.mu.Lock()
		if len(f.batches) > 0 {
			b := f.batches[0]
			f.batches[0] = listBatch{} // the jobs go with the writer
			f.batches = f.batches[1:]
			f.mu.Unlock()
			return b, true
		}
		f.mu.Unlock()
		select {
		case <-f.ready:
		case <-ctx.Done():
			return listBatch{}, false
		}
	}
}

// written tells the reader that the writer has written a page.
func (f *listFeed) written() {
	select {
	case f.pages <- struct{}{}:
	default: // cannot happen: at most two pages are put before one is written
	}
}

// readPages reads the pages of a list ahead of the writer, each handed on
// in batches as its rows arrive: the next page is read while the current
// one is written, and no further. The feed ends with an end marker or an
// error; reading stops when ctx ends. The request's place is handed on
// after each page's read, as the writer may wait on the client, and taken
// again for the next read.
func readPages(ctx context.Context, jobs JobService, req *restv2.ListJobsRequest, onePage bool, place *streamPlace) *listFeed {
	feed := newListFeed()
	go func() {
		defer func() { place.release() }() // when ctx ended first
		unwritten := 0                     // pages put, not yet written
		token := req.GetPageToken()
		for {
			var batch []*restv2.Job
			var next string
			var err error
			if onePage {
				var page *restv2.ListJobsResponse
				if page, err = jobs.ListJobs(ctx, &restv2.ListJobsRequest{PageSize: req.GetPageSize(), PageToken: token}); err == nil {
					batch, next = page.GetJobs(), page.GetNextPageToken()
				}
			} else {
				next, err = jobs.EachOfWholeListPage(ctx, token, func(j *restv2.Job) error {
					if batch = append(batch, j); len(batch) == listBatchJobs {
						feed.put(listBatch{jobs: batch})
						batch = make([]*restv2.Job, 0, listBatchJobs)
					}
					return ctx.Err()
				})
			}
			last := err != nil || onePage || next == ""
			place.handOn(last)
			if err != nil {
				feed.put(listBatch{err: err})
				return
			}
			feed.put(listBatch{jobs: batch, pageEnd: true, next: next})
			unwritten++
			if last {
				feed.put(listBatch{end: true})
				return
			}
			// Waiting on the writer is waiting on the client: done before
			// the place is taken again.
			if unwritten == 2 {
				select {
				case <-feed.pages:
					unwritten--
				case <-ctx.Done():
					return
				}
			}
			if err := place.retake(); err != nil {
				feed.put(listBatch{err: err})
				return
			}
			token = next
		}
	}()
	return feed
}

// jobsListSpellings are the paging parameters of a REST jobs list, each by
// the name the OpenAPI document and the Link header use (page_size) and
// by the lowerCamel one gRPC callers know (pageSize), which is read too.
var jobsListSpellings = [][2]string{{"page_size", "pageSize"}, {"page_token", "pageToken"}}

// jobsListOtherSpellings are the lowerCamel names of jobsListSpellings,
// which the jobs list's route reads beside its request's fields.
// otherSpellings are the query parameters a route reads beyond its request
// message's fields, by rpc.
var otherSpellings = map[protoreflect.FullName][]string{
	"jobboard.rest.v2.JobService.ListJobs": jobsListOtherSpellings(),
}

func jobsListOtherSpellings() []string {
	var names []string
	for _, s := range jobsListSpellings {
		names = append(names, s[1])
	}
	return names
}

// listRequest reads the optional paging of a REST jobs list.
func listRequest(q url.Values) (req *restv2.ListJobsRequest, onePage bool, apiErr *apiError) {
	for _, alias := range jobsListSpellings {
		// A parameter given twice leaves the meant value unknown: refused
		// in the words the other lists' generated query parsing uses.
		for _, name := range alias {
			if values := q[name]; len(values) > 1 {
				return nil, false, &apiError{http.StatusBadRequest, "INVALID_ARGUMENT",
					fmt.Sprintf("too many values for field %q: %s", name, strings.Join(values, ", "))}
			}
		}
		if !q.Has(alias[0]) && q.Has(alias[1]) {
			q.Set(alias[0], q.Get(alias[1]))
		}
	}
	req = &restv2.ListJobsRequest{PageSize: streamPageSize, PageToken: q.Get("page_token")}
	if !q.Has("page_size") && !q.Has("page_token") {
		return req, false, nil
	}
	if raw := q.Get("page_size"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > streamPageSize {
			return nil, false, &apiError{http.StatusBadRequest, "INVALID_ARGUMENT",
				fmt.Sprintf("page_size: %q is not a number of jobs from 1 to %d", raw, streamPageSize)}
		}
		req.PageSize = int32(n)
	}
	return req, true, nil
}

// setNextLink sets a Link header with rel="next": the URL called, with
// the given query parameters replaced.
func setNextLink(ctx context.Context, w http.ResponseWriter, set url.Values) {
	u, ok := ctx.Value(requestURLKey{}).(*url.URL)
	if !ok {
		return
	}
	next := *u
	q := next.Query()
	for k, v := range set {
		q[k] = v
	}
	next.RawQuery = q.Encode()
	w.Header().Set("Link", fmt.Sprintf("<%s>; rel=\"next\"", next.String()))
}
