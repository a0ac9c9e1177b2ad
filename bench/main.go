// Command bench measures the service: it starts its own PostgreSQL, loads a
// realistic data set, runs the real server binary, drives each scenario over
// loopback, measures the floor for the same work in the same run, and writes
// a Markdown report to bench/results/.
//
//	go run ./bench          # the full run (make bench)
//	go run ./bench -quick   # a one-minute smoke run (make bench-quick, in CI)
//	go run ./bench -scale   # cost curves as the data grows (make bench-scale; scale.go)
//	go run ./bench -search  # job search as the jobs grow to a million (make bench-search; search.go)
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"time"
)

type options struct {
	quick  bool
	scale  bool
	search bool
	out    string
	only   map[int]bool
	rounds int
	// server is a jobboard binary to measure in place of the one built from
	// this tree: another version's, to compare the two on one machine.
	server string
}

func main() {
	var opts options
	var only intList
	flag.BoolVar(&opts.quick, "quick", false, "small data set and short runs: checks the harness works, not the targets")
	flag.BoolVar(&opts.scale, "scale", false, "instead of the scenarios, measure the drivers filters, the jobs list and a post as the data grows")
	flag.BoolVar(&opts.search, "search", false, "instead of the scenarios, measure job search (SearchJobs) as the jobs of 100 accounts grow to a million")
	flag.StringVar(&opts.out, "out", "bench/results", "folder for the report")
	flag.Var(&only, "only", "run only these scenarios (comma-separated numbers)")
	flag.IntVar(&opts.rounds, "rounds", 0, "repetitions of each timed step (default 15, quick 3)")
	flag.StringVar(&opts.server, "server", "", "a jobboard binary to measure instead of this tree's (another version's, for a before-and-after comparison)")
	flag.Parse()
	opts.only = map[int]bool{}
	for _, n := range only {
		opts.only[n] = true
	}
	if opts.rounds <= 0 {
		opts.rounds = 15
		if opts.quick {
			opts.rounds = 3
		}
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, nil)))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	runner := run
	switch {
	case opts.scale:
		runner = runScale
	case opts.search:
		runner = runSearchScale
	}
	if err := runner(ctx, opts); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, opts options) error {
	h, err := setup(ctx, opts)
	if err != nil {
		return err
	}
	defer h.close()
	rep := report{quick: opts.quick, started: h.started, setup: h.setupNotes}
	failed := false
	for _, s := range registered() {
		if len(opts.only) > 0 && !opts.only[s.id] {
			continue
		}
		// Each scenario starts from a database at rest, whatever the one
		// before it wrote.
		if err := h.settle(ctx); err != nil {
			return err
		}
		slog.Info("scenario", "id", s.id, "name", s.name)
		rows, err := s.run(ctx, h)
		if err != nil {
			return fmt.Errorf("scenario %d (%s): %w", s.id, s.name, err)
		}
		for _, r := range rows {
			r.scenario = s.id
			if !opts.quick && r.target != "" && !r.pass {
				failed = true
			}
			rep.rows = append(rep.rows, r)
		}
	}
	rep.finished = time.Now()
	rep.profiles = h.profiles
	path, err := rep.write(opts.out)
	if err != nil {
		return err
	}
	fmt.Println(path)
	if failed {
		slog.Warn("some targets were missed; see the report", "report", path)
	}
	return nil
}

// scenario is one numbered row group of the report.
type scenario struct {
	id   int
	name string
	run  func(ctx context.Context, h *harness) ([]result, error)
}

var scenarios []scenario

// register adds a scenario; each lives in its own file.
func register(id int, name string, run func(ctx context.Context, h *harness) ([]result, error)) {
	scenarios = append(scenarios, scenario{id, name, run})
}

func registered() []scenario {
	s := slices.Clone(scenarios)
	slices.SortFunc(s, func(a, b scenario) int { return a.id - b.id })
	return s
}

// reportPath names a report by its start time.
func reportPath(dir string, t time.Time, quick bool) string {
	name := t.UTC().Format("2006-01-02T150405Z")
	if quick {
		name += "-quick"
	}
	return filepath.Join(dir, name+".md")
}
