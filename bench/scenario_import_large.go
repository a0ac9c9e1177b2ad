package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// largeImportJobs is the most jobs an import may list (docs/api.md, Job
// imports). An account holds at most 10,000 active jobs, so an import of
// that many new jobs adds 10,000 and refuses the rest over the limit:
// every job is still read, stored, validated and answered.
const (
	largeImportJobs = 50_000
	maxActiveJobs   = 10_000
)

// largeImport times an import of 50,000 new jobs from the POST to
// "complete" against the same jobs sent as fifty posts of 1,000, and
// measures the server's peak memory above its resident set before the
// import. Each import runs on a server started for it: a server that has
// already served other scenarios keeps freed heap in its resident set,
// which an import would reuse without growing the peak.
func largeImport(ctx context.Context, h *harness) (result, error) {
	a, err := h.newAccount(ctx, "Bench Large Importer")
	if err != nil {
		return result{}, err
	}
	rounds := max(1, h.opts.rounds/5)
	withdraw := func(int) error { return h.withdrawAll(ctx, a) }
	posts, err := repeat(rounds, withdraw, func(r int) error {
		for start := 0; start < largeImportJobs; start += 1000 {
			body := jobsJSON(start, 1000, fmt.Sprintf("L%dR", r+1), "Driver")
			if err := h.postJobsOverLimit(ctx, a, body, max(0, start+1000-maxActiveJobs)-max(0, start-maxActiveJobs)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return result{}, err
	}
	var imports []time.Duration
	var worst memoryGrowth
	var bodySize int
	// The harness's server works the same import queue: left running, it
	// could take an import from the server started for it, whose memory
	// and CPU profile then missed the import's work (the profile of the
	// 2026-11-27T094314Z report holds none of it).
	err = h.withServerStopped(ctx, func() error {
		for r := range rounds {
			// The posts and the last round left the active-job maximum
			// reached: the warm-up import could add nothing.
			if err := h.withdrawAll(ctx, a); err != nil {
				return err
			}
			body := importBody(jobsJSON(0, largeImportJobs, fmt.Sprintf("M%dR", r+1), "Driver"), "")
			bodySize = len(body)
			took, grew, err := h.importOnFreshServer(ctx, a, body, r == 0)
			if err != nil {
				return err
			}
			imports = append(imports, took)
			if grew.peak-grew.base > worst.peak-worst.base {
				worst = grew
			}
		}
		return nil
	})
	if err != nil {
		return result{}, err
	}
	p, i := summarize(posts), summarize(imports)
	ratio := float64(i.median) / float64(p.median)
	growth := float64(worst.peak - worst.base)
	// The API's services take whole messages, so the jobs decoded from the
	// body (as Go values, some 1.7 times its size) are held once while the
	// import is stored; anything past 3x the body is another copy.
	memTarget := 3 * float64(bodySize)
	return result{
		name:   fmt.Sprintf("import of %d new jobs, POST to complete (%d rounds)", largeImportJobs, i.n),
		median: i.median, p99: i.p99,
		floor: fmt.Sprintf("fifty posts of 1,000: %s", ms(p.median)),
		ratio: ratio,
		target: fmt.Sprintf("<= 1.5x fifty posts; peak memory growth <= 3x the body (%.0f MB)",
			memTarget/(1<<20)),
		pass: ratio <= 1.5 && growth <= memTarget,
		note: fmt.Sprintf("a %.1f MB body; %d jobs added, the other %d refused over the %d active-job limit, in the import "+
			"and in the posts alike. Server peak memory %.0f MB above its resident set of %.0f MB before the import "+
			"(%.1fx the body; %.0f MB of it by the time the POST was answered; worst of %d rounds, each on a server started for it, "+
			"after an untimed warm-up import): "+
			"the decoded jobs, held once, and the collector's headroom; the body is decoded as it is read and let go, "+
			"and the payload is stored and read back compressed, a chunk of jobs at a time. Completion seen by polling every 20 ms.",
			float64(bodySize)/(1<<20), maxActiveJobs, largeImportJobs-maxActiveJobs, maxActiveJobs,
			growth/(1<<20), float64(worst.base)/(1<<20), growth/float64(bodySize), float64(worst.accepted-worst.base)/(1<<20), i.n),
	}, nil
}

// memoryGrowth is a server's resident set before an import, its peak by the
// time the POST was answered, and its peak over the whole import.
type memoryGrowth struct{ base, accepted, peak int64 }

// importOnFreshServer starts a server of its own, the only one running,
// warms it with a small import (of 100 jobs a must have room for) and
// withdraws every job of a, then times one import of body on it from the
// POST to "complete" and reads its peak resident set. With profile, the import's CPU profile
// (not in the quick run) and the heap profile after it are kept with the
// report.
func (h *harness) importOnFreshServer(ctx context.Context, a account, body []byte, profile bool) (time.Duration, memoryGrowth, error) {
	srv, err := h.startServer(ctx, "server-import")
	if err != nil {
		return 0, memoryGrowth{}, err
	}
	defer srv.stop()
	h.server = srv
	defer func() { h.server = nil }()

	warm := importBody(jobsJSON(0, 100, "WARM", "Driver"), "")
	if err := h.runImport(ctx, a, warm, 100, func() {}); err != nil {
		return 0, memoryGrowth{}, err
	}
	if err := h.withdrawAll(ctx, a); err != nil {
		return 0, memoryGrowth{}, err
	}
	var grew memoryGrowth
	grew.base = srv.resetPeak()
	wait := func() string { return "" }
	// The CPU profile runs its whole length: the quick run, which only
	// checks the harness works, does without it.
	if profile && !h.opts.quick {
		wait = h.profile(ctx, "import-50000", 15*time.Second)
	}
	t := time.Now()
	err = h.runImport(ctx, a, body, maxActiveJobs, func() { _, grew.accepted = srv.memory() })
	took := time.Since(t)
	_, grew.peak = srv.memory()
	wait()
	if profile && err == nil {
		h.heapProfile(ctx, "import-50000-heap")
	}
	return took, grew, err
}

// runImport creates an import, calls accepted, and waits until it is
// complete with added jobs added.
func (h *harness) runImport(ctx context.Context, a account, body []byte, added int, accepted func()) error {
	imp, err := h.createImport(ctx, a, body)
	if err != nil {
		return err
	}
	accepted()
	done, err := h.waitImport(ctx, a, imp, 20*time.Millisecond)
	if err == nil && done.Data.Results.Added != added {
		err = fmt.Errorf("import added %d jobs, want %d", done.Data.Results.Added, added)
	}
	return err
}

// postJobsOverLimit posts a jobs.json body whose summary must hold exactly
// refused errors, all of them over the active-job limit.
func (h *harness) postJobsOverLimit(ctx context.Context, a account, body []byte, refused int) error {
	code, resp, err := h.do(ctx, a, http.MethodPost, "/api/v2.0/jobs.json", body)
	if err != nil {
		return err
	}
	var sum struct {
		Errors        int
		ErrorMessages struct {
			LimitErrors struct{ Errors []json.RawMessage }
		}
	}
	if code != 200 || json.Unmarshal(resp, &sum) != nil || sum.Errors != refused || len(sum.ErrorMessages.LimitErrors.Errors) != refused {
		return fmt.Errorf("post jobs (want %d refused over the limit): %d %.300s", refused, code, resp)
	}
	return nil
}

// heapProfile keeps the server's heap profile (allocations since it
// started, and what is in use) with the report.
func (h *harness) heapProfile(ctx context.Context, name string) {
	h.saveProfile(ctx, name, "heap?gc=1")
}
