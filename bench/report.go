package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// result is one row of the report.
type result struct {
	scenario   int
	name       string
	median     time.Duration
	p99        time.Duration
	throughput float64 // requests per second, 0 when not a load run
	floor      string  // the floor's figure, as text
	ratio      float64 // the service over the floor, in the target's sense; 0 when none
	target     string
	pass       bool
	note       string
	// profile is the server's CPU profile taken during the row, if any: a
	// row that misses its target shows its top costs from it, and the
	// shares of its phases, when the row names them.
	profile string
	phases  []phase
	// layers compares the row's server CPU with its floor's, layer by
	// layer (layersNote); a row that misses its target shows it.
	layers string
}

type report struct {
	quick             bool
	started, finished time.Time
	setup             []string
	rows              []result
	profiles          []string
}

func (r report) write(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := reportPath(dir, r.started, r.quick)
	var b strings.Builder
	title := "Benchmark report"
	if r.quick {
		title += " (quick run: small data, short runs; targets not judged)"
	}
	fmt.Fprintf(&b, "# %s\n\n", title)
	fmt.Fprintf(&b, "- Started %s, took %s.\n", r.started.UTC().Format(time.RFC3339), r.finished.Sub(r.started).Round(time.Second))
	fmt.Fprintf(&b, "- Machine: %s, %d cores (GOMAXPROCS %d), %s.\n", cpuModel(), runtime.NumCPU(), runtime.GOMAXPROCS(0), memTotal())
	fmt.Fprintf(&b, "- Server, floors and load generator share the machine, over loopback; PostgreSQL 15 with fsync on.\n")
	for _, s := range r.setup {
		fmt.Fprintf(&b, "- %s\n", s)
	}
	b.WriteString("\n| # | measurement | median | p99 | throughput | floor | ratio | target | met |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, row := range r.rows {
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", row.scenario, row.name,
			dur(row.median), dur(row.p99), rate(row.throughput), orDash(row.floor), ratio(row.ratio),
			orDash(row.target), met(row, r.quick))
	}
	var notes []string
	for _, row := range r.rows {
		if row.target != "" && !row.pass && row.profile != "" {
			row.note = strings.TrimSpace(row.note+" "+profileNote(row.profile, row.phases)+" "+row.layers) + " "
		}
		if row.note != "" {
			notes = append(notes, fmt.Sprintf("- %d, %s: %s", row.scenario, row.name, row.note))
		}
	}
	if len(notes) > 0 {
		b.WriteString("\nNotes:\n\n" + strings.Join(notes, "\n") + "\n")
	}
	if len(r.profiles) > 0 {
		b.WriteString("\nServer CPU profiles (`go tool pprof -top bin/jobboard FILE`):\n\n")
		for _, p := range r.profiles {
			fmt.Fprintf(&b, "- `%s`\n", p)
		}
	}
	return path, os.WriteFile(path, []byte(b.String()), 0o644)
}

// profileNote names the top costs of a row's CPU profile, by the
// functions' own time and by time including their callees, and the share of
// each of the row's phases when it names them, so a row not met says where
// the server spent its time.
func profileNote(path string, phases []phase) string {
	own, err := profileTop(path, false)
	if err != nil {
		return fmt.Sprintf("Profile %s unreadable: %v.", path, err)
	}
	cum, err := profileTop(path, true)
	if err != nil {
		return fmt.Sprintf("Profile %s unreadable: %v.", path, err)
	}
	note := fmt.Sprintf("Not met; server CPU profile `%s`, top own time: %s; top including callees: %s.",
		path, strings.Join(own, ", "), strings.Join(cum, ", "))
	if len(phases) == 0 {
		return note
	}
	split, err := profilePhases(path, phases)
	if err != nil {
		return note + fmt.Sprintf(" Phases unreadable: %v.", err)
	}
	return note + " " + split
}

// profileTopN is how many functions a row's profile note names per list.
const profileTopN = 8

// profileTop lists the first functions of `go tool pprof -top`, each with
// its share of the profile's samples ("name 12.3%"); cum sorts them by the
// time including their callees, in which case the program's entry points,
// which include everything, are left out.
func profileTop(path string, cum bool) ([]string, error) {
	rows, _, err := pprofRows(path, cum, profileTopN+8)
	if err != nil {
		return nil, err
	}
	var top []string
	for _, r := range rows {
		if len(top) == profileTopN {
			break
		}
		share := r.flat
		if cum {
			share = r.cum
			if share == "100%" || strings.HasPrefix(r.name, "runtime.goexit") || r.name == "runtime.main" {
				continue
			}
		}
		top = append(top, r.name+" "+share)
	}
	return top, nil
}

// phase is a part of the server's work that a row's profile is split into:
// the samples in the first function whose name contains fn, callees
// included.
type phase struct{ label, fn string }

// profilePhases says what share of a profile's samples each phase took,
// and how much CPU time the profile sampled over how long: where a row's
// server time went, in the row's own terms.
func profilePhases(path string, phases []phase) (string, error) {
	rows, totals, err := pprofRows(path, true, 0)
	if err != nil {
		return "", err
	}
	var shares []string
	for _, ph := range phases {
		share := "0%"
		for _, r := range rows {
			if strings.Contains(r.name, ph.fn) {
				share = r.cum
				break
			}
		}
		shares = append(shares, ph.label+" "+share)
	}
	return fmt.Sprintf("Of the server's CPU samples (%s): %s.", totals, strings.Join(shares, ", ")), nil
}

// pprofRow is a line of `go tool pprof -top`: a function and its shares of
// the samples, its own and with its callees.
type pprofRow struct{ name, flat, cum string }

// pprofRows reads the first n lines (0: all) of `go tool pprof -top`, by
// own time or, with cum, by time including callees, and the profile's
// totals as pprof states them ("Duration: 13s, Total samples = 1.74s").
func pprofRows(path string, cum bool, n int) ([]pprofRow, string, error) {
	args := []string{"tool", "pprof", "-top", "-nodecount=" + strconv.Itoa(n)}
	if cum {
		args = append(args, "-cum")
	}
	out, err := exec.Command("go", append(args, path)...).Output()
	if err != nil {
		return nil, "", err
	}
	var rows []pprofRow
	var totals string
	header := false
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if !header {
			if strings.HasPrefix(line, "Duration:") {
				// "Duration: 13s, Total samples = 1.74s (13.38%)"
				totals, _, _ = strings.Cut(line, " (")
			}
			header = len(f) == 5 && f[0] == "flat" && f[4] == "cum%"
			continue
		}
		if len(f) >= 6 {
			rows = append(rows, pprofRow{name: strings.Join(f[5:], " "), flat: f[1], cum: f[4]})
		}
	}
	if !header {
		return nil, "", fmt.Errorf("no table in go tool pprof's output")
	}
	return rows, totals, nil
}

func dur(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return ms(d)
}

func rate(r float64) string {
	if r == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f/s", r)
}

func ratio(x float64) string {
	if x == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", x)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func met(r result, quick bool) string {
	switch {
	case r.target == "":
		return "-"
	case quick:
		return "(quick)"
	case r.pass:
		return "yes"
	default:
		return "**no**"
	}
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if name, value, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(name) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return runtime.GOARCH
}

func memTotal() string {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return "memory unknown"
	}
	var kb int64
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "MemTotal:") {
			fmt.Sscanf(strings.TrimPrefix(line, "MemTotal:"), "%d", &kb)
		}
	}
	return fmt.Sprintf("%.0f GiB RAM", float64(kb)/(1<<20))
}
