package topology

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Every long-running part of the topology runs under a supervisor, as an
// operator's would under systemd: a shell loop of its own, detached from
// the command that starts it, that starts the part again a second after an
// exit nobody asked for (the daemons' daemonLoop: Restart=always,
// RestartSec=1s; the replicas' replicaLoop, in replicas.go:
// Restart=on-failure). A stop asks by writing NAME.stopped beside the
// part's files, then ends the supervisor with SIGTERM. Each supervisor
// records what it sees in NAME.supervisor.log, a line each: the Unix time
// in nanoseconds, then "started" or "exited CODE". Its pid is in
// NAME.supervisor.pid while it runs.

// supervised is one daemon run under daemonLoop.
type supervised struct {
	name string   // its files: NAME.pid, NAME.supervisor.log, NAME.stopped
	dir  string   // the folder that holds them
	log  string   // where its output goes
	argv []string // the command, run in the foreground
	env  []string // added to the environment
	// ownPidFile: the daemon writes NAME.pid itself (PgBouncer from its
	// configuration, HAProxy's master with -p); otherwise the loop writes
	// the pid of the process it started.
	ownPidFile bool
	// unprivileged: run as the daemons' user rather than root (PgBouncer,
	// like PostgreSQL).
	unprivileged bool
}

func (s supervised) file(suffix string) string { return filepath.Join(s.dir, s.name+suffix) }

// daemonLoop runs "$@" (after the name, folder, log and whether it writes
// its own pid file) until NAME.stopped appears. A stop ends the loop with
// SIGTERM, which it traps: it ends the process it started last too (so a
// stop that lands between a start and its pid file leaves nothing
// running), removes its own pid file and exits. Pid files are written
// whole, by a rename.
const daemonLoop = `name=$1 dir=$2 log=$3 ownpid=$4; shift 4
trap 'kill $! 2>/dev/null; rm -f "$dir/$name.supervisor.pid"; exit 0' TERM
echo $$ >"$dir/$name.supervisor.tmp" && mv "$dir/$name.supervisor.tmp" "$dir/$name.supervisor.pid"
while [ ! -e "$dir/$name.stopped" ]; do
  echo "$(date +%s%N) started" >>"$dir/$name.supervisor.log"
  "$@" >>"$log" 2>&1 </dev/null &
  [ "$ownpid" = yes ] || { echo $! >"$dir/$name.tmp" && mv "$dir/$name.tmp" "$dir/$name.pid"; }
  wait $!
  code=$?
  [ -e "$dir/$name.stopped" ] && break
  echo "$(date +%s%N) exited $code" >>"$dir/$name.supervisor.log"
  sleep 1
done
rm -f "$dir/$name.supervisor.pid"`

// startSupervised starts s's supervisor, which starts s, after ending
// one left running (a stop that failed half way).
func startSupervised(s supervised) error {
	if err := endSupervisor(s.dir, s.name); err != nil {
		return err
	}
	if err := os.Remove(s.file(".stopped")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	ownPid := "no"
	if s.ownPidFile {
		ownPid = "yes"
	}
	return detach(daemonLoop, s.env, s.unprivileged, append([]string{s.name, s.dir, s.log, ownPid}, s.argv...)...)
}

// detach runs loop in a shell of its own, started by one that exits, so
// its $$ is its pid, it is nobody's child here, and it holds none of
// run's output, which run reads to its end.
func detach(loop string, env []string, unprivileged bool, args ...string) error {
	outer := `loop=$1; shift; sh -c "$loop" sh "$@" </dev/null >/dev/null 2>&1 &`
	cmd := exec.Command("sh", append([]string{"-c", outer, "sh", loop}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if unprivileged {
		var err error
		if cmd, err = daemon(cmd); err != nil {
			return err
		}
	}
	return run(cmd)
}

// stopSupervised stops s for good: NAME.stopped is written, the supervisor
// ended (one caught between an exit and the restart cannot start s after
// this), then s itself with sig, and both waited for.
func stopSupervised(s supervised, sig syscall.Signal) error {
	if err := endSupervisor(s.dir, s.name); err != nil {
		return err
	}
	return stopPidFile(s.file(".pid"), sig)
}

// endSupervisor writes NAME.stopped in dir and ends NAME's supervisor.
func endSupervisor(dir, name string) error {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil // nothing of it was ever started
	}
	if err := os.WriteFile(filepath.Join(dir, name+".stopped"), nil, 0o644); err != nil {
		return err
	}
	return stopPidFile(filepath.Join(dir, name+".supervisor.pid"), syscall.SIGTERM)
}

func removeStale(file string) error {
	if err := os.Remove(file); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// endSupervisors ends every supervisor whose pid file is in a folder of
// dir (each part's folder).
func endSupervisors(dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.supervisor.pid"))
	if err != nil {
		return err
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".supervisor.pid")
		if err := endSupervisor(filepath.Dir(f), name); err != nil {
			return err
		}
	}
	return nil
}

// killSupervised ends s with SIGKILL, as a crash would, and returns the
// time just before the signal; its supervisor starts it again.
func killSupervised(s supervised) (time.Time, error) {
	pid, err := livePid(s.file(".pid"))
	if err != nil {
		return time.Time{}, err
	}
	sent := time.Now()
	return sent, syscall.Kill(pid, syscall.SIGKILL)
}

// Crash is one exit of a supervised part that its supervisor did not
// expect, and when it started again (zero if it has not).
type Crash struct {
	At, Restarted time.Time
	Exit          string
}

// crashes reads NAME.supervisor.log in dir.
func crashes(dir, name string) ([]Crash, error) {
	b, err := os.ReadFile(filepath.Join(dir, name+".supervisor.log"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var all []Crash
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		nanos, what, _ := strings.Cut(line, " ")
		n, err := strconv.ParseInt(nanos, 10, 64)
		if err != nil {
			continue
		}
		at := time.Unix(0, n)
		switch {
		case strings.HasPrefix(what, "exited"):
			all = append(all, Crash{At: at, Exit: strings.TrimPrefix(what, "exited ")})
		case what == "started" && len(all) > 0 && all[len(all)-1].Restarted.IsZero():
			all[len(all)-1].Restarted = at
		}
	}
	return all, nil
}

func readPid(file string) (int, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	// PostgreSQL's postmaster.pid has more lines; the pid is the first.
	first, _, _ := strings.Cut(string(b), "\n")
	return strconv.Atoi(strings.TrimSpace(first))
}

// stopPidFile signals the process in file and waits up to a minute until
// it has gone, then removes the file; no file, or a process already gone
// or never the file's (livePid), is no error and is not signalled.
func stopPidFile(file string, sig syscall.Signal) error {
	pid, err := livePid(file)
	if errors.Is(err, os.ErrNotExist) {
		return removeStale(file)
	}
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, sig); errors.Is(err, syscall.ESRCH) {
		return removeStale(file)
	} else if err != nil {
		return err
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if !alive(pid) {
			return removeStale(file)
		}
	}
	return fmt.Errorf("process %d (%s) still running a minute after %v", pid, file, sig)
}

// livePid is the pid in file if that process runs and started before the
// file was last written (a second's leeway for the clocks' steps);
// otherwise an error that is os.ErrNotExist: no file, the process gone,
// or a later process given the same pid (the file is stale, as after a
// reboot), which must never be signalled.
func livePid(file string) (int, error) {
	pid, err := readPid(file)
	if err != nil {
		return 0, err
	}
	info, err := os.Stat(file)
	if err != nil {
		return 0, err
	}
	if state, started, err := procStat(pid); err != nil || state == "Z" || started.After(info.ModTime().Add(time.Second)) {
		return 0, fmt.Errorf("%s: no process %d of its own: %w", file, pid, os.ErrNotExist)
	}
	return pid, nil
}

// alive says whether process pid runs. A zombie does not: a daemon whose
// parent has gone is reaped by init, which here may take a second or two.
func alive(pid int) bool {
	state, _, err := procStat(pid)
	return err == nil && state != "Z"
}

// procStat reads process pid's state and when it started from
// /proc/PID/stat: fields 3 and 22, the start in clock ticks (USER_HZ, 100
// on Linux) after the boot, whose time /proc/stat gives.
func procStat(pid int) (state string, started time.Time, err error) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", time.Time{}, err
	}
	// The fields follow the command's name in parentheses, "pid (comm) S
	// ...", and the name may hold ") " itself.
	end := strings.LastIndex(string(stat), ") ")
	if end < 0 {
		return "", time.Time{}, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	fields := strings.Fields(string(stat)[end+2:]) // from field 3
	if len(fields) < 20 {
		return "", time.Time{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields)+2)
	}
	ticks, err := strconv.ParseInt(fields[19], 10, 64)
	if err != nil {
		return "", time.Time{}, err
	}
	machine, err := os.ReadFile("/proc/stat")
	if err != nil {
		return "", time.Time{}, err
	}
	for _, line := range strings.Split(string(machine), "\n") {
		if btime, ok := strings.CutPrefix(line, "btime "); ok {
			boot, err := strconv.ParseInt(btime, 10, 64)
			if err != nil {
				return "", time.Time{}, err
			}
			return fields[0], time.Unix(boot, 0).Add(time.Duration(ticks) * 10 * time.Millisecond), nil
		}
	}
	return "", time.Time{}, errors.New("/proc/stat: no btime")
}
