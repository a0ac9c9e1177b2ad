package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/truckjobs/jobboard/bench/svgplot"
)

// curveResult is a curve's points, in the order measured.
type curveResult struct {
	curve  scaleCurve
	points []pointResult
}

type scaleReport struct {
	quick                  bool
	started, finished      time.Time
	loadAtStart, loadAtEnd string
	curves                 []curveResult
}

// write puts the report, its plots and its plans file in dir; the plots
// and plans are named after the report, so a run's files sort together.
func (r scaleReport) write(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	base := strings.TrimSuffix(filepath.Base(reportPath("", r.started, r.quick)), ".md") + "-scale"
	var b strings.Builder
	r.writeHeader(&b, base)
	r.writeJudged(&b)
	for _, c := range r.curves {
		plots, err := c.writePlots(dir, base)
		if err != nil {
			return "", err
		}
		c.writeSection(&b, plots)
	}
	var plans strings.Builder
	fmt.Fprintf(&plans, "# Plans of the scale run %s\n\nEXPLAIN (ANALYZE, BUFFERS) of the two statements the service runs for each request, at each point.\n", base)
	for _, c := range r.curves {
		c.writePlans(&plans)
	}
	if err := os.WriteFile(filepath.Join(dir, base+"-plans.md"), []byte(plans.String()), 0o644); err != nil {
		return "", err
	}
	path := filepath.Join(dir, base+".md")
	return path, os.WriteFile(path, []byte(b.String()), 0o644)
}

// runHeader is the first lines of a growing run's report: its title, when
// it ran and on what machine, under what load.
type runHeader struct {
	title                  string
	quick                  bool
	started, finished      time.Time
	loadAtStart, loadAtEnd string
}

func (h runHeader) write(b *strings.Builder) {
	title := h.title
	if h.quick {
		title += " (quick run: small sizes; targets not judged)"
	}
	fmt.Fprintf(b, "# %s\n\n", title)
	fmt.Fprintf(b, "- Started %s, took %s.\n", h.started.UTC().Format(time.RFC3339), h.finished.Sub(h.started).Round(time.Second))
	fmt.Fprintf(b, "- Machine: %s, %d cores (GOMAXPROCS %d), %s; load average (1, 5, 15 min) %s at the start, %s at the end.\n",
		cpuModel(), runtime.NumCPU(), runtime.GOMAXPROCS(0), memTotal(), h.loadAtStart, h.loadAtEnd)
}

func (r scaleReport) writeHeader(b *strings.Builder, base string) {
	runHeader{"Scale report", r.quick, r.started, r.finished, r.loadAtStart, r.loadAtEnd}.write(b)
	b.WriteString("- Server and harness share the machine, over loopback; PostgreSQL 15 with fsync on and its default settings.\n")
	b.WriteString("- The data grows step by step along each curve; after each step `VACUUM ANALYZE` leaves the tables " +
		"as autovacuum would, then every request is measured again. Applications come from `jobboard demo seed` " +
		fmt.Sprintf("(at most %d per transaction), jobs from posts to `jobs.json`. ", scaleSeedChunk) +
		"The second curve starts from an empty database.\n")
	fmt.Fprintf(b, "- Each drivers filter of scenario 4 (values picked from the data at each point the same way), and each of %d "+
		"combinations of two and three of them with those values in each of the %d sort orders, gets %d sequential "+
		"requests, fewer (at least %d) if they pass %s; `X-Total-Count` is compared with a count of the matches made through "+
		"the page statement without its limit, independent of the count statement the service answers with. GET jobs.json "+
		"and the post of 1,000 new jobs run %d and %d rounds after a warm-up (quick: 3 each).\n",
		len(combinationFilters), len(combinationSorts), scaleRequests, scaleMinRequests, scaleBudget, 10, 5)
	fmt.Fprintf(b, "- Plans (EXPLAIN ANALYZE, BUFFERS) of every request at every point: [%s-plans.md](%s-plans.md).\n\n", base, base)
}

// writeJudged states the target rows: every drivers filter at the largest
// point of the applications curve, and the totals at every point.
func (r scaleReport) writeJudged(b *strings.Builder) {
	b.WriteString("## Judged\n\n| measurement | p50 | p99 | X-Total-Count | target | met | why, from the plans |\n|---|---|---|---|---|---|---|\n")
	checks, exact := 0, 0
	for _, c := range r.curves {
		for _, p := range c.points {
			for _, f := range p.drivers {
				checks++
				if f.isExact() {
					exact++
				}
			}
		}
	}
	for _, c := range r.curves {
		if c.curve.key != "applications" || len(c.points) == 0 {
			continue
		}
		last := c.points[len(c.points)-1]
		for _, f := range last.drivers {
			if f.reference {
				continue
			}
			pass := f.latency.p99 < scaleDriversTarget && f.isExact()
			why := "-"
			if !pass {
				why = fmt.Sprintf("count %s reading %s%s; page %s reading %s%s%s", planMs(f.count.execution), rowsText(rowsRead(f.count)),
					parallelText(f.count), planMs(f.page.execution), rowsText(rowsRead(f.page)), parallelText(f.page), sortText(f.page, f.pageText))
			}
			fmt.Fprintf(b, "| drivers.json %s, %d applications (%d matches, %d requests) | %s | %s | %s | p99 < %s, exact | %s | %s |\n",
				f.name, last.x, f.exact, f.latency.n, ms(f.latency.median), ms(f.latency.p99), totalCell(f),
				ms(scaleDriversTarget), verdict(pass, r.quick), why)
		}
	}
	fmt.Fprintf(b, "| X-Total-Count of every request at every point of both curves | - | - | %d of %d exact | all exact | %s | - |\n\n",
		exact, checks, verdict(exact == checks, r.quick))
}

func totalCell(f filterResult) string {
	if f.isExact() {
		return "exact (" + f.header + ")"
	}
	return fmt.Sprintf("**%q, %d matches**", f.header, f.exact)
}

func verdict(pass, quick bool) string {
	switch {
	case quick:
		return "(quick)"
	case pass:
		return "yes"
	default:
		return "**no**"
	}
}

// filterKey names a drivers case apart from the values picked at a point.
func filterKey(f filterResult) string {
	if f.key != "" {
		return f.key
	}
	if f.reference {
		return f.name
	}
	k, _, _ := strings.Cut(f.name, "=")
	return k
}

func (c curveResult) writeSection(b *strings.Builder, plots []string) {
	fmt.Fprintf(b, "## %s\n\n| %s | added | load average | applications in the database |\n|---|---|---|---|\n", c.curve.title, c.curve.xLabel)
	for _, p := range c.points {
		fmt.Fprintf(b, "| %d | %s | %s | %d |\n", p.x, p.loaded, p.load, p.applications)
	}
	b.WriteString("\n")
	for _, p := range plots {
		fmt.Fprintf(b, "![%s](%s)\n\n", strings.TrimSuffix(p, ".svg"), p)
	}
	fmt.Fprintf(b, "drivers.json, p50 / p99 and matches, at each number of %s:\n\n| filter |", c.curve.xLabel)
	for _, p := range c.points {
		fmt.Fprintf(b, " %d |", p.x)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(c.points)) + "\n")
	for i, key := range c.filterKeys() {
		fmt.Fprintf(b, "| %s |", key)
		for _, p := range c.points {
			f := p.drivers[i]
			fmt.Fprintf(b, " %s / %s (%d) |", ms(f.latency.median), ms(f.latency.p99), f.exact)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n| requests |")
	for _, p := range c.points {
		fmt.Fprintf(b, " %d |", p.x)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(c.points)) + "\n| GET jobs.json, p50 / p99 (jobs) |")
	for _, p := range c.points {
		fmt.Fprintf(b, " %s / %s (%d) |", ms(p.list.median), ms(p.list.p99), p.listedJobs)
	}
	b.WriteString("\n| POST 1,000 new jobs, p50 / p99 |")
	for _, p := range c.points {
		fmt.Fprintf(b, " %s / %s |", ms(p.post.median), ms(p.post.p99))
	}
	b.WriteString("\n\n")
	c.writeGrowth(b)
}

// filterKeys are the drivers cases in the order measured (the same at
// every point).
func (c curveResult) filterKeys() []string {
	var keys []string
	if len(c.points) > 0 {
		for _, f := range c.points[0].drivers {
			keys = append(keys, filterKey(f))
		}
	}
	return keys
}

// writeGrowth explains each filter's growth from its plans: the rows the
// count and the page read, and how the page is ordered.
func (c curveResult) writeGrowth(b *strings.Builder) {
	b.WriteString("What the plans show at each point (execution time without per-node timing; rows the scans read (returned or discarded by a filter), all loops; the page's sorts, with the rows each sorted):\n\n")
	for i, key := range c.filterKeys() {
		var steps []string
		for _, p := range c.points {
			f := p.drivers[i]
			steps = append(steps, fmt.Sprintf("%d: count %s reading %s%s, page %s reading %s%s%s", p.x,
				planMs(f.count.execution), rowsText(rowsRead(f.count)), parallelText(f.count),
				planMs(f.page.execution), rowsText(rowsRead(f.page)), parallelText(f.page), sortText(f.page, f.pageText)))
		}
		fmt.Fprintf(b, "- **%s**: %s. %s\n", key, strings.Join(steps, "; "), c.growthVerdict(i))
	}
	b.WriteString("\n")
}

// growthVerdict says, from the first and last points, whether the count
// and the page read in proportion to the matches or a bounded number of
// rows.
func (c curveResult) growthVerdict(i int) string {
	if len(c.points) < 2 {
		return ""
	}
	first, last := c.points[0].drivers[i], c.points[len(c.points)-1].drivers[i]
	var says []string
	grew := func(what string, a, b float64) {
		switch {
		case a > 0 && b/a > 3:
			says = append(says, fmt.Sprintf("the %s reads %.0fx more rows", what, b/a))
		default:
			says = append(says, fmt.Sprintf("the %s reads about as many rows", what))
		}
	}
	says = append(says, fmt.Sprintf("Matches %d → %d", first.exact, last.exact))
	grew("count", rowsRead(first.count), rowsRead(last.count))
	grew("page", rowsRead(first.page), rowsRead(last.page))
	return strings.Join(says, "; ") + "."
}

// rowsRead adds up the rows the plan's scans read over all loops: those
// they returned and those their filter discarded. A bitmap index scan is
// left out, as its heap scan above reads the same rows.
func rowsRead(p plan) float64 {
	total := 0.0
	p.root.walk(func(n planNode) {
		if strings.Contains(n.NodeType, "Scan") && n.NodeType != "Bitmap Index Scan" {
			total += (n.ActualRows + n.Removed) * math.Max(1, n.Loops)
		}
	})
	return total
}

// parallelText says how many workers a plan started, if any: on a busy
// machine their start can cost more than the work they share.
func parallelText(p plan) string {
	workers := 0.0
	p.root.walk(func(n planNode) { workers += n.Workers })
	if workers == 0 {
		return ""
	}
	return fmt.Sprintf(" with %.0f parallel workers", workers)
}

// planMs shows a statement's time to the hundredth of a millisecond, as
// the counts of small points take a fraction of one.
func planMs(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

func rowsText(n float64) string {
	switch {
	case n >= 1e6:
		return fmt.Sprintf("%.2fM rows", n/1e6)
	case n >= 1e4:
		return fmt.Sprintf("%.0fk rows", n/1e3)
	default:
		return fmt.Sprintf("%.0f rows", n)
	}
}

// sortText lists the plan's sorts with the rows each one sorted: the
// rows from the JSON plan, the methods from the text one, both in the
// plan's depth-first order.
func sortText(p plan, text string) string {
	var methods []string
	for _, line := range strings.Split(text, "\n") {
		if _, m, ok := strings.Cut(line, "Sort Method: "); ok {
			m, _, _ = strings.Cut(m, "Memory")
			methods = append(methods, strings.TrimSpace(m))
		}
	}
	var sorts []string
	p.root.walk(func(n planNode) {
		if !strings.HasSuffix(n.NodeType, "Sort") || len(n.Plans) == 0 {
			return
		}
		s := "sort of " + strings.TrimSuffix(rowsText(n.Plans[0].ActualRows*math.Max(1, n.Plans[0].Loops)), " rows")
		if k := len(sorts); k < len(methods) {
			s += " by " + methods[k]
		}
		sorts = append(sorts, s)
	})
	if len(sorts) == 0 {
		return ""
	}
	return " (" + strings.Join(sorts, ", ") + ")"
}

// writePlots draws the curve's three plots beside the report and returns
// their file names.
func (c curveResult) writePlots(dir, base string) ([]string, error) {
	xLabel := c.curve.xLabel
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	var plots []svgplot.Plot
	for _, q := range []struct {
		name string
		of   func(stats) time.Duration
	}{{"p99", func(s stats) time.Duration { return s.p99 }}, {"p50", func(s stats) time.Duration { return s.median }}} {
		p := svgplot.Plot{Title: fmt.Sprintf("drivers.json %s by filter: %s", q.name, strings.ToLower(c.curve.title)), XLabel: xLabel, YLabel: q.name + " (ms)"}
		for i, key := range c.filterKeys() {
			if c.points[0].drivers[i].key != "" {
				continue // combinations are in the tables: dozens of lines would hide the rest
			}
			s := svgplot.Series{Name: key}
			for _, pt := range c.points {
				s.X, s.Y = append(s.X, float64(pt.x)), append(s.Y, ms(q.of(pt.drivers[i].latency)))
			}
			p.Series = append(p.Series, s)
		}
		if c.curve.key == "applications" && q.name == "p99" && len(c.points) > 0 {
			p.Series = append(p.Series, svgplot.Series{Name: "target " + scaleDriversTarget.String(), Dashed: true,
				X: []float64{float64(c.points[0].x), float64(c.points[len(c.points)-1].x)},
				Y: []float64{ms(scaleDriversTarget), ms(scaleDriversTarget)}})
		}
		plots = append(plots, p)
	}
	jobs := svgplot.Plot{Title: "jobs.json: list and 1,000-job post, " + strings.ToLower(c.curve.title), XLabel: xLabel, YLabel: "ms"}
	for _, s := range []struct {
		name string
		of   func(pointResult) time.Duration
	}{
		{"GET jobs.json p50", func(p pointResult) time.Duration { return p.list.median }},
		{"GET jobs.json p99", func(p pointResult) time.Duration { return p.list.p99 }},
		{"POST 1,000 jobs p50", func(p pointResult) time.Duration { return p.post.median }},
		{"POST 1,000 jobs p99", func(p pointResult) time.Duration { return p.post.p99 }},
	} {
		series := svgplot.Series{Name: s.name}
		for _, pt := range c.points {
			series.X, series.Y = append(series.X, float64(pt.x)), append(series.Y, ms(s.of(pt)))
		}
		jobs.Series = append(jobs.Series, series)
	}
	plots = append(plots, jobs)
	var names []string
	for i, p := range plots {
		name := fmt.Sprintf("%s-%s-%s.svg", base, c.curve.key, []string{"drivers-p99", "drivers-p50", "jobs"}[i])
		var buf bytes.Buffer
		if err := p.Write(&buf); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	return names, nil
}

func (c curveResult) writePlans(b *strings.Builder) {
	fmt.Fprintf(b, "\n## %s\n", c.curve.title)
	for _, p := range c.points {
		for _, f := range p.drivers {
			fmt.Fprintf(b, "\n### %d %s: %s (%d matches)\n\nPage:\n\n```\n%s\n```\n\nCount:\n\n```\n%s\n```\n",
				p.x, c.curve.xLabel, f.name, f.exact, f.pageText, f.countText)
		}
	}
}
