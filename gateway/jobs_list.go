package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
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
	// service's choosing, JobService.WholeListPage).
	streamPageSize = 1000
	// flushAt is how much written text is held before it is sent.
	flushAt = 64 << 10
	// listWriteWait is how long a client may take to read each flush.
	listWriteWait = time.Minute
)

// registerJobsList routes GET jobs.json and jobs.xml to the streaming
// list, in place of the generated route that would build the whole answer.
func (g *gateway) registerJobsList(mux *runtime.ServeMux, jobs JobService) error {
	for _, f := range []wire.Format{wire.JSON, wire.XML} {
		if err := mux.HandlePath(http.MethodGet, apiPrefix+"jobs."+f.String(), g.streamJobs(jobs, f)); err != nil {
			return fmt.Errorf("route the jobs list: %w", err)
		}
	}
	return nil
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
		pages := readPages(ctx, jobs, req, onePage, g.keepPlace(w))
		first := <-pages
		if first.err != nil {
			g.writeStatusError(ctx, w, r, first.err)
			return
		}
		w.Header().Set("Content-Type", marshaler{f}.ContentType(nil))
		if next := first.page.GetNextPageToken(); onePage && next != "" {
			setNextLink(ctx, w, url.Values{"page_token": {next}, "page_size": {strconv.Itoa(int(req.GetPageSize()))}})
		}
		out := wire.New(f, flushAt+flushAt/4)
		out.BeginList("jobs")
		for p := first; ; p = <-pages {
			if p.end {
				break
			}
			if p.err != nil || p.page == nil {
				// Part of the list is sent with a 200: all that can still
				// tell the client is a body that ends before the list does.
				slog.ErrorContext(ctx, "jobs list cut short", "error", p.err)
				panic(http.ErrAbortHandler)
			}
			for _, j := range p.page.GetJobs() {
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
		}
		out.EndList()
		_, _ = w.Write(out.Bytes())
	}
}

// pageRead is one page of a list, or why it could not be read, or (end)
// the news that the list is complete.
type pageRead struct {
	page *restv2.ListJobsResponse
	err  error
	end  bool
}

// readPages reads the pages of a list ahead of the writer: the next page is
// read from the database while the current one is written, and no further
// (two pages in memory at most). The channel ends with an end marker or an
// error; reading stops, and the channel closes, when ctx ends. The
// request's place is handed on with each page, as the writer may wait on
// the client, and taken again for the next read.
func readPages(ctx context.Context, jobs JobService, req *restv2.ListJobsRequest, onePage bool, place *streamPlace) <-chan pageRead {
	pages := make(chan pageRead)
	go func() {
		defer close(pages)
		defer func() { place.release() }() // when ctx ended first
		send := func(p pageRead) bool {
			select {
			case pages <- p:
				return true
			case <-ctx.Done():
				return false
			}
		}
		for {
			var page *restv2.ListJobsResponse
			var err error
			if onePage {
				page, err = jobs.ListJobs(ctx, req)
			} else {
				page, err = jobs.WholeListPage(ctx, req.GetPageToken())
			}
			last := err != nil || onePage || page.GetNextPageToken() == ""
			place.handOn(last)
			if !send(pageRead{page: page, err: err}) || err != nil {
				return
			}
			if last {
				send(pageRead{end: true})
				return
			}
			if err := place.retake(); err != nil {
				send(pageRead{err: err})
				return
			}
			req = &restv2.ListJobsRequest{PageSize: req.GetPageSize(), PageToken: page.GetNextPageToken()}
		}
	}()
	return pages
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
