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
	// mixedStarvedBelow: a class (or a posting account) is starved when its
	// served requests per connection fall below this fraction of the mean
	// over all connections.
	mixedStarvedBelow = 0.25
	// mixedTailRatio is the most a class's p99 may be of its median.
	mixedTailRatio = 3.0
	// mixedRefusedWithin is the most of the answers that may be 503s at the
	// first level, which is within the service's capacity.
	mixedRefusedWithin = 0.01
	// Past the first level refusals are allowed, but must come fast (their
	// p99 at most mixedRefusalP99, a fraction of the served median there)
	// and must not cost the served work: the served throughput stays at
	// least mixedKeepServing of the first level's.
	mixedRefusalP99  = 100 * time.Millisecond
	mixedKeepServing = 0.8
)

// mixedClass is one kind of request of the mix, loaded by its own h2load
// processes (several for the posts: two per posting account).
type mixedClass struct {
	name   string
	want   int // the status of a served request
	share  int // percent of the connections not taken by posts
	runs   func(conns int) []mixedRun
	result h2loadResult
	conns  int
	// accounts are the posting accounts of the posts' class, each judged on
	// its own too, so that one starved account cannot hide in the sum.
	accounts []mixedPart
}

// mixedPart is one posting account's share of its class at a level.
type mixedPart struct {
	id     int64
	conns  int
	result h2loadResult
}

// mixedRun is one h2load process of a class.
type mixedRun struct {
	h2loadRun
	account int // 1 + the index of the posting account, 0 for the reads
}

// mixedScenario loads the server with four classes at once at each level:
// reads of the caller's own jobs, drivers searches, reads of another
// account's job ids (404), and posts of 10 jobs from 20 accounts that
// change the jobs. Each class and each posting account must keep p99
// within 3x its median, none may be starved, and no request may fail but
// with the 503 of admission control, which a level's own row judges.
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
	var capacity float64 // served per second at the first level
	for i, level := range mixedLevels {
		run, err := mixedLevel(ctx, h, classes, level, warm, d)
		if err != nil {
			return nil, err
		}
		levelRows, served := mixedRows(classes, run, capacity)
		if i == 0 {
			capacity = served
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
	get := func(name string, uris []string) func(int) []mixedRun {
		return func(conns int) []mixedRun {
			return []mixedRun{{h2loadRun: h2loadRun{name: name, uris: uris, conns: conns, headers: []string{"Authorization: Bearer " + a.APIKey}}}}
		}
	}
	parts := make([]mixedPart, len(posters))
	for i, p := range posters {
		parts[i].id = p.id
	}
	return []*mixedClass{
		{name: "GET jobs.json/{id}", want: 200, share: 50, runs: get("own", idURIs(own))},
		{name: "GET drivers.json?state=..&max=50", want: 200, share: 25, runs: get("drivers", drivers)},
		{name: "GET jobs.json/{id} of another account (404)", want: 404, share: 25, runs: get("foreign", idURIs(foreign))},
		{name: fmt.Sprintf("POST jobs.json, %d jobs (updates), %d accounts", mixedBatchSize, mixedPostAccounts),
			want: 200, runs: func(conns int) []mixedRun { return postRuns(base, posters, conns) }, accounts: parts},
	}, nil
}

// mixedPoster is an account that posts, with the two versions of its batch
// it posts in turn.
type mixedPoster struct {
	id     int64
	key    string
	bodies [2][]byte
}

// mixedPosters creates the posting accounts, each with its batch of jobs
// stored, and checks with a real client that each of the two versions of
// the batch, posted after the other, updates every job: the versions have
// the same reference numbers and other titles. h2load sends one body per
// process, so each account posts from two processes, one per version; a
// post that follows one of the other version changes the jobs again.
//
// One batch per account is enough: the posts to one account take turns on
// the account's row (for its maximum of active jobs), so two of them never
// update the same jobs at once, whatever jobs they carry.
func mixedPosters(ctx context.Context, h *harness) ([]mixedPoster, error) {
	posters := make([]mixedPoster, mixedPostAccounts)
	for i := range posters {
		acct, err := h.newAccount(ctx, fmt.Sprintf("Bench Poster %d", i+1))
		if err != nil {
			return nil, err
		}
		a, b := jobsJSON(0, mixedBatchSize, "M", "Driver (version A)"), jobsJSON(0, mixedBatchSize, "M", "Driver (version B)")
		posters[i] = mixedPoster{id: acct.ID, key: acct.APIKey, bodies: [2][]byte{a, b}}
		for step, body := range [][]byte{a, b, a} {
			code, resp, err := h.do(ctx, acct, http.MethodPost, "/api/v2.0/jobs.json", body)
			if err != nil {
				return nil, err
			}
			var sum struct{ Updated, Added, Errors int }
			wantAdded, wantUpdated := mixedBatchSize*btoi(step == 0), mixedBatchSize*btoi(step > 0)
			if code != 200 || json.Unmarshal(resp, &sum) != nil || sum.Errors != 0 || sum.Added != wantAdded || sum.Updated != wantUpdated {
				return nil, fmt.Errorf("posting account %d's batch, post %d: want %d added and %d updated, got %d %.300s",
					i+1, step+1, wantAdded, wantUpdated, code, resp)
			}
		}
	}
	return posters, nil
}

// postRuns are the posts' h2load processes, two per account (one key and
// one version of the batch per process), each with half of the account's
// share of conns.
func postRuns(base string, posters []mixedPoster, conns int) []mixedRun {
	var runs []mixedRun
	perVersion := max(1, conns/len(posters)/2)
	for i, p := range posters {
		for v, body := range p.bodies {
			runs = append(runs, mixedRun{account: i + 1, h2loadRun: h2loadRun{
				name: fmt.Sprintf("post%d%c", i+1, 'a'+v), uris: []string{base + "jobs.json"}, conns: perVersion,
				headers: []string{"Authorization: Bearer " + p.key, "Content-Type: application/json"}, body: body}})
		}
	}
	return runs
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// mixedPostConns are the connections of a level that post: a tenth,
// rounded up so that every account has the same even number (a connection
// per version at least).
func mixedPostConns(level int) int {
	per := 2 * mixedPostAccounts
	return max(1, (level/10+per-1)/per) * per
}

// mixedLevelRun is what a level ran, besides the classes' results.
type mixedLevelRun struct {
	level, processes       int
	d                      time.Duration
	serverNote, postedNote string
	// refusalNote gives the server's reasons for its refusals.
	refusalNote string
}

// mixedLevel runs every class at once with level connections in all.
func mixedLevel(ctx context.Context, h *harness, classes []*mixedClass, level int, warm, d time.Duration) (mixedLevelRun, error) {
	run := mixedLevelRun{level: level, d: d}
	var waits []func() (h2loadResult, error)
	var into [][]*h2loadResult // the sums each process's answers go to
	var posting []int64
	for _, c := range classes {
		c.conns = mixedPostConns(level)
		if c.share > 0 {
			c.conns = (level - c.conns) * c.share / 100
		}
		c.result = h2loadResult{latencies: map[int][]time.Duration{}}
		for i := range c.accounts {
			c.accounts[i].conns, c.accounts[i].result = 0, h2loadResult{latencies: map[int][]time.Duration{}}
			posting = append(posting, c.accounts[i].id)
		}
		for _, r := range c.runs(c.conns) {
			r.http1, r.warmup, r.duration, r.dir = true, warm, d, h.dir
			r.name = fmt.Sprintf("mixed%d-%s", level, r.name)
			wait, err := r.start(ctx)
			if err != nil {
				return run, err
			}
			sums := []*h2loadResult{&c.result}
			if r.account > 0 {
				part := &c.accounts[r.account-1]
				part.conns += r.conns
				sums = append(sums, &part.result)
			}
			waits, into = append(waits, wait), append(into, sums)
		}
	}
	run.processes = len(waits)
	// The profile, the memory and the watches cover the measured part,
	// after the warm-up.
	time.Sleep(warm)
	rssStart := h.server.resetPeak()
	refusedBefore, err := refusalCounts(ctx, h.server)
	if err != nil {
		return run, err
	}
	waitProfile := h.profile(ctx, fmt.Sprintf("mixed%d", level), d-time.Second)
	conns, updates := &connWatch{}, &updateWatch{accounts: posting}
	stopConns := everySecond(ctx, 0, func(ctx context.Context) { conns.sample(ctx, h) })
	// The update watch stops before the posts do, so its last second is
	// all inside the measured part.
	stopUpdates := everySecond(ctx, d-500*time.Millisecond, func(ctx context.Context) { updates.sample(ctx, h) })
	var firstErr error
	for i, wait := range waits {
		res, err := wait()
		if err != nil && firstErr == nil {
			firstErr = err
		}
		for _, sum := range into[i] {
			*sum = mergeH2load(*sum, res)
		}
	}
	stopConns()
	stopUpdates()
	waitProfile()
	if firstErr != nil {
		return run, firstErr
	}
	refusedAfter, err := refusalCounts(ctx, h.server)
	if err != nil {
		return run, err
	}
	run.refusalNote = refusalNote(refusedBefore, refusedAfter)
	_, peak := h.server.memory()
	run.serverNote = fmt.Sprintf("Server RSS %.0f MB at the start, peak %.0f MB; database connections at most %d.",
		float64(rssStart)/(1<<20), float64(peak)/(1<<20), conns.peak.Load())
	// The posts served over the sampled seconds, at the measured rate.
	var posted float64
	for _, c := range classes {
		if len(c.accounts) > 0 {
			posted = float64(c.result.count(c.want)) / d.Seconds() * float64(len(updates.changed)) * mixedBatchSize
		}
	}
	run.postedNote = updates.note(len(posting)*mixedBatchSize, posted)
	return run, nil
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
	sum.inFlight = append(sum.inFlight, r.inFlight...)
	slices.Sort(sum.inFlight)
	sum.elapsed = max(sum.elapsed, r.elapsed)
	sum.failed += r.failed
	sum.statusless += r.statusless
	sum.dataBytes += r.dataBytes
	sum.started += r.started
	sum.done += r.done
	sum.cpu += r.cpu
	return sum
}

// everySecond calls sample at once and then each second, until stop is
// called or, when limit is set, limit has passed.
func everySecond(ctx context.Context, limit time.Duration, sample func(context.Context)) (stop func()) {
	var cancel context.CancelFunc
	if limit > 0 {
		ctx, cancel = context.WithTimeout(ctx, limit)
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			sample(ctx)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() { cancel(); <-done }
}

// updateWatch counts, once a second, the posting accounts' jobs whose
// updated_at moved since the previous sample: the database's own evidence
// that the posts under load change the jobs (the service writes a job only
// when it differs). A job changed several times within a second counts
// once, so the sum is a floor on the updates. It also keeps the rows
// PostgreSQL's statistics say were updated in jobs between the first and
// the last sample, which tells what share of the posted jobs changed; a
// backend reports them up to a second late, at both ends alike.
type updateWatch struct {
	accounts []int64
	since    time.Time // the database's clock at the previous sample
	changed  []int64   // per second
	rows     []int64   // n_tup_upd of jobs at the first and the last sample
}

func (u *updateWatch) sample(ctx context.Context, h *harness) {
	ids := make([]string, len(u.accounts))
	for i, id := range u.accounts {
		ids[i] = strconv.FormatInt(id, 10)
	}
	var row struct {
		N, Upd int64
		Now    time.Time
	}
	err := h.store.DB().GetContext(ctx, &row, `SELECT count(*) FILTER (WHERE updated_at > $1) AS n, now() AS now,
		(SELECT coalesce(sum(n_tup_upd), 0) FROM pg_stat_user_tables WHERE relname = 'jobs') AS upd
		FROM jobs WHERE account_id IN (`+strings.Join(ids, ",")+`)`, u.since)
	if err != nil {
		return
	}
	if !u.since.IsZero() {
		u.changed = append(u.changed, row.N)
	}
	u.since = row.Now
	u.rows = append(u.rows[:min(len(u.rows), 1)], row.Upd)
}

// note says what the samples saw of the posts: jobs is how many jobs the
// posting accounts have, posted how many jobs the served posts carried
// over the sampled seconds.
func (u *updateWatch) note(jobs int, posted float64) string {
	if len(u.changed) == 0 {
		return "Posts changing jobs: no sample of updated_at was taken."
	}
	return fmt.Sprintf("Posts changing jobs (updated_at, sampled each second): at least %d job updates; in every second %d to %d of the %d posted jobs changed; PostgreSQL counted %d rows of jobs updated, %.0f%% of the jobs the posts carried.",
		sumInts(u.changed), slices.Min(u.changed), slices.Max(u.changed), jobs, u.rows[len(u.rows)-1]-u.rows[0], 100*float64(u.rows[len(u.rows)-1]-u.rows[0])/max(1, posted))
}

func sumInts(v []int64) int64 {
	var n int64
	for _, x := range v {
		n += x
	}
	return n
}

// connWatch keeps the most database connections seen.
type connWatch struct{ peak atomic.Int64 }

func (c *connWatch) sample(ctx context.Context, h *harness) {
	if n, err := dbConnections(ctx, h); err == nil {
		c.peak.Store(max(c.peak.Load(), n.total))
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
