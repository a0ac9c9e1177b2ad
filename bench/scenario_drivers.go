package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/truckjobs/jobboard/server/drivers"

	"github.com/truckjobs/jobboard/server/store"
)

func init() {
	register(4, "GET drivers.json, each filter alone, max=100", driversScenario)
}

// The target for every filter of the list, and the radius it is timed with.
const (
	driversTarget    = "p99 < 10 ms; filter uses an index"
	driversTargetP99 = 10 * time.Millisecond
	driversRadius    = 50 // miles
)

// driverCase is one list request: a filter alone, with its value taken from
// the data set, or no filter at all.
type driverCase struct {
	name  string
	query url.Values
	// column is what the count's plan must reach through an index
	// condition, or the predicate of a partial index it scans, for the
	// filter to count as indexed; the count visits every match, so it is
	// where an unindexed filter shows.
	column string
	// reference rows have no filter: they show the cost of counting the
	// whole account beside the filters and are not judged.
	reference bool
	// key names a combination of filters (combinationCases) apart from
	// its values; single filters have none.
	key string
}

// driversScenario times each filter of the drivers list alone over REST
// and puts beside it the floor: the two statements the service runs for
// that request (page and count), run under EXPLAIN ANALYZE on the same
// database, whose plans also tell whether the filter used an index.
func driversScenario(ctx context.Context, h *harness) ([]result, error) {
	// Four seconds of requests a filter, about 1,000 at the radius's pace:
	// the p99 of 200 is the second-slowest request, which one stall of the
	// shared machine decides.
	warm, d, explains := time.Second, 4*time.Second, 5
	if h.opts.quick {
		warm, d, explains = time.Second, time.Second, 2
	}
	a := h.accounts[0]
	cases, err := driverCases(ctx, h, a)
	if err != nil {
		return nil, err
	}
	svc := drivers.New(h.store)
	var rows []result
	var loadCPU float64 // the largest share of the cores h2load used in a run
	for _, c := range cases {
		c.query.Set("max", "100")
		path := "/api/v2.0/drivers.json?" + c.query.Encode()
		page, count, err := driverQueries(ctx, svc, h.store, a.ID, c.query)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		total, err := checkDriversAnswer(ctx, h, a, path, count)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		s, cpu, err := sequentialLoad(ctx, h, a, path, warm, d)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		loadCPU = max(loadCPU, cpu)
		pagePlan, err := explain(ctx, h, page, explains)
		if err != nil {
			return nil, fmt.Errorf("%s: explain page: %w", c.name, err)
		}
		countPlan, err := explain(ctx, h, count, explains)
		if err != nil {
			return nil, fmt.Errorf("%s: explain count: %w", c.name, err)
		}
		floor := pagePlan.execution + countPlan.execution
		problems := slices.Concat(pagePlan.seqScans(), countPlan.seqScans())
		indexed, err := countPlan.indexedOn(ctx, h, c.column)
		if err != nil {
			return nil, err
		}
		if !indexed {
			problems = append(problems, fmt.Sprintf("the count reaches %s through no index condition", c.column))
		}
		row := result{
			name:   fmt.Sprintf("%s (%d matches, %d requests)", c.name, total, s.n),
			median: s.median, p99: s.p99,
			floor:  fmt.Sprintf("%s (page %s + count %s)", ms(floor), ms(pagePlan.execution), ms(countPlan.execution)),
			target: driversTarget,
			pass:   s.p99 < driversTargetP99 && len(problems) == 0,
			note:   fmt.Sprintf("page: %s; count: %s.", pagePlan.summary(), countPlan.summary()),
		}
		if floor > 0 {
			row.ratio = float64(s.median) / float64(floor)
		}
		if len(problems) > 0 {
			row.note = "NOT INDEXED: " + strings.Join(problems, "; ") + ". " + row.note
		}
		if c.reference {
			row.target, row.pass = "", false
			row.note = "Reference, not a filter: the count is of the whole account. " + row.note
		}
		rows = append(rows, row)
	}
	if len(rows) > 0 {
		rows[0].note += fmt.Sprintf(" h2load on one HTTP/1.1 keep-alive connection, one request at a time, for %.0f s after "+
			"%.0f s of warm-up, on the first account; every answer a 200. h2load used at most %.0f%% of the %d cores. "+
			"The floor is the median "+
			"EXPLAIN (ANALYZE, TIMING OFF) execution time of the service's two statements over %d runs, added up, although "+
			"the service runs them at the same time; the ratio is the REST median over it. Plans are those of an "+
			"EXPLAIN (ANALYZE) run; rows are summed over loops.", d.Seconds(), warm.Seconds(), 100*loadCPU, runtime.NumCPU(), explains)
	}
	return rows, nil
}

// sequentialLoad times GET path on one connection of h2load, one request
// after the other, for d after warm: the latencies of the answers (every
// one must be a 200) and h2load's share of the cores.
func sequentialLoad(ctx context.Context, h *harness, a account, path string, warm, d time.Duration) (stats, float64, error) {
	run := h2loadRun{uris: []string{h.server.httpBase + path}, conns: 1, http1: true, warmup: warm, duration: d,
		dir: h.dir, name: "drivers",
		headers: []string{basicAuthHeader(a.APIKey)}}
	res, err := run.run(ctx)
	if err != nil {
		return stats{}, 0, err
	}
	l := h2loadLoad(res)
	if l.errors > 0 || l.requests == 0 {
		return stats{}, 0, fmt.Errorf("GET %s: %d of %d requests failed (%s)", path, l.errors, l.requests, l.firstError)
	}
	return l.latency, res.cpu, nil
}

// driverQueries builds the store's statements for a query string the way
// the service does: the gateway's query-parameter mapping into the request
// message, the service's parsing into a filter, the store's SQL.
func driverQueries(ctx context.Context, svc *drivers.Service, st *store.Store, accountID int64, q url.Values) (page, count store.Query, err error) {
	f, err := driverFilter(ctx, svc, q)
	if err != nil {
		return page, count, err
	}
	return st.DriverListQueries(ctx, accountID, f)
}

// checkDriversAnswer makes sure the request answers a full first page and
// the same total as the count statement before it is timed, so the run
// measures the list and not fast failures or empty results.
func checkDriversAnswer(ctx context.Context, h *harness, a account, path string, count store.Query) (int64, error) {
	var total int64
	if err := h.store.DB().GetContext(ctx, &total, count.SQL, count.Args...); err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.server.httpBase+path, nil)
	if err != nil {
		return 0, err
	}
	req.SetBasicAuth(a.APIKey, "")
	resp, err := h.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	var drivers []json.RawMessage
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &drivers) != nil {
		return 0, fmt.Errorf("GET %s: %d %.300s", path, resp.StatusCode, body)
	}
	if got := resp.Header.Get("X-Total-Count"); got != strconv.FormatInt(total, 10) {
		return 0, fmt.Errorf("GET %s: X-Total-Count %s, the count statement says %d", path, got, total)
	}
	if total == 0 || int64(len(drivers)) != min(total, 100) {
		return 0, fmt.Errorf("GET %s: %d drivers of %d: the value matches too little to measure", path, len(drivers), total)
	}
	return total, nil
}

// driverCases picks each filter's value from the account's applications:
// the most common value where the filter has few (the widest match a user
// can ask for), one applicant's own value where it identifies a person, the
// last or first 30 days for dates, the median experience, and the ZIP with
// the most applicants within the radius.
func driverCases(ctx context.Context, h *harness, a account) ([]driverCase, error) {
	db := h.store.DB()
	one := func(dst any, query string) error {
		if err := db.GetContext(ctx, dst, query, a.ID); err != nil {
			return fmt.Errorf("pick a value: %w\n%s", err, query)
		}
		return nil
	}
	var (
		cert, driverType, firstName, lastName, jobTitle, state, status string
		person                                                         struct{ Email, Phone string }
		span                                                           struct{ First, Last time.Time }
		experience                                                     float64
	)
	steps := []struct {
		dst   any
		query string
	}{
		{&cert, `SELECT e FROM applications, unnest(endorsements) e WHERE account_id = $1
			GROUP BY e ORDER BY count(*) DESC, e LIMIT 1`},
		{&driverType, `SELECT driver_type FROM applications WHERE account_id = $1
			GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`},
		{&firstName, `SELECT min(a.first_name) FROM applications a
			WHERE a.account_id = $1 GROUP BY a.first_name_key ORDER BY count(*) DESC, 1 LIMIT 1`},
		{&lastName, `SELECT min(a.last_name) FROM applications a
			WHERE a.account_id = $1 GROUP BY a.last_name_key ORDER BY count(*) DESC, 1 LIMIT 1`},
		{&jobTitle, `SELECT min(j.title) FROM job_applications ja JOIN jobs j ON j.id = ja.job_id
			WHERE ja.account_id = $1 GROUP BY lower(j.title) ORDER BY count(DISTINCT ja.driver_id) DESC, 1 LIMIT 1`},
		{&state, `SELECT state FROM applications WHERE account_id = $1
			GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`},
		// Lead statuses: demo seed spreads the applicants over an
		// employer's pipeline, half of them still new.
		{&status, `SELECT status FROM applications WHERE account_id = $1
			GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`},
		// The applicant in the middle of the list, by id.
		{&person, `SELECT a.email, a.phone FROM applications a
			WHERE a.account_id = $1 ORDER BY a.driver_id
			OFFSET (SELECT count(*) / 2 FROM applications WHERE account_id = $1) LIMIT 1`},
		{&span, `SELECT min(sent) AS first, max(sent) AS last FROM applications WHERE account_id = $1`},
		// The median experience, as a minimum an employer would ask for.
		{&experience, `SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY experience_years)
			FROM applications WHERE account_id = $1 AND experience_years IS NOT NULL`},
	}
	for _, s := range steps {
		if err := one(s.dst, s.query); err != nil {
			return nil, err
		}
	}
	zip, err := busiestZip(ctx, h, a, driversRadius)
	if err != nil {
		return nil, err
	}
	const day = "2006-01-02"
	cases := []struct {
		name, column string
		params       []string
	}{
		{"certifications", "endorsements", []string{"certifications", cert}},
		{"driver_type", "driver_type", []string{"driver_type", driverType}},
		{"email", "email_key", []string{"email", person.Email}},
		{"start_date", "sent", []string{"start_date", span.Last.AddDate(0, 0, -30).UTC().Format(day)}},
		{"end_date", "sent", []string{"end_date", span.First.AddDate(0, 0, 30).UTC().Format(day)}},
		{"first_name", "first_name_key", []string{"first_name", firstName}},
		{"last_name", "last_name_key", []string{"last_name", lastName}},
		{"has_job_apps", "has_job_apps", []string{"has_job_apps", "1"}},
		// Counted from application_counts, under the dimension 'job_title'
		// (migration 0018), as the other counted filters are under theirs.
		{"job_title", "job_title", []string{"job_title", jobTitle}},
		{"lives_within_radius", "latitude", []string{"lives_within_radius", strconv.Itoa(driversRadius), "lives_within_zip", zip}},
		{"min_experience", "experience", []string{"min_experience", strconv.FormatFloat(snapExperience(experience), 'f', -1, 64)}},
		{"phone", "phone_digits", []string{"phone", person.Phone}},
		{"state", "state", []string{"state", state}},
		// Counted from application_counts under the dimension 'status'
		// (migration 0034). Two of the rarer statuses (6% and 2% of the
		// pipeline) are one range of applications_status_idx each, merged
		// in id order; the most common comes last, as the value the
		// combinations take.
		{"status", "status", []string{"status", "interviewing,offered"}},
		{"status", "status", []string{"status", status}},
		// No filter: the count is then of the whole account.
		{"no filter", "account_id", nil},
		{"no filter", "account_id", []string{"sort", "name"}},
		{"no filter", "account_id", []string{"sort", "-sent"}},
	}
	var out []driverCase
	for _, c := range cases {
		q := url.Values{}
		var shown []string
		for i := 0; i < len(c.params); i += 2 {
			q.Set(c.params[i], c.params[i+1])
			shown = append(shown, c.params[i]+"="+c.params[i+1])
		}
		name := strings.Join(shown, " ")
		if c.name == "no filter" {
			name = strings.TrimSpace("no filter " + name)
		}
		out = append(out, driverCase{name: name, query: q, column: c.column, reference: c.name == "no filter"})
	}
	return out, nil
}

// snapExperience rounds years down to a value min_experience accepts.
func snapExperience(y float64) float64 {
	switch {
	case y >= 3:
		return math.Min(99, math.Floor(y))
	default:
		return math.Floor(y*2) / 2
	}
}

// busiestZip is the home ZIP with the most of the account's applicants
// within miles of it: the heaviest radius search the data set allows.
func busiestZip(ctx context.Context, h *harness, a account, miles float64) (string, error) {
	var homes []struct {
		Zip       string
		Latitude  float64
		Longitude float64
		N         int
	}
	err := h.store.DB().SelectContext(ctx, &homes, `SELECT min(a.zip) AS zip, a.latitude, a.longitude, count(*) AS n
		FROM applications a
		WHERE a.account_id = $1 AND a.latitude IS NOT NULL
		GROUP BY a.latitude, a.longitude`, a.ID)
	if err != nil {
		return "", fmt.Errorf("home locations: %w", err)
	}
	best, bestN := "", -1
	for _, c := range homes {
		n := 0
		for _, o := range homes {
			if haversineMiles(c.Latitude, c.Longitude, o.Latitude, o.Longitude) <= miles {
				n += o.N
			}
		}
		if n > bestN || n == bestN && c.Zip < best {
			best, bestN = c.Zip, n
		}
	}
	if best == "" {
		return "", fmt.Errorf("account %d has no applicant with a known home ZIP", a.ID)
	}
	return best, nil
}

func haversineMiles(lat1, lon1, lat2, lon2 float64) float64 {
	rad := math.Pi / 180
	s := math.Pow(math.Sin((lat2-lat1)*rad/2), 2) +
		math.Cos(lat1*rad)*math.Cos(lat2*rad)*math.Pow(math.Sin((lon2-lon1)*rad/2), 2)
	return 2 * store.EarthRadiusMiles * math.Asin(math.Sqrt(s))
}

// inPlanSettings runs explain with the planner settings the service runs q
// with, in a transaction of their own: a serial query without parallel
// workers, and q's own setting.
func inPlanSettings(ctx context.Context, h *harness, q store.Query, explain func(sqlx.QueryerContext) error) error {
	var settings []string
	if q.Serial {
		settings = append(settings, store.SerialSetting)
	}
	if q.Setting != "" {
		settings = append(settings, q.Setting)
	}
	if len(settings) == 0 {
		return explain(h.store.DB())
	}
	tx, err := h.store.DB().BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // only read
	for _, s := range settings {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	return explain(tx)
}

// plan is what EXPLAIN (ANALYZE) said about one statement.
type plan struct {
	execution time.Duration // median over the runs without per-node timing
	root      planNode      // of the run with per-node timing
}

// planNode is the part of a node of PostgreSQL's JSON plan the scenario reads.
type planNode struct {
	NodeType   string     `json:"Node Type"`
	Relation   string     `json:"Relation Name"`
	Index      string     `json:"Index Name"`
	IndexCond  string     `json:"Index Cond"`
	ActualRows float64    `json:"Actual Rows"`            // per loop
	Removed    float64    `json:"Rows Removed by Filter"` // per loop
	Workers    float64    `json:"Workers Launched"`
	Loops      float64    `json:"Actual Loops"`
	TotalTime  float64    `json:"Actual Total Time"` // ms per loop, children included
	Plans      []planNode `json:"Plans"`
}

// explain runs the statement under EXPLAIN ANALYZE with the service's
// arguments, so the plan is the custom plan the service gets for those
// values: once with per-node timing for the plan, then runs times without it
// for the execution time, since reading the clock at every row of every
// node more than doubles the time of a count over tens of thousands of rows.
func explain(ctx context.Context, h *harness, q store.Query, runs int) (plan, error) {
	run := func(options string) (planNode, time.Duration, error) {
		var out []byte
		err := inPlanSettings(ctx, h, q, func(db sqlx.QueryerContext) error {
			return sqlx.GetContext(ctx, db, &out, `EXPLAIN (`+options+`) `+q.SQL, q.Args...)
		})
		if err != nil {
			return planNode{}, 0, err
		}
		var doc []struct {
			Plan      planNode `json:"Plan"`
			Execution float64  `json:"Execution Time"` // ms
		}
		if err := json.Unmarshal(out, &doc); err != nil || len(doc) != 1 {
			return planNode{}, 0, fmt.Errorf("read plan: %v: %.200s", err, out)
		}
		return doc[0].Plan, time.Duration(doc[0].Execution * float64(time.Millisecond)), nil
	}
	var p plan
	var err error
	if p.root, _, err = run("ANALYZE, FORMAT JSON"); err != nil {
		return p, err
	}
	var times []time.Duration
	for range runs {
		_, t, err := run("ANALYZE, TIMING OFF, FORMAT JSON")
		if err != nil {
			return p, err
		}
		times = append(times, t)
	}
	p.execution = summarize(times).median
	return p, nil
}

func (n planNode) walk(visit func(planNode)) {
	visit(n)
	for _, c := range n.Plans {
		c.walk(visit)
	}
}

// seqScans names the tables of the list read whole.
func (p plan) seqScans() []string {
	var out []string
	p.root.walk(func(n planNode) {
		switch n.Relation {
		case "applications", "job_applications", "jobs", "drivers":
			if n.NodeType == "Seq Scan" {
				out = append(out, fmt.Sprintf("Seq Scan on %s (%.0f rows)", n.Relation, n.ActualRows*math.Max(1, n.Loops)))
			}
		}
	})
	return out
}

// indexedOn reports whether an index scan of the plan has a condition on
// the column, or scans a partial index whose predicate holds it.
func (p plan) indexedOn(ctx context.Context, h *harness, column string) (bool, error) {
	var indexes []planNode
	p.root.walk(func(n planNode) {
		if n.Index != "" {
			indexes = append(indexes, n)
		}
	})
	for _, n := range indexes {
		if strings.Contains(n.IndexCond, column) {
			return true, nil
		}
		var pred *string
		if err := h.store.DB().GetContext(ctx, &pred,
			`SELECT pg_get_expr(indpred, indrelid) FROM pg_index WHERE indexrelid = $1::regclass`, n.Index); err != nil {
			return false, fmt.Errorf("predicate of %s: %w", n.Index, err)
		}
		if pred != nil && strings.Contains(*pred, column) {
			return true, nil
		}
	}
	return false, nil
}

// summary lists the plan's scans in the plan's order with the rows they
// returned and their time (instrumented, so inflated for many rows).
func (p plan) summary() string {
	var scans []string
	p.root.walk(func(n planNode) {
		if !strings.Contains(n.NodeType, "Scan") {
			return
		}
		s := n.NodeType
		if n.Index != "" {
			s += " " + n.Index
		} else if n.Relation != "" {
			s += " " + n.Relation
		}
		loops := math.Max(1, n.Loops)
		s += fmt.Sprintf(" %.0f rows", n.ActualRows*loops)
		if n.Loops > 1 {
			s += fmt.Sprintf(" in %.0f loops", n.Loops)
		}
		s += fmt.Sprintf(" %.2f ms", n.TotalTime*loops)
		scans = append(scans, s)
	})
	return strings.Join(scans, ", ")
}
