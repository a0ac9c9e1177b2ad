package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Where the cores go during a load: the generator's share is measured by
// its own process; the server's, PgBouncer's and PostgreSQL's by reading
// their processes' CPU time from /proc before and after, so a report can
// say what a hop costs on a machine whose cores they all share.

// clockTicks is the unit of /proc/<pid>/stat's times (USER_HZ, 100 on
// Linux whatever the kernel's HZ).
const clockTicks = 100

// processGroup is a named set of processes whose CPU time adds up.
type processGroup struct {
	name string
	pids func() []int
}

// statFields are the fields of /proc/<pid>/stat after the command name
// (field 3, the state, first), or nil when the process is gone.
func statFields(pid int) []string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	// The command name, field 2, is in parentheses and may hold spaces.
	end := strings.LastIndexByte(string(data), ')')
	if end < 0 {
		return nil
	}
	return strings.Fields(string(data[end+1:]))
}

// pidCPU is the user and system time pid has used (fields 14 and 15), and
// false when it is gone.
func pidCPU(pid int) (time.Duration, bool) {
	fields := statFields(pid)
	if len(fields) < 13 {
		return 0, false
	}
	user, err1 := strconv.ParseInt(fields[11], 10, 64)
	system, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(user+system) * time.Second / clockTicks, true
}

// parentOf is pid's parent process id (field 4), or 0.
func parentOf(pid int) int {
	fields := statFields(pid)
	if len(fields) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(fields[1])
	return ppid
}

// withChildren is pid and its children's ids: a PostgreSQL postmaster and
// its backends and workers.
func withChildren(pid int) []int {
	pids := []int{pid}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err == nil && parentOf(child) == pid {
			pids = append(pids, child)
		}
	}
	return pids
}

// postmasterPID reads the postmaster's id from its data folder.
func postmasterPID(dataDir string) int {
	data, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return 0
	}
	first, _, _ := strings.Cut(string(data), "\n")
	pid, _ := strconv.Atoi(strings.TrimSpace(first))
	return pid
}

// groupCPU adds up the CPU time of every process of g, by pid, into seen
// (a process that ended between two readings keeps its last).
func groupCPU(g processGroup, seen map[int]time.Duration) {
	for _, pid := range g.pids() {
		if t, ok := pidCPU(pid); ok {
			seen[pid] = t
		}
	}
}

// cpuShares measures each group's share of all the machine's cores while
// run runs: its CPU time over the wall time times the cores.
func cpuShares(groups []processGroup, run func() error) (map[string]float64, error) {
	before := make([]map[int]time.Duration, len(groups))
	for i, g := range groups {
		before[i] = map[int]time.Duration{}
		groupCPU(g, before[i])
	}
	start := time.Now()
	if err := run(); err != nil {
		return nil, err
	}
	wall := time.Since(start)
	shares := map[string]float64{}
	for i, g := range groups {
		after := map[int]time.Duration{}
		groupCPU(g, after)
		var used time.Duration
		for pid, t := range after {
			used += t - before[i][pid] // a process new since: all its time
		}
		shares[g.name] += used.Seconds() / (wall.Seconds() * float64(runtime.NumCPU()))
	}
	return shares, nil
}

// sharesNote words the mean shares of runs, in groups' order.
func sharesNote(groups []processGroup, runs []map[string]float64) string {
	if len(runs) == 0 {
		return ""
	}
	var parts []string
	for _, g := range groups {
		var sum float64
		for _, r := range runs {
			sum += r[g.name]
		}
		if mean := sum / float64(len(runs)); mean > 0 || g.name != "PgBouncer" {
			parts = append(parts, fmt.Sprintf("%s %.0f%%", g.name, 100*mean))
		}
	}
	return fmt.Sprintf(" Share of the %d cores during the runs (mean of %d): %s.", runtime.NumCPU(), len(runs), strings.Join(parts, ", "))
}
