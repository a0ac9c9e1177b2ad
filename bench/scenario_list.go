package main

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

func init() { register(3, "GET jobs.json and jobs.xml, 10,000 jobs", listJobsScenario) }

// listJobsScenario times the whole list of an account's 10,000 jobs in
// both formats, against the floor of the same rows selected by the store's
// query from Go, and watches how much the server's memory peaks above its
// resident set while it answers.
func listJobsScenario(ctx context.Context, h *harness) ([]result, error) {
	a := h.accounts[0]
	floor, err := repeat(h.opts.rounds, nil, func(int) error {
		jobs, err := h.store.ListJobs(ctx, a.ID)
		if err == nil && len(jobs) != h.jobsPer {
			err = fmt.Errorf("store listed %d jobs, want %d", len(jobs), h.jobsPer)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	f := summarize(floor)
	get := func(path string) func(int) error {
		return func(int) error {
			code, body, err := h.do(ctx, a, http.MethodGet, path, nil)
			if err == nil && code != 200 {
				err = fmt.Errorf("GET %s: %d %.200s", path, code, body)
			}
			return err
		}
	}
	var rows []result
	var jsonMedian float64
	for _, format := range []string{"json", "xml"} {
		base := h.server.resetPeak()
		samples, err := repeat(h.opts.rounds, nil, get("/api/v2.0/jobs."+format))
		if err != nil {
			return nil, err
		}
		_, peak := h.server.memory()
		s := summarize(samples)
		growth := float64(peak-base) / (1 << 20)
		row := result{
			name:   fmt.Sprintf("GET jobs.%s, %d jobs (%d rounds)", format, h.jobsPer, s.n),
			median: s.median, p99: s.p99,
			note: fmt.Sprintf("server peak memory %.0f MB above its resident set of %.0f MB before the series",
				growth, float64(base)/(1<<20)),
		}
		if format == "json" {
			jsonMedian = float64(s.median)
			row.floor = ms(f.median) + " (store select)"
			row.ratio = float64(s.median) / float64(f.median)
			row.target = "<= 3x floor; memory growth < 100 MB"
			row.pass = row.ratio <= 3 && growth < 100
		} else {
			row.floor = "JSON " + ms(time.Duration(jsonMedian))
			row.ratio = float64(s.median) / jsonMedian
			row.target = "<= 1.3x JSON; memory growth < 100 MB"
			row.pass = row.ratio <= 1.3 && growth < 100
		}
		rows = append(rows, row)
	}
	return rows, nil
}
