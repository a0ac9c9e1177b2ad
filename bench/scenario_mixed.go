package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

func init() { register(7, "200 connections of mixed reads and writes", mixedScenario) }

const (
	mixedConns     = 200
	mixedBatchSize = 10 // jobs per POST
)

// mixedKind is one kind of request of the mix.
type mixedKind int

const (
	mixedJob     mixedKind = iota // GET jobs.json/{id} of one of the caller's jobs
	mixedDrivers                  // GET drivers.json filtered by state, one page of 50
	mixedForeign                  // GET jobs.json/{id} of another account's job: 404
	mixedPost                     // POST jobs.json updating a batch of the caller's jobs
	mixedKinds
)

var mixedNames = [mixedKinds]string{
	mixedJob:     "GET jobs.json/{id}",
	mixedDrivers: "GET drivers.json?state=..&max=50",
	mixedForeign: "GET jobs.json/{id} of another account (404)",
	mixedPost:    fmt.Sprintf("POST jobs.json, %d jobs (updates)", mixedBatchSize),
}

// mixedPattern is the order each worker goes through, starting at its own
// offset so that at any moment all kinds are in flight: half single-job
// reads, a fifth driver searches, a fifth foreign ids, a tenth writes.
var mixedPattern = []mixedKind{mixedJob, mixedDrivers, mixedJob, mixedForeign, mixedPost,
	mixedJob, mixedDrivers, mixedJob, mixedForeign, mixedJob}

// mixedWorker is what one worker saw; each worker writes only its own.
type mixedWorker struct {
	lat        [mixedKinds][]time.Duration
	errs       [mixedKinds]int64
	firstError [mixedKinds]string
	updated    int64 // jobs the posts updated
}

// mixedScenario runs 200 clients at once against account 1, reading and
// updating the same jobs, and checks that nothing fails: no transport
// error, no 5xx, no status other than the one each request calls for.
func mixedScenario(ctx context.Context, h *harness) ([]result, error) {
	warm, d := 2*time.Second, 60*time.Second
	if h.opts.quick {
		warm, d = 500*time.Millisecond, 5*time.Second
	}
	a, other := h.accounts[1], h.accounts[0]
	own, err := activeJobIDs(ctx, h, a)
	if err != nil {
		return nil, err
	}
	foreign, err := activeJobIDs(ctx, h, other)
	if err != nil {
		return nil, err
	}
	// One client shared by every worker, as a busy integration would use;
	// its pool keeps an idle connection for each of them.
	t := newHTTPTarget(h.server.httpBase, a.APIKey, mixedConns)

	// Batches are consecutive slices of the jobs the account already has,
	// so every post updates and none adds: the account stays at its
	// active-job count, under the 10,000 limit. The counter varies the
	// title, so a batch never repeats the content it already holds.
	var posts atomic.Int64
	batches := max(1, h.jobsPer/mixedBatchSize)
	workers := make([]mixedWorker, mixedConns)
	recording := false
	call := func(ctx context.Context, w, i int) error {
		kind := mixedPattern[(w+i)%len(mixedPattern)]
		started := time.Now()
		updated, err := mixedRequest(ctx, t, kind, i, w, own, foreign, batches, &posts)
		if !recording || ctx.Err() != nil {
			return err // warm-up, or cut off by the end of the run
		}
		mw := &workers[w]
		mw.lat[kind] = append(mw.lat[kind], time.Since(started))
		mw.updated += int64(updated)
		if err != nil {
			mw.errs[kind]++
			if mw.firstError[kind] == "" {
				mw.firstError[kind] = err.Error()
			}
		}
		return err
	}
	load(ctx, mixedConns, warm, call)
	recording = true

	rssStart := h.server.resetPeak()
	conns := &connWatch{}
	watchCtx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() { conns.run(watchCtx, h); close(watched) }()
	run := load(ctx, mixedConns, d, call)
	stopWatch()
	<-watched
	rssEnd, peak := h.server.memory()
	// Requests the end of the run cut off may still be running on the
	// server; what is left a second later is what the load left behind.
	time.Sleep(time.Second)
	end, err := dbConnections(ctx, h)
	if err != nil {
		return nil, err
	}

	label := fmt.Sprintf("mixed, %d connections, %.0f s: ", mixedConns, d.Seconds())
	var rows []result
	var all []time.Duration
	var total, errs, updated int64
	firstError := ""
	for k := range mixedKinds {
		var lats []time.Duration
		var kindErrs int64
		kindFirst := ""
		for i := range workers {
			lats = append(lats, workers[i].lat[k]...)
			kindErrs += workers[i].errs[k]
			if kindFirst == "" {
				kindFirst = workers[i].firstError[k]
			}
		}
		s := summarize(lats)
		note := fmt.Sprintf("%d requests, %d errors.", len(lats), kindErrs)
		if kindFirst != "" {
			note += fmt.Sprintf(" First error: %.200s", kindFirst)
			if firstError == "" {
				firstError = mixedNames[k] + ": " + kindFirst
			}
		}
		rows = append(rows, result{
			name: label + mixedNames[k], median: s.median, p99: s.p99,
			throughput: float64(len(lats)) / run.elapsed.Seconds(), note: note,
		})
		all = append(all, lats...)
		total += int64(len(lats))
		errs += kindErrs
	}
	for i := range workers {
		updated += workers[i].updated
	}
	s := summarize(all)
	mb := func(b int64) float64 { return float64(b) / (1 << 20) }
	note := fmt.Sprintf("%d requests, %d errors (transport errors, 5xx, any status but the expected one, "+
		"a post summary with errors). Posts updated %d jobs. Server RSS %.0f MB at the start, %.0f MB at the end, "+
		"peak %.0f MB. Database connections to jobboard: at most %d during the run; 1 s after it %d "+
		"(%d running a statement, %d idle in a transaction), %d of them the harness's own.",
		total, errs, updated, mb(rssStart), mb(rssEnd), mb(peak), conns.peak.Load(),
		end.total, end.active, end.idleInTx, end.harness)
	if firstError != "" {
		note += fmt.Sprintf(" First error: %.300s", firstError)
	}
	rows = append(rows, result{
		name: label + "all requests", median: s.median, p99: s.p99,
		throughput: float64(total) / run.elapsed.Seconds(),
		target:     "0 errors", pass: errs == 0 && total > 0, note: note,
	})
	return rows, nil
}

// mixedRequest makes one request of the kind and checks its answer; for a
// post it returns how many jobs were updated.
func mixedRequest(ctx context.Context, t httpTarget, kind mixedKind, i, w int, own, foreign []int64,
	batches int, posts *atomic.Int64) (int, error) {
	// Each worker starts at its own place in the id lists and moves on.
	pick := func(ids []int64) int64 { return ids[(w*7919+i)%len(ids)] }
	switch kind {
	case mixedJob:
		return 0, expect(t.send(ctx, http.MethodGet, "/api/v2.0/jobs.json/"+strconv.FormatInt(pick(own), 10), nil, nil))(200)
	case mixedForeign:
		return 0, expect(t.send(ctx, http.MethodGet, "/api/v2.0/jobs.json/"+strconv.FormatInt(pick(foreign), 10), nil, nil))(404)
	case mixedDrivers:
		path := "/api/v2.0/drivers.json?state=" + states[(w+i)%len(states)] + "&max=50"
		return 0, expect(t.send(ctx, http.MethodGet, path, nil, nil))(200)
	default:
		n := posts.Add(1)
		start := int(n%int64(batches)) * mixedBatchSize
		body := jobsJSON(start, mixedBatchSize, "D", fmt.Sprintf("Driver (revision %d)", n))
		var resp bytes.Buffer
		code, err := t.send(ctx, http.MethodPost, "/api/v2.0/jobs.json", body, &resp)
		if err != nil {
			return 0, err
		}
		var sum struct{ Updated, Added, Errors int }
		if code != 200 || json.Unmarshal(resp.Bytes(), &sum) != nil || sum.Errors != 0 {
			return 0, fmt.Errorf("POST jobs.json: %d %.200s", code, resp.Bytes())
		}
		return sum.Updated, nil
	}
}

// expect turns an answer into an error unless its status is the one wanted.
func expect(code int, err error) func(want int) error {
	return func(want int) error {
		if err != nil {
			return err
		}
		if code != want {
			return fmt.Errorf("status %d, want %d", code, want)
		}
		return nil
	}
}

// connWatch samples the database's connection count once a second.
type connWatch struct{ peak atomic.Int64 }

func (c *connWatch) run(ctx context.Context, h *harness) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		if n, err := dbConnections(ctx, h); err == nil {
			c.peak.Store(max(c.peak.Load(), n.total))
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// dbConns counts the backends connected to the service's database.
type dbConns struct {
	total    int64
	active   int64 // running a statement, the counting one left out
	idleInTx int64 // holding a transaction open between statements
	harness  int64 // the harness's own pool
}

func dbConnections(ctx context.Context, h *harness) (dbConns, error) {
	var row struct{ Total, Active, IdleInTx int64 }
	err := h.store.DB().GetContext(ctx, &row, `SELECT count(*) AS total,
		count(*) FILTER (WHERE state = 'active' AND pid <> pg_backend_pid()) AS active,
		count(*) FILTER (WHERE state LIKE 'idle in transaction%') AS idleintx
		FROM pg_stat_activity WHERE datname = 'jobboard'`)
	if err != nil {
		return dbConns{}, fmt.Errorf("count database connections: %w", err)
	}
	return dbConns{row.Total, row.Active, row.IdleInTx, int64(h.store.DB().Stats().OpenConnections)}, nil
}
