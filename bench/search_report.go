package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/truckjobs/jobboard/bench/svgplot"
)

// write puts the search run's report, its plot and its plans file in dir,
// named after the run's start.
func (r searchRun) write(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	base := strings.TrimSuffix(filepath.Base(reportPath("", r.started, r.quick)), ".md") + "-search"
	plot, err := r.writePlot(dir, base)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	r.writeHeader(&b, base)
	r.writeJudged(&b)
	r.writeNotMet(&b, base)
	r.writeCurves(&b, plot)
	var plans strings.Builder
	fmt.Fprintf(&plans, "# Plans of the search run %s\n\nEXPLAIN (ANALYZE, BUFFERS) of every statement the search ran for each kind's first page, at each point, in the order run.\n", base)
	for _, p := range r.points {
		for _, k := range p.kinds {
			fmt.Fprintf(&plans, "\n## %d jobs: %s (%d matches)\n", p.jobs, k.kind.name, k.exact)
			for i, st := range k.statements {
				sql := strings.TrimSpace(st.sql)
				if st.setting != "" {
					sql = st.setting + ";\n" + sql
				}
				fmt.Fprintf(&plans, "\nStatement %d:\n\n```sql\n%s\n```\n\n```\n%s\n```\n", i+1, sql, st.plan)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(dir, base+"-plans.md"), []byte(plans.String()), 0o644); err != nil {
		return "", err
	}
	path := filepath.Join(dir, base+".md")
	return path, os.WriteFile(path, []byte(b.String()), 0o644)
}

func (r searchRun) writeHeader(b *strings.Builder, base string) {
	runHeader{"Job search report", r.quick, r.started, r.finished, r.loadAtStart, r.loadAtEnd}.write(b)
	b.WriteString("- Server and harness share the machine, over loopback; PostgreSQL 15 with fsync on and its default settings " +
		"(128 MB of shared buffers: most of a million jobs is read from the system's page cache).\n")
	fmt.Fprintf(b, "- The jobs of %d accounts are posted to `jobs.json`, 1,000 a request, job i to account i mod %d, step by step; "+
		"after each step `VACUUM ANALYZE` leaves the tables as autovacuum would. The jobs are generated (bench/search_data.go): "+
		"titles of a route, a freight and a role, descriptions of 150 to 350 words, ZIP codes drawn from every US ZIP, fields with "+
		"a real board's skew.\n", searchAccounts, searchAccounts)
	fmt.Fprintf(b, "- Each kind gets %d sequential `SearchJobs` calls over gRPC with the internal token, fewer (at least %d) if they pass %s, "+
		"after one untimed call; a deep page is page %d, reached by its token. `total_size` is compared with a count of every match "+
		"made apart. Each statement the search ran for the kind's first page is explained: "+
		"[%s-plans.md](%s-plans.md).\n\n", searchRequests, searchMinRequests, searchBudget, searchDeepPage, base, base)
}

// writeJudged states the target at the largest point: every kind's p99
// under 50 ms, each statement backed by an index, and every total exact up
// to 10,000 matches and within 10% above.
func (r searchRun) writeJudged(b *strings.Builder) {
	if len(r.points) == 0 {
		return
	}
	last := r.points[len(r.points)-1]
	fmt.Fprintf(b, "## Judged, at %d jobs\n\n", last.jobs)
	// Where a call's time goes: the statements' own execution times, as
	// EXPLAIN ANALYZE measured them in one run apart, against the call's
	// median; the rest is the server, gRPC and the round trips.
	b.WriteString("| kind | matches | total_size | its error | facets: furthest value | p50 | p99 | statements: in PostgreSQL (slowest) | reads all jobs | target | met |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, k := range last.kinds {
		slowest, inDatabase := time.Duration(0), time.Duration(0)
		for _, st := range k.statements {
			slowest = max(slowest, st.took)
			inDatabase += st.took
		}
		total := fmt.Sprint(k.total)
		if k.estimated {
			total += " (estimate)"
		}
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s | %s | %d: %s (%s) | %s | p99 < %s, by indexes, total and facets %s | %s |\n",
			k.kind.name, k.exact, total, k.errorText(), k.facetsText(), ms(k.latency.median), ms(k.latency.p99), len(k.statements),
			planMs(inDatabase), planMs(slowest), yesNo(k.readsAllJobs()), searchTarget, "exact to 10,000, then within 10%",
			verdict(k.met(), r.quick))
	}
	b.WriteString("\n")
}

// met says whether the kind meets the target: p99 under it, no statement
// reading every job, and its total and facets as the contract holds them.
func (k kindResult) met() bool {
	return k.latency.p99 < searchTarget && !k.readsAllJobs() && k.totalHolds() && k.facetsHold()
}

// readsAllJobs says whether a statement of the kind read the jobs whole.
func (k kindResult) readsAllJobs() bool {
	return slices.ContainsFunc(k.statements, explained.seqScanOnJobs)
}

// writeNotMet says, of each kind not met at the largest point, where a
// call's time went: each statement's time in PostgreSQL, in the order run,
// with the tables it read (the plans are in the plans file), and the
// server's CPU profile over a further series of the kind's calls.
func (r searchRun) writeNotMet(b *strings.Builder, base string) {
	if len(r.points) == 0 {
		return
	}
	heading := "## Not met, and why\n\n"
	for _, k := range r.points[len(r.points)-1].kinds {
		if k.met() {
			continue
		}
		b.WriteString(heading)
		heading = ""
		fmt.Fprintf(b, "### %s\n\n- p50 %s, p99 %s; target p99 < %s, by indexes, total and facets exact to 10,000, then within 10%%.\n",
			k.kind.name, ms(k.latency.median), ms(k.latency.p99), searchTarget)
		var ran []string
		for i, st := range k.statements {
			ran = append(ran, fmt.Sprintf("%d: %s (%s)", i+1, planMs(st.took), strings.Join(st.tablesRead(), ", ")))
		}
		fmt.Fprintf(b, "- Statements in PostgreSQL, in the order run, by EXPLAIN ANALYZE run apart ([plans](%s-plans.md)), "+
			"with the tables each read: %s.\n", base, strings.Join(ran, "; "))
		b.WriteString(profileLine(k.profile, k.profiled, k.latency.median) + "\n\n")
	}
}

// searchPhases are the parts of a search's server CPU that a profile of a
// kind not met is split into: the store's counts and its page, which it
// reads on a goroutine of its own (the rest of the call is gRPC, the
// checks, the answer and the collector).
var searchPhases = []phase{
	{"the store's counts", "store.countsOn"},
	{"the store's page", "store.searchPage"},
}

// totalSamples finds the CPU time in pprof's totals ("Duration: 5s, Total
// samples = 580ms").
var totalSamples = regexp.MustCompile(`Total samples = ([0-9.]+[a-zµ]+)`)

// profileLine describes a kind's server CPU profile over the further
// calls made under it (calls of them): the server's CPU a call, against
// the call's median, and how the search's parts shared it.
func profileLine(path string, calls int, median time.Duration) string {
	if path == "" || calls == 0 {
		return "- No server CPU profile: it could not be taken."
	}
	split, err := profilePhases(path, searchPhases)
	if err != nil {
		return fmt.Sprintf("- Server CPU profile `%s` unreadable: %v.", path, err)
	}
	perCall := "unknown"
	if m := totalSamples.FindStringSubmatch(split); m != nil {
		if cpu, err := time.ParseDuration(m[1]); err == nil {
			perCall = ms(cpu / time.Duration(calls))
		}
	}
	return fmt.Sprintf("- Server CPU profile `%s` over %d further calls, one at a time: %s of the server's CPU a call, "+
		"against the calls' median of %s above; the rest of a call is PostgreSQL's and the round trips'. %s",
		path, calls, perCall, ms(median), split)
}

// scanOn finds the table a plan's line reads ("Index Scan using x on
// jobs j", "Bitmap Heap Scan on job_search_sample j"), or, with its first
// group set, what is no table: the index a bitmap is made of, a CTE, a
// subquery, a function, a VALUES list or a tuplestore.
var scanOn = regexp.MustCompile(
	`(Bitmap Index |CTE |Subquery |Function |Table Function |Values |WorkTable |Named Tuplestore )?Scan(?: Backward)?(?: using \S+)? on (\w+)`)

// tablesRead are the tables the statement's plan reads, each once, in the
// order the plan names them.
func (e explained) tablesRead() []string {
	var tables []string
	for _, m := range scanOn.FindAllStringSubmatch(e.plan, -1) {
		if m[1] == "" && !slices.Contains(tables, m[2]) {
			tables = append(tables, m[2])
		}
	}
	return tables
}

// totalHolds says whether the answered total keeps the contract: exact up
// to 10,000 matches, within 10% above.
func (k kindResult) totalHolds() bool {
	if k.exact <= 10_000 || !k.estimated {
		return k.total == k.exact
	}
	return math.Abs(float64(k.total-k.exact)) <= 0.1*float64(k.exact)
}

// facetsHold says whether the answered facets keep the contract: exact
// unless the answer says it holds estimates, then each value within 10%;
// exact, whatever it says, for a facet of 10,000 jobs or fewer.
func (k kindResult) facetsHold() bool {
	if k.facetsOff == "" {
		return true
	}
	return !k.facetSmallOff && k.estimated && k.facetsOffBy <= 0.1
}

func (k kindResult) facetsText() string {
	switch {
	case !k.facetsCounted:
		return "-"
	case k.facetsOff == "":
		return "every count exact"
	}
	return fmt.Sprintf("%s %.1f%% off", k.facetsOff, 100*k.facetsOffBy)
}

func (k kindResult) errorText() string {
	if k.exact == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", 100*float64(k.total-k.exact)/float64(k.exact))
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// writeCurves lists each kind's p50 and p99 at every point, and the post
// of 1,000 new jobs, the cost of keeping the search's words and indexes.
func (r searchRun) writeCurves(b *strings.Builder, plot string) {
	b.WriteString("## As the jobs grow\n\n")
	fmt.Fprintf(b, "![p99 of each kind](%s)\n\n| kind |", plot)
	for _, p := range r.points {
		fmt.Fprintf(b, " %d jobs: p50 / p99 (matches) |", p.jobs)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(r.points)) + "\n")
	for i, k := range r.points[0].kinds {
		fmt.Fprintf(b, "| %s |", k.kind.name)
		for _, p := range r.points {
			kr := p.kinds[i]
			fmt.Fprintf(b, " %s / %s (%d) |", ms(kr.latency.median), ms(kr.latency.p99), kr.exact)
		}
		b.WriteString("\n")
	}
	b.WriteString("| POST 1,000 new jobs to one account (its words and every search index written) |")
	for _, p := range r.points {
		fmt.Fprintf(b, " %s / %s (%d rounds) |", ms(p.post.median), ms(p.post.p99), p.post.n)
	}
	b.WriteString("\n| loading the step's jobs |")
	for i, p := range r.points {
		added := p.jobs
		if i > 0 {
			added -= r.points[i-1].jobs
		}
		fmt.Fprintf(b, " %d in %s (%.0f jobs/s) |", added, p.loaded.Round(time.Second), float64(added)/p.loaded.Seconds())
	}
	b.WriteString("\n")
}

// writePlot draws each kind's p99 against the number of jobs, with the
// target, and returns the file's name.
func (r searchRun) writePlot(dir, base string) (string, error) {
	msOf := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	p := svgplot.Plot{Title: "SearchJobs p99 by kind", XLabel: "active jobs", YLabel: "p99 (ms)"}
	if len(r.points) == 0 {
		return "", fmt.Errorf("no point measured")
	}
	for i, k := range r.points[0].kinds {
		s := svgplot.Series{Name: k.kind.name}
		for _, pt := range r.points {
			s.X, s.Y = append(s.X, float64(pt.jobs)), append(s.Y, msOf(pt.kinds[i].latency.p99))
		}
		p.Series = append(p.Series, s)
	}
	first, last := r.points[0].jobs, r.points[len(r.points)-1].jobs
	p.Series = append(p.Series, svgplot.Series{Name: "target " + searchTarget.String(), Dashed: true,
		X: []float64{float64(first), float64(last)}, Y: []float64{msOf(searchTarget), msOf(searchTarget)}})
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		return "", err
	}
	name := base + "-p99.svg"
	return name, os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644)
}
