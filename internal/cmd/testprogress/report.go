package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// event is one line of `go test -json` (see go doc test2json); build
// events carry ImportPath instead of Package.
type event struct {
	Action      string
	Package     string
	Test        string
	Elapsed     float64
	Output      string
	ImportPath  string
	FailedBuild string
}

// pkgRun is what is known of one package's test binary.
type pkgRun struct {
	started time.Time
	shown   bool // its start line is printed
	// output holds each running top-level test's output events and its
	// subtests' ends until it ends: printed if it fails, dropped if not.
	output                 map[string][]event
	running                map[string]bool // top-level tests running now, not paused
	ownOut                 []string        // lines of the binary outside any test
	tests, skipped, failed int
	failedTests            []string
}

// report turns the events of `go test -json` into a few lines: a package's
// start, its end with its time, and each failure in full as go test would
// print it.
type report struct {
	out       io.Writer
	module    string // stripped from package paths
	begun     time.Time
	lastLine  time.Time
	pkgs      map[string]*pkgRun
	buildOut  map[string][]string // build and vet output by ImportPath
	passed    int                 // packages
	failed    []string            // packages, with what failed in them
	tests     int
	skipped   int
	anyFailed bool
}

func newReport(out io.Writer, module string, now time.Time) *report {
	return &report{out: out, module: module, begun: now, lastLine: now,
		pkgs: map[string]*pkgRun{}, buildOut: map[string][]string{}}
}

func (r *report) printf(now time.Time, format string, args ...any) {
	fmt.Fprintf(r.out, format, args...)
	r.lastLine = now
}

// short names a package as a path relative to the module's root.
func (r *report) short(pkg string) string {
	switch {
	case r.module != "" && pkg == r.module:
		return "."
	case r.module != "" && strings.HasPrefix(pkg, r.module+"/"):
		return "./" + strings.TrimPrefix(pkg, r.module+"/")
	}
	return pkg
}

func (r *report) handle(e event, now time.Time) {
	switch e.Action {
	case "build-output":
		r.buildOut[e.ImportPath] = append(r.buildOut[e.ImportPath], e.Output)
		return
	case "build-fail":
		return
	}
	p := r.pkgs[e.Package]
	if p == nil {
		p = &pkgRun{started: now, output: map[string][]event{}, running: map[string]bool{}}
		r.pkgs[e.Package] = p
	}
	if e.Test == "" {
		r.handlePackage(p, e, now)
		return
	}
	top, _, _ := strings.Cut(e.Test, "/")
	if !p.shown {
		// Shown once a test runs: a package without tests stays silent.
		r.printf(now, "start  %s\n", r.short(e.Package))
		p.shown = true
	}
	switch e.Action {
	case "run", "cont":
		p.running[top] = true
	case "pause":
		delete(p.running, top)
	case "output", "pass", "skip":
		// A subtest's end tells printFailure to leave its lines out.
		p.output[top] = append(p.output[top], e)
	}
	if e.Test != top || (e.Action != "pass" && e.Action != "fail" && e.Action != "skip") {
		return
	}
	delete(p.running, top)
	p.tests++
	switch e.Action {
	case "skip":
		p.skipped++
	case "fail":
		p.failed++
		p.failedTests = append(p.failedTests, top)
		r.printFailure(p.output[top], now)
	}
	delete(p.output, top)
}

// printFailure prints the output of a failed test and of its subtests, but
// for those that passed or were skipped.
func (r *report) printFailure(events []event, now time.Time) {
	ended := map[string]bool{}
	for _, e := range events {
		if e.Action == "pass" || e.Action == "skip" {
			ended[e.Test] = true
		}
	}
	for _, e := range events {
		if e.Action == "output" && !ended[e.Test] {
			r.printf(now, "%s", e.Output)
		}
	}
}

func (r *report) handlePackage(p *pkgRun, e event, now time.Time) {
	switch e.Action {
	case "output":
		p.ownOut = append(p.ownOut, e.Output)
		return
	case "pass":
		r.passed++
		r.tests += p.tests
		r.skipped += p.skipped
		r.printf(now, "ok     %s  %s  (%s)\n", r.short(e.Package), seconds(e.Elapsed), counts(p))
	case "fail":
		r.failPackage(p, e, now)
	case "skip": // no test files
	default:
		return
	}
	delete(r.pkgs, e.Package)
}

func (r *report) failPackage(p *pkgRun, e event, now time.Time) {
	r.anyFailed = true
	name := r.short(e.Package)
	if e.FailedBuild != "" {
		if out, ok := r.buildOut[e.FailedBuild]; ok {
			r.printf(now, "%s", strings.Join(out, ""))
			delete(r.buildOut, e.FailedBuild)
		} else {
			r.printf(now, "(the build of %s failed: its output is above)\n", e.FailedBuild)
		}
		r.printf(now, "FAIL   %s  [build failed]\n", name)
		r.failed = append(r.failed, name+" [build failed]")
		return
	}
	// Tests that never ended (the binary crashed or timed out) and the
	// binary's own output, which says why.
	for _, top := range slices.Sorted(maps.Keys(p.output)) {
		r.printFailure(p.output[top], now)
	}
	for _, l := range p.ownOut {
		if !isSummaryLine(l, e.Package) {
			r.printf(now, "%s", l)
		}
	}
	r.tests += p.tests
	r.skipped += p.skipped
	r.printf(now, "FAIL   %s  %s  (%s)\n", name, seconds(e.Elapsed), counts(p))
	what := name
	if len(p.failedTests) > 0 {
		what += " (" + strings.Join(p.failedTests, ", ") + ")"
	}
	r.failed = append(r.failed, what)
}

// isSummaryLine: the PASS, FAIL and "ok pkg" lines go test prints for a
// package, which the report's own line replaces.
func isSummaryLine(l, pkg string) bool {
	l = strings.TrimSuffix(l, "\n")
	return l == "PASS" || l == "FAIL" || strings.HasPrefix(l, "FAIL\t"+pkg+"\t") || strings.HasPrefix(l, "ok  \t"+pkg+"\t")
}

func counts(p *pkgRun) string {
	s := plural(p.tests, "test")
	if p.failed > 0 {
		s += fmt.Sprintf(", %d failed", p.failed)
	}
	if p.skipped > 0 {
		s += fmt.Sprintf(", %d skipped", p.skipped)
	}
	return s
}

// heartbeat prints what is running when nothing was printed for quiet:
// one package's tests can take minutes.
func (r *report) heartbeat(now time.Time, quiet time.Duration) {
	if now.Sub(r.lastLine) < quiet {
		return
	}
	var running []string
	for _, name := range slices.Sorted(maps.Keys(r.pkgs)) {
		p := r.pkgs[name]
		if !p.shown {
			continue
		}
		s := fmt.Sprintf("%s for %s, %s done", r.short(name), duration(now.Sub(p.started)), plural(p.tests, "test"))
		if tests := slices.Sorted(maps.Keys(p.running)); len(tests) > 0 {
			if len(tests) > 3 {
				tests = append(tests[:3], "...")
			}
			s += ", running " + strings.Join(tests, ", ")
		}
		running = append(running, s)
	}
	if len(running) == 0 {
		r.printf(now, "...    %s: building\n", duration(now.Sub(r.begun)))
		return
	}
	r.printf(now, "...    %s: %s\n", duration(now.Sub(r.begun)), strings.Join(running, "; "))
}

// summary is the last line: how many packages passed, or which failed.
func (r *report) summary(now time.Time) {
	took := duration(now.Sub(r.begun))
	if len(r.failed) > 0 {
		r.printf(now, "FAIL: %d of %s failed in %s: %s\n",
			len(r.failed), plural(len(r.failed)+r.passed, "package"), took, strings.Join(r.failed, "; "))
		return
	}
	skipped := ""
	if r.skipped > 0 {
		skipped = fmt.Sprintf(", %d skipped", r.skipped)
	}
	r.printf(now, "ok: %s passed (%s%s) in %s\n", plural(r.passed, "package"), plural(r.tests, "test"), skipped, took)
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func seconds(s float64) string { return duration(time.Duration(s * float64(time.Second))) }

func duration(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Truncate(time.Second).String()
}
