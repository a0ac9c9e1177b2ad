// Command withpg starts a throwaway PostgreSQL cluster, runs a command with
// JOBBOARD_TEST_DATABASE_URL pointing at it, and removes the cluster when the
// command ends. `make test` uses it so a whole test run shares one server.
//
//	go run ./internal/cmd/withpg go test ./...
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"github.com/truckjobs/jobboard/internal/pglocal"
	"github.com/truckjobs/jobboard/internal/pgtest"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: withpg COMMAND [ARG...]")
		os.Exit(2)
	}
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	dir, err := os.MkdirTemp("", "jobboard-pg-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "withpg:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	cluster, err := pglocal.Start(context.Background(), dir, pglocal.Options{MaxConnections: 300})
	if err != nil {
		fmt.Fprintln(os.Stderr, "withpg:", err)
		return 1
	}
	defer cluster.Stop()

	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), pgtest.EnvURL+"="+cluster.URL("postgres"))
	// The child gets the terminal's interrupt itself; withpg only waits for
	// it to finish so the cluster is always stopped.
	signal.Ignore(syscall.SIGINT)
	if err := cmd.Run(); err != nil {
		if exit, ok := err.(*exec.ExitError); ok {
			return exit.ExitCode()
		}
		fmt.Fprintln(os.Stderr, "withpg:", err)
		return 1
	}
	return 0
}
