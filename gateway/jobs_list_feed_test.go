package gateway

import (
	"context"
	"fmt"
	"testing"
	"time"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
)

// pagedJobs is a whole list of pages jobs a page, as many pages as asked:
// each page's read reports its start on started and, when hold is set,
// waits after its first jobs until hold is closed.
type pagedJobs struct {
	restv2.UnimplementedJobServiceServer
	pages, perPage int
	started        chan int
	hold           chan struct{}
}

func (p pagedJobs) EachOfWholeListPage(ctx context.Context, token string, each func(*restv2.Job) error) (string, error) {
	page := 0
	if token != "" {
		fmt.Sscan(token, &page)
	}
	p.started <- page
	for i := range p.perPage {
		if i == listBatchJobs+1 && p.hold != nil {
			select {
			case <-p.hold:
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
		if err := each(&restv2.Job{Id: int64(page*p.perPage + i + 1)}); err != nil {
			return "", err
		}
	}
	if page+1 == p.pages {
		return "", nil
	}
	return fmt.Sprint(page + 1), nil
}

// TestListWrittenWhileItsPageIsRead: the writer gets a page's first jobs
// while the rest of the page is still being read.
func TestListWrittenWhileItsPageIsRead(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	jobs := pagedJobs{pages: 1, perPage: 3 * listBatchJobs, started: make(chan int, 10), hold: make(chan struct{})}
	feed := readPages(ctx, jobs, &restv2.ListJobsRequest{}, false, &streamPlace{})
	// The page's read waits, past its first batch, until the writer has
	// that batch: read whole before it is handed on, it never would.
	first, ok := feed.take(ctx)
	if !ok || len(first.jobs) != listBatchJobs || first.jobs[0].GetId() != 1 || first.pageEnd {
		t.Fatalf("the first batch: %d jobs, page end %v, %v (ok %v)", len(first.jobs), first.pageEnd, first.err, ok)
	}
	close(jobs.hold)
	n := len(first.jobs)
	for {
		b, ok := feed.take(ctx)
		if !ok || b.err != nil {
			t.Fatalf("after %d jobs: %v (ok %v)", n, b.err, ok)
		}
		if b.end {
			break
		}
		n += len(b.jobs)
	}
	if n != jobs.perPage {
		t.Errorf("%d jobs written, want %d", n, jobs.perPage)
	}
}

// TestListReadNoFurtherThanTwoPages: while the writer writes nothing, the
// reader reads two pages and waits; each page written lets one more be
// read, and the list ends with all of them, in order.
func TestListReadNoFurtherThanTwoPages(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	jobs := pagedJobs{pages: 5, perPage: 10, started: make(chan int, 10)}
	feed := readPages(ctx, jobs, &restv2.ListJobsRequest{}, false, &streamPlace{})
	for want := range 2 {
		if got := <-jobs.started; got != want {
			t.Fatalf("page %d read, want %d", got, want)
		}
	}
	select {
	case page := <-jobs.started:
		t.Fatalf("page %d read before either of the two before it was written", page)
	case <-time.After(200 * time.Millisecond):
	}
	var next int64 = 1
	for {
		b, ok := feed.take(ctx)
		if !ok || b.err != nil {
			t.Fatalf("at job %d: %v (ok %v)", next, b.err, ok)
		}
		if b.end {
			break
		}
		for _, j := range b.jobs {
			if j.GetId() != next {
				t.Fatalf("job %d written, want %d", j.GetId(), next)
			}
			next++
		}
		if b.pageEnd {
			feed.written()
		}
	}
	if next != int64(jobs.pages*jobs.perPage+1) {
		t.Errorf("%d jobs written, want %d", next-1, jobs.pages*jobs.perPage)
	}
}
