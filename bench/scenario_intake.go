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

// intakeScenario measures applications per second through
// DriverIntakeService.SubmitApplications in batches of 1,000, against
// `jobboard drivers import` of the same applications as one file, on the
// same database in the same run, turn about; and, for context,
// SubmitApplication one call at a time.
func intakeScenario(ctx context.Context, h *harness) ([]result, error) {
	// Quick: one call's worth, so the scenario adds some ten seconds.
	// Five pairs: with three, the ratio of the two medians was 1.03x to
	// 1.66x in four runs (one round of the import took three times its
	// median), and rested on one pair.
	n, rounds, singles := 10_000, max(1, h.opts.rounds/3), 500
	if h.opts.quick {
		n, singles = drivers.MaxBatchApplications, 50
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

	batch, cli := intakeRun{name: "batch"}, intakeRun{name: "import"}
	// Round 0 is a small untimed warm-up of both ways. Each way gets
	// addresses of its own, so both store new drivers; the rest of each
	// application is the same.
	for r := 0; r <= rounds; r++ {
		size := n
		if r == 0 {
			size = 100
		}
		apps := func(way string) []*jobboardv2.DriverApplication {
			return intakeApplications(a.ID, size, uint64(r), fmt.Sprintf("%s%d.", way, r))
		}
		var tb, tc time.Duration
		timeBatches := func() (err error) {
			if tb, err = timeIntakeBatches(ctx, intake, apps("g"), drivers.MaxBatchApplications); err != nil {
				return fmt.Errorf("SubmitApplications: %w", err)
			}
			return nil
		}
		timeImport := func() (err error) {
			tc, err = timeDriversImport(ctx, h, a, apps("c"), r)
			return err
		}
		// The batches go first in odd rounds and last in even ones, so
		// neither side always follows what the other left behind (counts
		// for the server to fold, pages to write), and a slow spell of the
		// machine falls on a pair.
		if err := takeTurns(r, timeImport, timeBatches); err != nil {
			return nil, err
		}
		if r > 0 {
			batch.times, cli.times = append(batch.times, tb), append(cli.times, tc)
		}
	}
	one, err := timeSingleCalls(ctx, intake, intakeApplications(a.ID, singles, 99, "s."))
	if err != nil {
		return nil, fmt.Errorf("SubmitApplication: %w", err)
	}
	return intakeRows(n, batch, cli, one, singles), nil
}

// intakeApplications are n synthetic applications to the account (those of
// demo seed, naming the account's bench jobs) as the intake takes them.
func intakeApplications(accountID int64, n int, seed uint64, tag string) []*jobboardv2.DriverApplication {
	refs := make([]string, intakeJobs)
	for i := range refs {
		refs[i] = fmt.Sprintf("IN%06d", i)
	}
	now := time.Now().Add(-time.Minute)
	apps := demo.Applications(accountID, n, seed, now, refs, tag)
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
// storing, as an operator runs it.
func timeDriversImport(ctx context.Context, h *harness, a account, apps []*jobboardv2.DriverApplication, round int) (time.Duration, error) {
	file := filepath.Join(h.dir, fmt.Sprintf("intake-%d.json", round))
	data, err := applicationsFile(apps)
	if err != nil {
		return 0, err
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		return 0, err
	}
	defer os.Remove(file)
	start := time.Now()
	out, err := h.jobboard(ctx, "drivers", "import", "--account", strconv.FormatInt(a.ID, 10), file)
	took := time.Since(start)
	if err != nil {
		return 0, err
	}
	if want := fmt.Sprintf(`{"imported":%d}`, len(apps)); string(bytes.TrimSpace(out)) != want {
		return 0, fmt.Errorf("drivers import printed %q, want %s", out, want)
	}
	return took, nil
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
// the other, and times each call.
func timeSingleCalls(ctx context.Context, intake jobboardv2.DriverIntakeServiceClient, apps []*jobboardv2.DriverApplication) ([]time.Duration, error) {
	times := make([]time.Duration, 0, len(apps))
	for _, app := range apps {
		start := time.Now()
		if _, err := intake.SubmitApplication(ctx, &jobboardv2.SubmitApplicationRequest{Application: app}); err != nil {
			return nil, err
		}
		times = append(times, time.Since(start))
	}
	return times, nil
}

// intakeRows reports the three ways in applications per second; the batch
// is judged against the import of the same applications.
func intakeRows(n int, batch, cli intakeRun, one []time.Duration, singles int) []result {
	b, c, s := summarize(batch.times), summarize(cli.times), summarize(one)
	perSecond := func(d time.Duration, apps int) float64 { return float64(apps) / d.Seconds() }
	ratio, ratios := pairedDurationRatio(batch.times, cli.times)
	var total time.Duration
	for _, d := range one {
		total += d
	}
	size := proto.Size(&jobboardv2.SubmitApplicationsRequest{Applications: intakeApplications(1, drivers.MaxBatchApplications, 1, "size.")})
	return []result{{
		name:   fmt.Sprintf("SubmitApplications, %d new applications in calls of %d (%d rounds)", n, drivers.MaxBatchApplications, b.n),
		median: b.median, p99: b.p99, throughput: perSecond(b.median, n),
		floor: fmt.Sprintf("drivers import: %s, %.0f/s", ms(c.median), perSecond(c.median, n)),
		ratio: ratio, target: "<= 1.5x drivers import", pass: ratio <= 1.5,
		note: fmt.Sprintf("Throughput is applications a second (median time of the whole set). One call at a time over one "+
			"connection with the internal token; each call is one transaction. The floor is `jobboard drivers import` of the "+
			"same applications (other e-mail addresses, so both store new drivers) as one file, timed from the process start "+
			"to its exit, taking turns with the batches on the same database, each first in every other round. The ratio is "+
			"the median of each round's batches to the import of the same round: %s. A call of %d such applications is %.0f KiB.",
			ratios, drivers.MaxBatchApplications, float64(size)/1024),
	}, {
		name:   fmt.Sprintf("drivers import, the same %d applications as one file (%d rounds)", n, c.n),
		median: c.median, p99: c.p99, throughput: perSecond(c.median, n),
		note: "Throughput is applications a second; one transaction for the whole file.",
	}, {
		name:   fmt.Sprintf("SubmitApplication, one call an application (%d calls)", s.n),
		median: s.median, p99: s.p99, throughput: perSecond(total, singles),
		note: "For context: the median and p99 are of one call; throughput is applications a second, one call at a time.",
	}}
}
