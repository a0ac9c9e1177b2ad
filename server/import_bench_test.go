package server

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/server/jobs"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/internal/rules"
	"github.com/truckjobs/jobboard/server/store"
)

// BenchmarkImportAgainstPosts times an import of 50,000 new jobs from its
// creation to "complete" against the same number of jobs sent as posts of
// 1,000, as bench scenario 5 does, minus HTTP: an account holds at most
// MaxActiveJobs, so both add that many and refuse the rest. Each phase is
// reported as wall time, the process's CPU time and the database's.
func BenchmarkImportAgainstPosts(b *testing.B) {
	f := newImportFixture(b)
	st := f.st
	const total = 50_000
	for r := 0; b.Loop(); r++ {
		withdrawAll(b, st)
		m := startPhase(b, st)
		for start := 0; start < total; start += rules.MaxJobsPerPost {
			req := &restv2.PostJobsRequest{Jobs: benchJobs(fmt.Sprintf("P%dR", r), start, rules.MaxJobsPerPost)}
			if _, err := f.svcs.Jobs.PostJobs(f.ctxA, req); err != nil {
				b.Fatal(err)
			}
		}
		m.end(b, "fifty posts of 1,000")
		withdrawAll(b, st)
		req := &restv2.CreateJobImportRequest{Jobs: benchJobs(fmt.Sprintf("I%dR", r), 0, total)}
		m = startPhase(b, st)
		created, err := f.svcs.Imports.CreateJobImport(f.ctxA, req)
		if err != nil {
			b.Fatal(err)
		}
		m.end(b, "import: create")
		m = startPhase(b, st)
		done := f.pollComplete(b, f.ctxA, created.Data.Id, 20*time.Millisecond)
		m.end(b, "import: queue and worker")
		if done.Results.Added != jobs.MaxActiveJobs || done.Results.Failed != total-jobs.MaxActiveJobs {
			b.Fatalf("results: added %d failed %d", done.Results.Added, done.Results.Failed)
		}
	}
}

// benchJobs are n jobs like those of a real feed, each text naming its job.
func benchJobs(prefix string, start, n int) []*restv2.JobInput {
	out := make([]*restv2.JobInput, n)
	for k := range out {
		ref := fmt.Sprintf("%s%06d", prefix, start+k)
		j := input(ref)
		j.Title = new("Dry Van Driver")
		j.City, j.PostalCode = new("Springfield"), new(fmt.Sprintf("%05d", 10000+k))
		j.PayAmountMin, j.PayAmountMax, j.PayFrequency = new("0.55"), new("0.68"), new("Per Mile")
		j.EmploymentType, j.RouteType = []string{"Full-Time"}, []string{"Regional"}
		j.Description = new("<p>Route " + ref + ": home <b>every weekend</b>. Late-model trucks with APUs, paid orientation, " +
			"weekly direct deposit, health, dental and vision from day one.</p><ul><li>No touch freight</li><li>Pet policy</li></ul>")
		j.Requirements = new("<ul><li>Class A CDL</li><li>1 year of experience</li></ul>")
		out[k] = j
	}
	return out
}

func withdrawAll(tb testing.TB, st *store.Store) {
	if _, err := st.DB().Exec(`UPDATE jobs SET deleted_at = now() WHERE deleted_at IS NULL`); err != nil {
		tb.Fatal(err)
	}
	if _, err := st.DB().Exec(`VACUUM ANALYZE jobs`); err != nil {
		tb.Fatal(err)
	}
}

// phase is where a measured phase started.
type phase struct {
	st         *store.Store
	wall       time.Time
	cpu, pgCPU time.Duration
}

func startPhase(tb testing.TB, st *store.Store) phase {
	return phase{st: st, wall: time.Now(), cpu: processCPU(), pgCPU: databaseCPU(tb, st)}
}

func (p phase) end(tb testing.TB, name string) {
	wall, cpu, pg := time.Since(p.wall), processCPU()-p.cpu, databaseCPU(tb, p.st)-p.pgCPU
	tb.Logf("figures: %-26s wall %6d ms, process CPU %6d ms, database CPU %6d ms",
		name, wall.Milliseconds(), cpu.Milliseconds(), pg.Milliseconds())
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// databaseCPU is the CPU time of the database server's processes: the
// postmaster's own and its ended children's, and its live children's.
func databaseCPU(tb testing.TB, st *store.Store) time.Duration {
	var backend int
	if err := st.DB().Get(&backend, `SELECT pg_backend_pid()`); err != nil {
		tb.Fatal(err)
	}
	postmaster := procStat(backend)[1]
	ticks := procStat(int(postmaster))
	sum := ticks[11] + ticks[12] + ticks[13] + ticks[14]
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if s := procStat(pid); s != nil && s[1] == postmaster {
			sum += s[11] + s[12]
		}
	}
	return time.Duration(sum) * 10 * time.Millisecond // USER_HZ is 100
}

// procStat is the numeric fields of /proc/pid/stat after the command
// name, numbered from state (0): ppid is [1], utime [11], stime [12].
func procStat(pid int) []int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	out := make([]int64, len(fields))
	for i, f := range fields {
		out[i], _ = strconv.ParseInt(f, 10, 64)
	}
	return out
}
