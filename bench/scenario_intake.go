package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/truckjobs/jobboard/server/drivers"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/truckjobs/jobboard/cmd/jobboard/demo"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/server/intake"
	"github.com/truckjobs/jobboard/server/natural"
	"github.com/truckjobs/jobboard/server/store"
)

func init() {
	register(9, "driver applications: SubmitApplications against drivers import", intakeScenario)
}

// benchInternalToken is the internal token the harness's servers take, for
// the scenarios that call the internal intake.
const benchInternalToken = "bench-internal-token"

// intakeJobs is how many jobs the intake's account has for applications to name.
const intakeJobs = 200

// intakeRun is one way of taking applications in, timed.
type intakeRun struct {
	name  string
	times []time.Duration
}

// intakeScenario measures the intake against its floor (intakeFloor),
// the same applications written set-based by a program of its own: 10,000
// applications through DriverIntakeService.SubmitApplications in calls of
// 1,000 against the floor in transactions of 1,000, and `jobboard drivers
// import` of them as one file, the three taking turns on the same database;
// SubmitApplication one call at a time against the floor of one
// application, call and floor alternating; and 100,000 applications by
// drivers import against the floor of them in one transaction.
func intakeScenario(ctx context.Context, h *harness) ([]result, error) {
	// Quick: one call's worth, so the scenario adds some ten seconds.
	// Five rounds: with three, the ratio of the two medians was 1.03x to
	// 1.66x in four runs (one round of the import took three times its
	// median), and rested on one pair.
	n, rounds, singles, large := 10_000, max(1, h.opts.rounds/3), 500, 100_000
	if h.opts.quick {
		n, singles, large = drivers.MaxBatchApplications, 50, 0
	}
	a, err := h.newAccount(ctx, "Bench Intake")
	if err != nil {
		return nil, err
	}
	if err := h.postJobs(ctx, a, jobsJSON(0, intakeJobs, "IN", "Driver")); err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient(h.server.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	intake := jobboardv2.NewDriverIntakeServiceClient(conn)
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+benchInternalToken,
		"x-account-id", strconv.FormatInt(a.ID, 10))
	db := h.store.DB()

	batch, floor, cli := intakeRun{name: "batch"}, intakeRun{name: "floor"}, intakeRun{name: "import"}
	var profile string
	// Round 0 is a small untimed warm-up of every way. Each way gets
	// addresses of its own, so each stores new drivers; the rest of each
	// application is the same.
	for r := 0; r <= rounds; r++ {
		size := n
		if r == 0 {
			size = 100
		}
		apps := func(way string) []store.Application {
			return intakeSet(a.ID, size, uint64(r), fmt.Sprintf("%s%d.", way, r))
		}
		var tb, tf, tc time.Duration
		timeBatches := func() (err error) {
			msgs := intakeMessages(apps("g"))
			if r == rounds {
				// The last round's calls are profiled, for the row's
				// phases: the profile runs about as long as the round's
				// calls took before (the first timed round: 2 s).
				d := 2 * time.Second
				if len(batch.times) > 0 {
					d = max(time.Second, batch.times[len(batch.times)-1])
				}
				wait := h.profile(ctx, "intake-batches", d)
				defer func() { profile = wait() }()
			}
			if tb, err = timeIntakeBatches(ctx, intake, msgs, drivers.MaxBatchApplications); err != nil {
				return fmt.Errorf("SubmitApplications: %w", err)
			}
			return nil
		}
		timeFloor := func() (err error) {
			all := apps("f")
			for from := 0; from < len(all); from += drivers.MaxBatchApplications {
				d, err := intakeFloor(ctx, db, a.ID, all[from:min(len(all), from+drivers.MaxBatchApplications)])
				if err != nil {
					return fmt.Errorf("intake floor: %w", err)
				}
				tf += d
			}
			return nil
		}
		timeImport := func() (err error) {
			tc, _, err = timeDriversImport(ctx, h, a, intakeMessages(apps("c")), r)
			return err
		}
		// Each way goes first in turn, so none always follows what
		// another left behind (counts for the server to fold, pages to
		// write), and a slow spell of the machine falls on a round.
		ways := []func() error{timeBatches, timeFloor, timeImport}
		for i := range ways {
			if err := ways[(r+i)%len(ways)](); err != nil {
				return nil, err
			}
		}
		if r > 0 {
			batch.times, floor.times, cli.times = append(batch.times, tb), append(floor.times, tf), append(cli.times, tc)
		}
	}
	one, oneFloor, err := timeSingleCalls(ctx, intake, db, a.ID, intakeSet(a.ID, singles, 99, "s."), intakeSet(a.ID, singles, 99, "sf."))
	if err != nil {
		return nil, err
	}
	rows := intakeRows(n, batch, floor, cli, one, oneFloor)
	rows[0].profile, rows[0].phases = profile, intakePhases
	if large > 0 {
		row, err := largeDriversImport(ctx, h, db, a, large)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// largeDriversImport times drivers import of n applications as one file
// against the floor of them in one transaction, one of each. Each starts
// from a database at rest (settle): the import followed the scenario's
// other rounds, and the floor the import, whose writes the checkpointer
// and autovacuum were still taking up; of two fresh-clone runs of
// 521d915, one had the import at 1.91x its floor and the other at 2.35x.
func largeDriversImport(ctx context.Context, h *harness, db *sqlx.DB, a account, n int) (result, error) {
	if err := h.settle(ctx); err != nil {
		return result{}, err
	}
	service, logged, err := timeDriversImport(ctx, h, a, intakeApplications(a.ID, n, 7, "large."), 1_000_000)
	if err != nil {
		return result{}, err
	}
	if err := h.settle(ctx); err != nil {
		return result{}, err
	}
	floor, err := intakeFloor(ctx, db, a.ID, intakeSet(a.ID, n, 7, "largef."))
	if err != nil {
		return result{}, fmt.Errorf("intake floor: %w", err)
	}
	ratio := float64(service) / float64(floor)
	return result{
		name:   fmt.Sprintf("drivers import, %d new applications as one file (1 round)", n),
		median: service, p99: service, throughput: float64(n) / service.Seconds(),
		floor: fmt.Sprintf("set-based SQL: %s", ms(floor)), ratio: ratio, target: "<= 2x the set-based floor", pass: ratio <= 2,
		note: "Timed from the process start to its exit; one transaction for the whole file. The floor writes the " +
			"same applications (other e-mail addresses) in one transaction of five set-based statements (bench/intakefloor.go). " +
			"Each starts from a database at rest (VACUUM ANALYZE, CHECKPOINT). " + driversImportPhases(logged),
	}, nil
}

// driversImportPhases is where drivers import says its time went, from the lines
// it logged: reading the file, checking and storing the applications with
// their events in one transaction, then folding the counts (and refreshing
// the statistics, which it logs apart).
func driversImportPhases(logged []byte) string {
	var phases struct {
		Read    float64 `json:"read_seconds"`
		Store   float64 `json:"store_seconds"`
		Fold    float64 `json:"fold_seconds"`
		Analyze float64 `json:"seconds"`
	}
	var found, analyzed bool
	for _, line := range bytes.Split(logged, []byte("\n")) {
		var head struct{ Msg string }
		if json.Unmarshal(line, &head) != nil {
			continue
		}
		switch head.Msg {
		case "drivers imported":
			found = json.Unmarshal(line, &phases) == nil
		case "statistics refreshed":
			analyzed = json.Unmarshal(line, &phases) == nil
		}
	}
	if !found {
		return "The import logged no account of its phases."
	}
	out := fmt.Sprintf("The import's own account of its time: reading the file %.1f s, checking and storing the "+
		"applications with their events %.1f s, folding the counts %.1f s", phases.Read, phases.Store, phases.Fold)
	if analyzed {
		out += fmt.Sprintf(" (of which ANALYZE of the intake's tables %.1f s)", phases.Analyze)
	}
	return out + "; the rest is the process's start and its migration check."
}

// intakeSet is n synthetic applications to the account (those of demo
// seed, naming the account's bench jobs), each with one past employer.
func intakeSet(accountID int64, n int, seed uint64, tag string) []store.Application {
	refs := make([]string, intakeJobs)
	for i := range refs {
		refs[i] = fmt.Sprintf("IN%06d", i)
	}
	now := time.Now().Add(-time.Minute)
	apps := demo.Applications(accountID, n, seed, now, refs, tag)
	for i := range apps {
		apps[i].Employment = []store.Employment{{Company: "Hillside Freight", State: apps[i].Profile.State,
			Phone: "2145550100", StartDate: "2019-04-01", EndDate: new("2024-10-31")}}
	}
	return apps
}

// intakeApplications are the applications of intakeSet as the intake
// takes them.
func intakeApplications(accountID int64, n int, seed uint64, tag string) []*jobboardv2.DriverApplication {
	return intakeMessages(intakeSet(accountID, n, seed, tag))
}

func intakeMessages(apps []store.Application) []*jobboardv2.DriverApplication {
	out := make([]*jobboardv2.DriverApplication, len(apps))
	for i := range apps {
		out[i] = applicationInput(&apps[i])
	}
	return out
}

// applicationInput is the intake's message for a store application.
func applicationInput(a *store.Application) *jobboardv2.DriverApplication {
	p := a.Profile
	driverType, _ := natural.DriverTypes.Value(p.DriverType)
	in := &jobboardv2.DriverApplication{FirstName: p.FirstName, LastName: p.LastName, Address: p.Address,
		City: p.City, State: p.State, Zip: p.Zip, Email: p.Email, Phone: p.Phone, DriverType: driverType,
		Experience: p.Experience, Sent: timestamppb.New(a.Sent),
		LicenseState: p.LicenseState, LicenseClass: p.LicenseClass, DateOfBirth: p.DateOfBirth}
	for _, code := range p.Endorsements {
		c, _ := natural.CertificationCodes.Value(code)
		in.Certifications = append(in.Certifications, c)
	}
	for _, e := range a.Employment {
		in.EmploymentHistory = append(in.EmploymentHistory, &jobboardv2.Employment{Company: e.Company, State: e.State,
			Phone: e.Phone, StartDate: e.StartDate, EndDate: e.EndDate})
	}
	for _, j := range a.JobApps {
		in.JobApplications = append(in.JobApplications, &jobboardv2.JobApplicationInput{Reference: j.Reference,
			IsDirectApp: j.IsDirectApp, CreatedAt: timestamppb.New(j.CreatedAt)})
	}
	return in
}

// timeIntakeBatches sends the applications in calls of batch, one call
// after the other, and times them all.
func timeIntakeBatches(ctx context.Context, intake jobboardv2.DriverIntakeServiceClient, apps []*jobboardv2.DriverApplication, batch int) (time.Duration, error) {
	start := time.Now()
	for from := 0; from < len(apps); from += batch {
		part := apps[from:min(len(apps), from+batch)]
		resp, err := intake.SubmitApplications(ctx, &jobboardv2.SubmitApplicationsRequest{Applications: part})
		if err != nil {
			return 0, err
		}
		if len(resp.DriverIds) != len(part) {
			return 0, fmt.Errorf("%d driver ids for %d applications", len(resp.DriverIds), len(part))
		}
	}
	return time.Since(start), nil
}

// timeDriversImport writes the applications to a file, untimed, then times
// `jobboard drivers import` of it: the process, reading, checking and
// storing, as an operator runs it. It returns what the command logged too.
func timeDriversImport(ctx context.Context, h *harness, a account, apps []*jobboardv2.DriverApplication, round int) (time.Duration, []byte, error) {
	file := filepath.Join(h.dir, fmt.Sprintf("intake-%d.json", round))
	data, err := applicationsFile(apps)
	if err != nil {
		return 0, nil, err
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		return 0, nil, err
	}
	defer os.Remove(file)
	start := time.Now()
	out, logged, err := h.jobboardLogged(ctx, "drivers", "import", "--account", strconv.FormatInt(a.ID, 10), file)
	took := time.Since(start)
	if err != nil {
		return 0, nil, err
	}
	if want := fmt.Sprintf(`{"imported":%d}`, len(apps)); string(bytes.TrimSpace(out)) != want {
		return 0, nil, fmt.Errorf("drivers import printed %q, want %s", out, want)
	}
	return took, logged, nil
}

// applicationsFile is the JSON array drivers import reads: the same
// applications in the lenient form, as a file gives them.
func applicationsFile(apps []*jobboardv2.DriverApplication) ([]byte, error) {
	entries := make([]intake.Application, len(apps))
	for i, app := range apps {
		entries[i] = natural.Application(app)
	}
	return json.Marshal(entries)
}

// timeSingleCalls sends each application in a call of its own, one after
// the other, and times each call; before or after each call, in turn, the
// floor writes the application of the same position of floorApps.
func timeSingleCalls(ctx context.Context, intake jobboardv2.DriverIntakeServiceClient, db *sqlx.DB, accountID int64,
	apps, floorApps []store.Application) (calls, floors []time.Duration, err error) {
	for i := range apps {
		msg := applicationInput(&apps[i])
		call := func() error {
			start := time.Now()
			if _, err := intake.SubmitApplication(ctx, &jobboardv2.SubmitApplicationRequest{Application: msg}); err != nil {
				return fmt.Errorf("SubmitApplication: %w", err)
			}
			calls = append(calls, time.Since(start))
			return nil
		}
		floor := func() error {
			d, err := intakeFloor(ctx, db, accountID, floorApps[i:i+1])
			if err != nil {
				return fmt.Errorf("intake floor: %w", err)
			}
			floors = append(floors, d)
			return nil
		}
		if err := takeTurns(i, call, floor); err != nil {
			return nil, nil, err
		}
	}
	return calls, floors, nil
}

// intakePhases are the server's parts of an intake call, for a row not
// met: what the floor leaves out (the call, the checks, the event's data
// in the REST shape) and the statements it shares.
var intakePhases = []phase{
	{"the call (decoding, checks, the transaction, the answer)", "drivers.(*IntakeService).SubmitApplications"},
	{"decoding the call", "grpc.(*Server).processUnaryRPC.func"},
	{"the checks", "drivers.checkApplications"},
	{"the applications' writes (drivers, applications, employment, job applications)", "store.(*Tx).SaveApplications"},
	{"the hash of each application (repeat detection)", "store.applicationHash"},
	{"the events (read back, rendered, written, deliveries queued)", "leads.(*Outbox).ApplicationsReceived"},
	{"rendering the events' data", "leads.(*Outbox).renderData"},
	{"the collector's marking", "runtime.gcBgMarkWorker"},
}

// intakeRows reports the ways in applications per second, each judged
// against the floor of the same applications.
func intakeRows(n int, batch, floor, cli intakeRun, one, oneFloor []time.Duration) []result {
	b, f, c := summarize(batch.times), summarize(floor.times), summarize(cli.times)
	s, sf := summarize(one), summarize(oneFloor)
	perSecond := func(d time.Duration, apps int) float64 { return float64(apps) / d.Seconds() }
	ratio, ratios := pairedDurationRatio(batch.times, floor.times)
	importRatio, importRatios := pairedDurationRatio(cli.times, floor.times)
	singleRatio := float64(s.median) / float64(sf.median)
	var total time.Duration
	for _, d := range one {
		total += d
	}
	size := proto.Size(&jobboardv2.SubmitApplicationsRequest{Applications: intakeApplications(1, drivers.MaxBatchApplications, 1, "size.")})
	return []result{{
		name:   fmt.Sprintf("SubmitApplications, %d new applications in calls of %d (%d rounds)", n, drivers.MaxBatchApplications, b.n),
		median: b.median, p99: b.p99, throughput: perSecond(b.median, n),
		floor: fmt.Sprintf("set-based SQL: %s, %.0f/s", ms(f.median), perSecond(f.median, n)),
		ratio: ratio, target: "<= 2x the set-based floor", pass: ratio <= 2,
		note: fmt.Sprintf("Throughput is applications a second (median time of the whole set). One call at a time over one "+
			"connection with the internal token; each call is one transaction. Each application has one past employer, four "+
			"in ten a job application. The floor (bench/intakefloor.go) writes the same applications (other e-mail "+
			"addresses, so both store new drivers) in transactions of %d, five set-based statements each, from the "+
			"harness over lib/pq, taking turns with the calls and drivers import. The ratio is the median of each round's "+
			"calls to the floor of the same round: %s. A call of %d such applications is %.0f KiB.",
			drivers.MaxBatchApplications, ratios, drivers.MaxBatchApplications, float64(size)/1024),
	}, {
		name:   fmt.Sprintf("drivers import, the same %d applications as one file (%d rounds)", n, c.n),
		median: c.median, p99: c.p99, throughput: perSecond(c.median, n),
		note: fmt.Sprintf("For context (the target is at 100,000 below): throughput is applications a second; one "+
			"transaction for the whole file, timed from the process start to its exit, so the process's start, its "+
			"migration check and its fold of the counts are in it. The floor's median was %s; ratios to the floor of the "+
			"same round: %s (median %.2fx).", ms(f.median), importRatios, importRatio),
	}, {
		name:   fmt.Sprintf("SubmitApplication, one call an application (%d calls)", s.n),
		median: s.median, p99: s.p99, throughput: perSecond(total, len(one)),
		floor: fmt.Sprintf("set-based SQL, one application: %s", ms(sf.median)), ratio: singleRatio,
		target: "<= 2x the single-row floor", pass: singleRatio <= 2,
		note: "The median and p99 are of one call; throughput is applications a second, one call at a time. The floor " +
			"writes one application in a transaction of its own, alternating with the calls; the ratio is of the two medians.",
	}}
}
