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
	// row that misses its target shows its top costs from it.
	profile string
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
			row.note = strings.TrimSpace(row.note+" "+profileNote(row.profile)) + " "
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
// functions' own time and by time including their callees, so a row not met
// says where the server spent its time.
func profileNote(path string) string {
	own, err := profileTop(path, false)
	if err != nil {
		return fmt.Sprintf("Profile %s unreadable: %v.", path, err)
	}
	cum, err := profileTop(path, true)
	if err != nil {
		return fmt.Sprintf("Profile %s unreadable: %v.", path, err)
	}
	return fmt.Sprintf("Not met; server CPU profile `%s`, top own time: %s; top including callees: %s.",
		path, strings.Join(own, ", "), strings.Join(cum, ", "))
}

// profileTopN is how many functions a row's profile note names per list.
const profileTopN = 8

// profileTop lists the first functions of `go tool pprof -top`, each with
// its share of the profile's samples ("name 12.3%"); cum sorts them by the
// time including their callees, in which case the program's entry points,
// which include everything, are left out.
func profileTop(path string, cum bool) ([]string, error) {
	args := []string{"tool", "pprof", "-top", "-nodecount=" + strconv.Itoa(profileTopN+8)}
	if cum {
		args = append(args, "-cum")
	}
	out, err := exec.Command("go", append(args, path)...).Output()
	if err != nil {
		return nil, err
	}
	var top []string
	header := false
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if !header {
			header = len(f) == 5 && f[0] == "flat" && f[4] == "cum%"
			continue
		}
		if len(f) < 6 || len(top) == profileTopN {
			continue
		}
		name, share := strings.Join(f[5:], " "), f[1]
		if cum {
			share = f[4]
			if share == "100%" || strings.HasPrefix(name, "runtime.goexit") || name == "runtime.main" {
				continue
			}
		}
		top = append(top, name+" "+share)
	}
	if !header {
		return nil, fmt.Errorf("no table in go tool pprof's output")
	}
	return top, nil
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
