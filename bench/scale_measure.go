package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/truckjobs/jobboard/server/drivers"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/grpc-ecosystem/grpc-gateway/v2/utilities"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/server/store"
)

// pointResult is everything measured at one point of a curve.
type pointResult struct {
	x            int
	loaded       loaded
	applications int64 // in the whole database
	load         string
	drivers      []filterResult
	list, post   stats
	listedJobs   int
}

// filterResult is one drivers.json request measured at one point.
type filterResult struct {
	driverCase
	latency     stats
	header      string // X-Total-Count as answered
	exact       int64  // the count of the matches by another statement
	page, count plan
	pageText    string // the plans as EXPLAIN (ANALYZE, BUFFERS) prints them
	countText   string
}

func (f filterResult) isExact() bool { return f.header == strconv.FormatInt(f.exact, 10) }

// How many sequential requests each filter gets: the p99 of 400 is the
// fifth-slowest request; a filter slow enough to pass the time budget
// stops earlier, with at least scaleMinRequests.
const (
	scaleRequests    = 400
	scaleMinRequests = 100
	scaleBudget      = 20 * time.Second
)

// measurePoint measures every drivers filter of scenario 4, the jobs list
// and a post of 1,000 new jobs for the account.
func measurePoint(ctx context.Context, h *harness, a account, x int) (pointResult, error) {
	p := pointResult{x: x, load: loadAverage()}
	if err := h.store.DB().GetContext(ctx, &p.applications, `SELECT count(*) FROM applications`); err != nil {
		return p, err
	}
	cases, err := driverCases(ctx, h, a)
	if err != nil {
		return p, err
	}
	cases = append(cases, combinationCases(cases)...)
	svc := drivers.New(h.store)
	for _, c := range cases {
		c.query.Set("max", "100")
		f, err := measureFilter(ctx, h, svc, a, c)
		if err != nil {
			return p, fmt.Errorf("%s: %w", c.name, err)
		}
		p.drivers = append(p.drivers, f)
	}
	if p.list, p.listedJobs, err = measureJobsList(ctx, h, a); err != nil {
		return p, err
	}
	if p.post, err = measurePost(ctx, h, a, x); err != nil {
		return p, err
	}
	return p, nil
}

// measureFilter checks the request's total against an independent count,
// times it, and records the plans of the two statements the service runs.
func measureFilter(ctx context.Context, h *harness, svc *drivers.Service, a account, c driverCase) (filterResult, error) {
	r := filterResult{driverCase: c}
	path := "/api/v2.0/drivers.json?" + c.query.Encode()
	filter, err := driverFilter(ctx, svc, c.query)
	if err != nil {
		return r, err
	}
	page, count, err := h.store.DriverListQueries(ctx, a.ID, filter)
	if err != nil {
		return r, err
	}
	if r.exact, err = countMatches(ctx, h, a, filter); err != nil {
		return r, err
	}
	var listed int
	if r.header, listed, err = driversTotal(ctx, h, a, path); err != nil {
		return r, err
	}
	if int64(listed) != min(r.exact, 100) {
		return r, fmt.Errorf("GET %s listed %d drivers of %d matches", path, listed, r.exact)
	}
	var samples []time.Duration
	start := time.Now()
	want, least := scaleRequests, scaleMinRequests
	if h.opts.quick {
		want, least = 30, 30
	}
	for len(samples) < want && (len(samples) < least || time.Since(start) < scaleBudget) {
		took, err := timeOnce(func() error { return nil }, func() error {
			code, body, err := h.do(ctx, a, http.MethodGet, path, nil)
			if err == nil && code != http.StatusOK {
				err = fmt.Errorf("GET %s: %d %.200s", path, code, body)
			}
			return err
		})
		if err != nil {
			return r, err
		}
		samples = append(samples, took)
	}
	r.latency = summarize(samples)
	explains := 5
	if h.opts.quick {
		explains = 2
	}
	if r.page, err = explain(ctx, h, page, explains); err != nil {
		return r, fmt.Errorf("explain page: %w", err)
	}
	if r.count, err = explain(ctx, h, count, explains); err != nil {
		return r, fmt.Errorf("explain count: %w", err)
	}
	if r.pageText, err = explainText(ctx, h, page); err != nil {
		return r, err
	}
	r.countText, err = explainText(ctx, h, count)
	return r, err
}

// driverFilter is the store's filter for a query string, parsed the way
// the gateway and the service parse it.
func driverFilter(ctx context.Context, svc *drivers.Service, q url.Values) (store.DriverFilter, error) {
	req := &restv2.ListDriversRequest{}
	if err := runtime.PopulateQueryParameters(req, q, utilities.NewDoubleArray(nil)); err != nil {
		return store.DriverFilter{}, err
	}
	return svc.DriverFilter(ctx, req)
}

// countMatches counts the filter's matches through the page statement with
// no limit, not through the count statement the service answers the total
// with: the check stays independent of however that count is made.
func countMatches(ctx context.Context, h *harness, a account, f store.DriverFilter) (int64, error) {
	f.Limit, f.Offset = 1<<31-1, 0
	page, _, err := h.store.DriverListQueries(ctx, a.ID, f)
	if err != nil {
		return 0, err
	}
	var n int64
	err = h.store.DB().GetContext(ctx, &n, `SELECT count(*) FROM (`+page.SQL+`) every_match`, page.Args...)
	if err != nil {
		return 0, fmt.Errorf("count the matches: %w", err)
	}
	return n, nil
}

// driversTotal makes the request once and returns its X-Total-Count and the
// number of drivers on the page.
func driversTotal(ctx context.Context, h *harness, a account, path string) (string, int, error) {
	code, body, err := h.doHeader(ctx, a, path)
	if err != nil {
		return "", 0, err
	}
	var drivers []json.RawMessage
	if code.status != http.StatusOK || json.Unmarshal(body, &drivers) != nil {
		return "", 0, fmt.Errorf("GET %s: %d %.300s", path, code.status, body)
	}
	return code.header.Get("X-Total-Count"), len(drivers), nil
}

type answer struct {
	status int
	header http.Header
}

// doHeader is do for a GET whose headers matter.
func (h *harness) doHeader(ctx context.Context, a account, path string) (answer, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.server.httpBase+path, nil)
	if err != nil {
		return answer{}, nil, err
	}
	req.SetBasicAuth(a.APIKey, "")
	resp, err := h.client.Do(req)
	if err != nil {
		return answer{}, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header}, body, err
}

// explainText is the statement's plan as EXPLAIN (ANALYZE, BUFFERS) prints
// it, for the plans file.
func explainText(ctx context.Context, h *harness, q store.Query) (string, error) {
	var lines []string
	err := inPlanSettings(ctx, h, q, func(db sqlx.QueryerContext) error {
		return sqlx.SelectContext(ctx, db, &lines, `EXPLAIN (ANALYZE, BUFFERS) `+q.SQL, q.Args...)
	})
	if err != nil {
		return "", fmt.Errorf("explain: %w", err)
	}
	return strings.Join(lines, "\n"), nil
}

// measureJobsList times GET jobs.json, the account's whole list.
func measureJobsList(ctx context.Context, h *harness, a account) (stats, int, error) {
	listed := 0
	samples, err := repeat(scaleRounds(h, 10), nil, func(int) error {
		code, body, err := h.do(ctx, a, http.MethodGet, "/api/v2.0/jobs.json", nil)
		if err != nil {
			return err
		}
		var jobs []json.RawMessage
		if code != http.StatusOK || json.Unmarshal(body, &jobs) != nil {
			return fmt.Errorf("GET jobs.json: %d %.200s", code, body)
		}
		listed = len(jobs)
		return nil
	})
	return summarize(samples), listed, err
}

// measurePost times posts of 1,000 jobs new to the account; each round's
// jobs are withdrawn, untimed, before the next, so the account's active
// jobs stay those of its data set.
func measurePost(ctx context.Context, h *harness, a account, x int) (stats, error) {
	withdraw := func(int) error {
		_, err := h.store.DB().ExecContext(ctx, `UPDATE jobs SET deleted_at = now()
			WHERE account_id = $1 AND deleted_at IS NULL AND reference_number LIKE 'P%'`, a.ID)
		return err
	}
	var body []byte
	prepare := func(r int) error {
		body = jobsJSON(0, 1000, fmt.Sprintf("P%dX%dR", x, r+1), "Driver")
		return withdraw(r)
	}
	samples, err := repeat(scaleRounds(h, 5), prepare, func(int) error { return h.postJobs(ctx, a, body) })
	if err != nil {
		return stats{}, err
	}
	return summarize(samples), withdraw(0)
}

func scaleRounds(h *harness, full int) int {
	if h.opts.quick {
		return 3
	}
	return full
}
