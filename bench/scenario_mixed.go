package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

func init() {
	register(7, "mixed reads and writes at 200 and 1,000 connections (admission control)", mixedScenario)
}

// mixedLevels are the connection counts the mix runs at: the 200 of the
// issue's first measurement, and five times that.
var mixedLevels = []int{200, 1000}

const (
	mixedBatchSize    = 10 // jobs per post
	mixedPostAccounts = 20 // accounts that post, each its own batch of jobs
	// mixedStarvedBelow: a class is starved when its served requests per
	// connection fall below this fraction of the mean over all connections.
	mixedStarvedBelow = 0.25
	// mixedTailRatio is the most a class's p99 may be of its median.
	mixedTailRatio = 3.0
)

// mixedClass is one kind of request of the mix, loaded by its own h2load
// processes (several for the posts: one key per process).
type mixedClass struct {
	name   string
	want   int // the status of a served request
	share  int // percent of the connections not taken by posts
	runs   func(conns int) []h2loadRun
	result h2loadResult
	conns  int
}

// mixedScenario loads the server with four classes at once at each level:
// reads of the caller's own jobs, drivers searches, reads of another
// account's job ids (404), and posts of 10 jobs from 20 accounts. Each
// class must keep p99 within 3x its median, none may be starved, and no
// request may fail but with the 503 of admission control.
func mixedScenario(ctx context.Context, h *harness) ([]result, error) {
	warm, d := 5*time.Second, 60*time.Second
	if h.opts.quick {
		warm, d = time.Second, 3*time.Second
	}
	classes, err := mixedClasses(ctx, h)
	if err != nil {
		return nil, err
	}
	var rows []result
	for _, level := range mixedLevels {
		levelRows, err := mixedLevel(ctx, h, classes, level, warm, d)
		if err != nil {
			return nil, err
		}
		rows = append(rows, levelRows...)
	}
	return rows, nil
}

// mixedClasses prepares the data of each class (the posting accounts and
// their jobs) and says how to load it.
func mixedClasses(ctx context.Context, h *harness) ([]*mixedClass, error) {
	a, other := h.accounts[1], h.accounts[0]
	own, err := activeJobIDs(ctx, h, a)
	if err != nil {
		return nil, err
	}
	foreign, err := activeJobIDs(ctx, h, other)
	if err != nil {
		return nil, err
	}
	posters, err := mixedPosters(ctx, h)
	if err != nil {
		return nil, err
	}
	base := h.server.httpBase + "/api/v2.0/"
	idURIs := func(ids []int64) []string {
		ids = slices.Clone(ids)
		rand.New(rand.NewPCG(7, 7)).Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		uris := make([]string, min(len(ids), 2000))
		for i := range uris {
			uris[i] = base + "jobs.json/" + strconv.FormatInt(ids[i], 10)
		}
		return uris
	}
	var drivers []string
	for _, s := range states {
		drivers = append(drivers, base+"drivers.json?state="+s+"&max=50")
	}
	get := func(name string, uris []string) func(int) []h2loadRun {
		return func(conns int) []h2loadRun {
			return []h2loadRun{{name: name, uris: uris, conns: conns, headers: []string{"Authorization: Bearer " + a.APIKey}}}
		}
	}
	return []*mixedClass{
		{name: "GET jobs.json/{id}", want: 200, share: 50, runs: get("own", idURIs(own))},
		{name: "GET drivers.json?state=..&max=50", want: 200, share: 25, runs: get("drivers", drivers)},
		{name: "GET jobs.json/{id} of another account (404)", want: 404, share: 25, runs: get("foreign", idURIs(foreign))},
		{name: fmt.Sprintf("POST jobs.json, %d jobs (updates), %d accounts", mixedBatchSize, mixedPostAccounts),
			want: 200, runs: func(conns int) []h2loadRun { return postRuns(base, posters, conns) }},
	}, nil
}

// mixedPoster is an account that posts, with the body it posts.
type mixedPoster struct {
	key  string
	body []byte
}

// mixedPosters creates the posting accounts, each with its batch of jobs
// stored, and checks with a real client that posting the batch under
// another title updates all of it. h2load sends the same body every time,
// so under load the first post of each account updates its jobs and the
// following ones find them unchanged, as an integration posting its whole
// feed again and again does: each still takes the account's write lock,
// reads and compares the jobs, and commits.
func mixedPosters(ctx context.Context, h *harness) ([]mixedPoster, error) {
	posters := make([]mixedPoster, mixedPostAccounts)
	for i := range posters {
		acct, err := h.newAccount(ctx, fmt.Sprintf("Bench Poster %d", i+1))
		if err != nil {
			return nil, err
		}
		posters[i] = mixedPoster{key: acct.APIKey, body: jobsJSON(0, mixedBatchSize, "M", "Driver (under load)")}
		for _, body := range [][]byte{jobsJSON(0, mixedBatchSize, "M", "Driver"), posters[i].body} {
			code, resp, err := h.do(ctx, acct, http.MethodPost, "/api/v2.0/jobs.json", body)
			if err != nil {
				return nil, err
			}
			var sum struct{ Updated, Added, Errors int }
			if code != 200 || json.Unmarshal(resp, &sum) != nil || sum.Errors != 0 || sum.Added+sum.Updated != mixedBatchSize {
				return nil, fmt.Errorf("posting account %d's batch: %d %.300s", i+1, code, resp)
			}
		}
	}
	return posters, nil
}

// postRuns are the posts' h2load processes, one per account (a key per
// process), sharing conns as evenly as they can, at least one each.
func postRuns(base string, posters []mixedPoster, conns int) []h2loadRun {
	runs := make([]h2loadRun, len(posters))
	for i, p := range posters {
		runs[i] = h2loadRun{name: fmt.Sprintf("post%d", i+1), uris: []string{base + "jobs.json"},
			conns:   max(1, conns/len(posters)+btoi(i < conns%len(posters))),
			headers: []string{"Authorization: Bearer " + p.key, "Content-Type: application/json"}, body: p.body}
	}
	return runs
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// mixedPostConns are the connections of a level that post: a tenth, and
// at least one per account.
func mixedPostConns(level int) int {
	return max(level/10, mixedPostAccounts)
}

// mixedLevel runs every class at once with level connections in all.
func mixedLevel(ctx context.Context, h *harness, classes []*mixedClass, level int, warm, d time.Duration) ([]result, error) {
	postConns := mixedPostConns(level)
	var waits []func() (h2loadResult, error)
	var owners []*mixedClass
	for _, c := range classes {
		c.conns = postConns
		if c.share > 0 {
			c.conns = (level - postConns) * c.share / 100
		}
		for _, run := range c.runs(c.conns) {
			run.http1, run.warmup, run.duration, run.dir = true, warm, d, h.dir
			run.name = fmt.Sprintf("mixed%d-%s", level, run.name)
			wait, err := run.start(ctx)
			if err != nil {
				return nil, err
			}
			waits, owners = append(waits, wait), append(owners, c)
		}
		c.result = h2loadResult{latencies: map[int][]time.Duration{}}
	}
	// The profile and the memory cover the measured part, after the warm-up.
	time.Sleep(warm)
	rssStart := h.server.resetPeak()
	waitProfile := h.profile(ctx, fmt.Sprintf("mixed%d", level), d-time.Second)
	conns := &connWatch{}
	watchCtx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() { conns.run(watchCtx, h); close(watched) }()
	var firstErr error
	for i, wait := range waits {
		res, err := wait()
		if err != nil && firstErr == nil {
			firstErr = err
		}
		owners[i].result = mergeH2load(owners[i].result, res)
	}
	stopWatch()
	<-watched
	waitProfile()
	if firstErr != nil {
		return nil, firstErr
	}
	_, peak := h.server.memory()
	return mixedRows(classes, level, len(waits), d, fmt.Sprintf("Server RSS %.0f MB at the start, peak %.0f MB; database connections at most %d.",
		float64(rssStart)/(1<<20), float64(peak)/(1<<20), conns.peak.Load())), nil
}

// mergeH2load adds the answers of one process to those of its class's
// other processes; they ran over the same time, so the elapsed time is
// the longest, and the generator's CPU shares add up.
func mergeH2load(sum, r h2loadResult) h2loadResult {
	for status, l := range r.latencies {
		sum.latencies[status] = append(sum.latencies[status], l...)
	}
	for _, l := range sum.latencies {
		slices.Sort(l)
	}
	sum.elapsed = max(sum.elapsed, r.elapsed)
	sum.failed += r.failed
	sum.dataBytes += r.dataBytes
	sum.cpu += r.cpu
	return sum
}

// mixedRows judges each class of a level and sums the level up.
func mixedRows(classes []*mixedClass, level, processes int, d time.Duration, serverNote string) []result {
	label := fmt.Sprintf("mixed, %d connections, %.0f s: ", level, d.Seconds())
	var served, refused, conns int64
	var cpu float64
	for _, c := range classes {
		served += c.result.count(c.want)
		refused += c.result.count(http.StatusServiceUnavailable)
		conns += int64(c.conns)
		cpu += c.result.cpu
	}
	meanPerConn := float64(served) / float64(conns)
	var rows []result
	allMet := true
	for _, c := range classes {
		row := judgeMixedClass(c, meanPerConn)
		row.name = label + c.name
		allMet = allMet && row.pass
		rows = append(rows, row)
	}
	elapsed := classes[0].result.elapsed
	note := fmt.Sprintf("%d served, %d refused with 503 (%.1f%%). %s h2load (%d processes) used %.0f%% of the machine's cores in all.",
		served, refused, 100*float64(refused)/float64(max(1, served+refused)), serverNote, processes, 100*cpu)
	rows = append(rows, result{name: label + "all classes", throughput: float64(served) / elapsed.Seconds(),
		target: "every class met", pass: allMet, note: note})
	return rows
}

// judgeMixedClass is a class's row: served latency and throughput, what
// was refused and how fast, and the verdict on its three rules.
func judgeMixedClass(c *mixedClass, meanPerConn float64) result {
	r := c.result
	served, refused := r.of(c.want), r.of(http.StatusServiceUnavailable)
	var errs int64 = r.failed
	var other []string
	for status, l := range r.latencies {
		if status != c.want && status != http.StatusServiceUnavailable {
			errs += int64(len(l))
			other = append(other, fmt.Sprintf("%d× %d", len(l), status))
		}
	}
	s := summarize(served)
	perConn := float64(len(served)) / float64(c.conns)
	tailOK := len(served) > 0 && float64(s.p99) <= mixedTailRatio*float64(s.median)
	fed := perConn >= mixedStarvedBelow*meanPerConn
	note := fmt.Sprintf("%d connections; %d served (%.1f per connection, %.2fx the mean), %d refused with 503 (%.1f%% of answers)",
		c.conns, len(served), perConn, perConn/meanPerConn, len(refused), 100*float64(len(refused))/float64(max(1, len(served)+len(refused))))
	if len(refused) > 0 {
		rs := summarize(refused)
		note += fmt.Sprintf(" in %s median, %s p99", ms(rs.median), ms(rs.p99))
	}
	note += fmt.Sprintf("; %d errors", errs)
	if len(other) > 0 {
		slices.Sort(other)
		note += " (" + strings.Join(other, ", ") + ")"
	}
	if r.failed > 0 {
		note += fmt.Sprintf(" (%d without an answer)", r.failed)
	}
	note += fmt.Sprintf(". p99/median %.2f. %s", float64(s.p99)/float64(max(1, s.median)), r.cpuNote())
	return result{median: s.median, p99: s.p99, throughput: float64(len(served)) / r.elapsed.Seconds(),
		target: fmt.Sprintf("p99 ≤ %.0fx median; served per connection ≥ %.2fx the mean; 0 errors but 503", mixedTailRatio, mixedStarvedBelow),
		pass:   tailOK && fed && errs == 0, note: note}
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
