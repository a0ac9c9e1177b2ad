package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/lib/pq"

	"github.com/truckjobs/jobboard/cmd/jobboard/demo"
	"github.com/truckjobs/jobboard/server"
	"github.com/truckjobs/jobboard/server/store"
)

// The scale run (go run ./bench -scale, make bench-scale) grows the data
// step by step and measures the same requests at each step, so the report
// shows how each one's cost grows: along one account's applications, and
// along the number of accounts (each one modest) sharing the database.

// Sizes of the scale run. Loading ran at 1,400 to 2,900 applications a
// second on two cores shared with other runs (each report records its
// rates), so the million applications of the grown account take 5 to 10
// minutes. Tenants get 1,000 applications and 100 jobs each: at that rate
// an account loads in about 0.4 s, so 1,000 of them take some 6 minutes and
// end, like the first curve, at a database of a million applications; the
// whole run took 27.5 minutes on the shared machine.
const (
	scaleAccountJobs   = 1_000   // the grown account's active jobs, fixed along its curve
	scaleSeedChunk     = 100_000 // applications per demo seed: one transaction's worth
	scaleTenantJobs    = 100     // each tenant's active jobs
	scaleTenantApps    = 1_000   // each tenant's applications
	scaleDriversTarget = 25 * time.Millisecond
)

// scaleCurve is one dimension the data grows along.
type scaleCurve struct {
	key, title, xLabel string
	points             []int
	// grow loads data until the curve's measure reaches x, from where the
	// previous point left it, and says how much it added.
	grow func(ctx context.Context, h *harness, x int) (loaded, error)
	// measured is the account the requests are made for.
	measured func() account
}

// loaded is what a growth step added, for the load rate.
type loaded struct {
	applications, accounts int
	took                   time.Duration
}

func (l loaded) String() string {
	s := fmt.Sprintf("%d applications", l.applications)
	if l.accounts > 0 {
		s = fmt.Sprintf("%d accounts and %s", l.accounts, s)
	}
	rate := float64(l.applications) / l.took.Seconds()
	return fmt.Sprintf("%s in %.1f s (%.0f applications/s)", s, l.took.Seconds(), rate)
}

// runScale measures every point of both curves and writes the report.
func runScale(ctx context.Context, opts options) error {
	h, err := setup(ctx, opts)
	if err != nil {
		return err
	}
	defer h.close()
	rep := scaleReport{quick: opts.quick, started: h.started, loadAtStart: loadAverage()}
	for i, c := range scaleCurves(h) {
		if i > 0 {
			// Each curve starts from an empty database, so one curve's
			// data does not weigh on the other's figures.
			if err := h.freshDatabase(ctx, "jobboard_"+c.key); err != nil {
				return err
			}
		}
		cr := curveResult{curve: c}
		for _, x := range c.points {
			slog.Info("scale: grow", "curve", c.key, "to", x)
			l, err := c.grow(ctx, h, x)
			if err != nil {
				return fmt.Errorf("%s, grow to %d: %w", c.key, x, err)
			}
			if err := h.vacuumAnalyze(ctx); err != nil {
				return err
			}
			slog.Info("scale: measure", "curve", c.key, "at", x, "loaded", l.String())
			p, err := measurePoint(ctx, h, c.measured(), x)
			if err != nil {
				return fmt.Errorf("%s at %d: %w", c.key, x, err)
			}
			p.loaded = l
			cr.points = append(cr.points, p)
		}
		rep.curves = append(rep.curves, cr)
	}
	rep.finished, rep.loadAtEnd = time.Now(), loadAverage()
	path, err := rep.write(opts.out)
	if err != nil {
		return err
	}
	fmt.Println(path)
	return nil
}

// scaleCurves are the two dimensions: one account's applications (the
// harness's first account, with a fixed set of jobs), then the number of
// accounts, each with the same modest data.
func scaleCurves(h *harness) []scaleCurve {
	appPoints, tenantPoints := []int{10_000, 100_000, 1_000_000}, []int{10, 100, 1_000}
	jobsPer := scaleAccountJobs
	if h.opts.quick {
		appPoints, tenantPoints, jobsPer = []int{1_000, 10_000}, []int{2, 5}, 100
	}
	seeded := 0 // applications of the grown account so far
	var tenants []account
	return []scaleCurve{{
		key: "applications", title: "One account's applications", xLabel: "applications of the account",
		points: appPoints,
		grow: func(ctx context.Context, h *harness, x int) (loaded, error) {
			t := time.Now()
			if seeded == 0 {
				h.jobsPer = jobsPer
				if err := h.loadJobs(ctx, h.accounts[0]); err != nil {
					return loaded{}, err
				}
			}
			added := x - seeded
			for seeded < x {
				n := min(scaleSeedChunk, x-seeded)
				if err := h.seed(ctx, h.accounts[0], n, seeded); err != nil {
					return loaded{}, err
				}
				seeded += n
			}
			return loaded{applications: added, took: time.Since(t)}, nil
		},
		measured: func() account { return h.accounts[0] },
	}, {
		key: "accounts", title: fmt.Sprintf("Accounts of %d applications and %d jobs each", scaleTenantApps, scaleTenantJobs),
		xLabel: "accounts", points: tenantPoints,
		grow: func(ctx context.Context, h *harness, x int) (loaded, error) {
			t := time.Now()
			added := x - len(tenants)
			for len(tenants) < x {
				a, err := h.tenant(ctx, len(tenants))
				if err != nil {
					return loaded{}, err
				}
				tenants = append(tenants, a)
			}
			return loaded{applications: added * scaleTenantApps, accounts: added, took: time.Since(t)}, nil
		},
		// The first tenant: the same account at every point, so only the
		// others' number changes.
		measured: func() account { return tenants[0] },
	}}
}

// seed adds n synthetic applications to the account through jobboard demo
// seed; from tells the chunks apart, so each brings new drivers.
func (h *harness) seed(ctx context.Context, a account, n, from int) error {
	_, err := h.jobboard(ctx, "demo", "seed", "--account", strconv.FormatInt(a.ID, 10),
		"--drivers", strconv.Itoa(n), "--seed", strconv.FormatInt(a.ID*1_000_000_000+int64(from), 10))
	return err
}

// tenant creates account i of the tenants curve with its jobs and
// applications. It works in the harness's own process, with the same code
// the administrative commands run: two commands a tenant would spend more
// time starting than loading.
func (h *harness) tenant(ctx context.Context, i int) (account, error) {
	creds, err := server.CreateAccount(ctx, h.store, fmt.Sprintf("Scale Tenant %04d", i))
	if err != nil {
		return account{}, err
	}
	a := account{ID: creds.AccountID, APIKey: creds.APIKey, Secret: creds.WebhookSecret}
	posted := jobs(0, scaleTenantJobs, "T", "Driver")
	if err := h.postJobs(ctx, a, marshalJobs(posted)); err != nil {
		return a, err
	}
	refs := make([]string, len(posted))
	for k, j := range posted {
		refs[k] = j.ReferenceNumber
	}
	seed := uint64(a.ID)
	apps := demo.Applications(a.ID, scaleTenantApps, seed, time.Now(), refs, fmt.Sprintf("t%x.", seed))
	return a, h.store.SeedApplications(ctx, a.ID, apps)
}

// vacuumAnalyze leaves the tables as autovacuum would after a while: fresh
// statistics and visibility maps, so the plans are those of a settled
// database rather than of one just bulk-loaded.
func (h *harness) vacuumAnalyze(ctx context.Context) error {
	t := time.Now()
	if _, err := h.store.DB().ExecContext(ctx, `VACUUM ANALYZE`); err != nil {
		return fmt.Errorf("vacuum analyze: %w", err)
	}
	slog.Info("scale: vacuum analyze", "seconds", time.Since(t).Seconds())
	return nil
}

// freshDatabase moves the harness to a new, migrated database with the
// server restarted on it, and drops the old one to give its disk back.
func (h *harness) freshDatabase(ctx context.Context, name string) error {
	h.server.stop()
	h.server = nil
	h.store.Close()
	h.store = nil
	old := h.dbURL
	if err := h.cluster.CreateDatabase(ctx, name); err != nil {
		return err
	}
	h.dbURL = h.cluster.URL(name)
	if _, err := h.jobboard(ctx, "migrate"); err != nil {
		return err
	}
	var err error
	if h.store, err = store.Open(ctx, h.dbURL); err != nil {
		return err
	}
	u, err := url.Parse(old)
	if err != nil {
		return err
	}
	oldName := strings.TrimPrefix(u.Path, "/")
	if _, err := h.store.DB().ExecContext(ctx, `DROP DATABASE `+pq.QuoteIdentifier(oldName)); err != nil {
		return fmt.Errorf("drop %s: %w", oldName, err)
	}
	h.server, err = h.startServer(ctx, "server-"+name)
	return err
}

// loadAverage is the machine's one-minute load average, as uptime shows
// it: the report says how busy the shared machine was.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
