// Command withpg starts a throwaway PostgreSQL cluster, runs a command with
// JOBBOARD_TEST_DATABASE_URL pointing at it, and removes the cluster when the
// command ends. `make test` uses it so a whole test run shares one server.
//
//	go run ./internal/cmd/withpg go test ./...
//
// The command also gets a TMPDIR of its own. Whatever it leaves there is
// listed and removed, and withpg then fails: tests must clean up after
// themselves, and a folder private to the run tells their leftovers apart
// from those of anything else on the machine.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/truckjobs/jobboard/internal/pglocal"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: withpg COMMAND [ARG...]")
		os.Exit(2)
	}
	os.Exit(run(os.Args[1:], os.Stderr))
}

func run(args []string, stderr io.Writer) int {
	dir, err := os.MkdirTemp("", "jobboard-withpg-")
	if err != nil {
		fmt.Fprintln(stderr, "withpg:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	tmp, err := commandTmp(dir)
	if err != nil {
		fmt.Fprintln(stderr, "withpg:", err)
		return 1
	}
	cluster, err := pglocal.Start(context.Background(), filepath.Join(dir, "pg"), pglocal.Options{MaxConnections: 300})
	if err != nil {
		fmt.Fprintln(stderr, "withpg:", err)
		return 1
	}
	defer cluster.Stop()

	code := runCommand(args, stderr, "TMPDIR="+tmp, pglocal.TestServerEnv+"="+cluster.URL("postgres"))
	if left := leftovers(tmp); len(left) > 0 {
		fmt.Fprintln(stderr, "withpg: left behind in the command's TMPDIR (removed now; tests must clean up after themselves):")
		for _, l := range left {
			fmt.Fprintln(stderr, "  "+l)
		}
		if code == 0 {
			code = 1
		}
	}
	return code
}

// commandTmp makes dir/tmp, the command's TMPDIR. Under root, PostgreSQL
// runs as another user, who must reach the cluster in dir and the data
// folders tests make in TMPDIR: both are open to all (what the tests make
// inside keeps its own modes).
func commandTmp(dir string) (string, error) {
	tmp := filepath.Join(dir, "tmp")
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return "", err
	}
	return tmp, os.Chmod(tmp, 0o755) // whatever the umask
}

// runCommand runs args with env added to withpg's environment and returns
// its exit code. withpg outlives it whatever signal ends it, so that the
// cluster is always stopped and the temporary folder removed.
func runCommand(args []string, stderr io.Writer, env ...string) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, stderr
	cmd.Env = append(os.Environ(), env...)
	// The command runs in a process group of its own, and every stop signal
	// that reaches withpg (Ctrl-C from the terminal, SIGTERM, SIGHUP) is
	// passed to that whole group: a shell script's children and go test's
	// test binaries end too, not only the direct child. withpg itself only
	// catches them, so it outlives the group and cleans up; catching, not
	// ignoring, leaves the command the default action of each signal.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	forward := make(chan os.Signal, 1)
	signal.Notify(forward, stopSignals()...)
	defer signal.Stop(forward)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(stderr, "withpg:", err)
		return 1
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case s := <-forward:
				_ = syscall.Kill(-cmd.Process.Pid, s.(syscall.Signal))
			case <-done:
				return
			}
		}
	}()
	if err := cmd.Wait(); err != nil {
		if exit, ok := err.(*exec.ExitError); ok {
			if exit.ExitCode() < 0 { // ended by a signal
				return 128 + int(exit.Sys().(syscall.WaitStatus).Signal())
			}
			return exit.ExitCode()
		}
		fmt.Fprintln(stderr, "withpg:", err)
		return 1
	}
	return 0
}

// stopSignals are the signals passed on to the command. SIGHUP is left
// out when withpg was started with it ignored (nohup): the command then
// keeps ignoring it too.
func stopSignals() []os.Signal {
	signals := []os.Signal{syscall.SIGINT, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		signals = append(signals, syscall.SIGHUP)
	}
	return signals
}

// leftovers lists what dir holds, one line per entry with its size; a
// folder's name ends in a slash.
func leftovers(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return []string{fmt.Sprintf("(cannot read %s: %v)", dir, err)}
	}
	var lines []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			name += "/"
		}
		lines = append(lines, fmt.Sprintf("%s (%s)", name, humanSize(treeSize(filepath.Join(dir, e.Name())))))
	}
	return lines
}

// treeSize is the total size of the regular files under p.
func treeSize(p string) int64 {
	var total int64
	_ = filepath.WalkDir(p, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				total += info.Size()
			}
		}
		return nil
	})
	return total
}

func humanSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f kB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
