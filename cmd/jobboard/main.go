// Command jobboard runs and administers the trucking job board service.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/truckjobs/jobboard/internal/calllog"
	"github.com/truckjobs/jobboard/internal/jsonlog"
	"github.com/truckjobs/jobboard/internal/logbuf"
	"github.com/truckjobs/jobboard/internal/tracing"
)

const usage = `jobboard runs and administers the trucking job board service.

Usage:
  jobboard serve                      serve REST and gRPC (applies migrations first)
  jobboard migrate                    apply database migrations and exit
  jobboard accounts create --name N   create an employer account; prints its API key once
  jobboard accounts list              every account with the prefixes of its active keys
  jobboard keys create --account ID   add an API key to an account; prints it once
  jobboard keys list --account ID     the account's keys: id, prefix, created, revoked
  jobboard keys revoke KEY            revoke a key given whole; the next request with it gets 401
  jobboard keys revoke --account ID KEY_ID
                                      revoke one of the account's keys by its id
  jobboard accounts rotate-webhook-secret --account ID
                                      replace the account's callback signing secret; prints it once
  jobboard imports show IMPORT_ID     an import's state and its callback delivery attempts
  jobboard webhooks list --account ID the account's webhook endpoints (URLs cut to their host, no secrets)
  jobboard drivers import --account ID FILE
                                      import driver applications (JSON, detail form), all or none
  jobboard demo seed --account ID [--drivers N]
                                      add N synthetic driver applications (default 100,000)
  jobboard dev                        serve on loopback with a local PostgreSQL and a demo account
  jobboard dev --reset                remove dev's data folder (refused while a dev uses it)
  jobboard version                    the build (commit, Go) and the schema version it serves, as JSON

Run "jobboard COMMAND --help" for a command's flags. Settings come from the
environment (DATABASE_URL, JOBBOARD_*); flags override them. Without
DATABASE_URL, the commands other than serve use the database of the
jobboard dev running in .data (--data DIR: another folder).
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals()...)
	defer stop()
	// Access lines are held for a few milliseconds, so a busy server writes
	// those of that time in one call; any other line goes out at once, and
	// whatever is held is written before the command exits.
	logs := logbuf.New(os.Stderr, logDelay)
	slog.SetDefault(slog.New(tracing.LogHandler(logbuf.Holding(logs, calllog.IsLine,
		jsonlog.New(logs, &slog.HandlerOptions{ReplaceAttr: redactAttr})))))
	// A panic on this goroutine still writes what is held; one on another
	// goroutine ends the process at once, and with it up to logDelay of
	// access lines, as kill -9 does.
	defer logs.Flush() //nolint:errcheck // nowhere left to report it
	err := run(ctx, os.Args[1:], os.Stdout)
	_ = logs.Flush() // os.Exit below skips the deferred one
	var u usageError
	switch {
	case errors.Is(err, flag.ErrHelp):
	case errors.As(err, &u):
		fmt.Fprintln(os.Stderr, "jobboard:", redact(err.Error()))
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "jobboard:", redact(err.Error()))
		os.Exit(1)
	}
}

// logDelay is the longest an access line waits before it is written: short
// enough to read a request's line right after it, long enough that
// thousands of requests a second share a few writes.
const logDelay = 10 * time.Millisecond

// stopSignals end every command in order: a server drains its requests and
// dev stops its database. SIGHUP (the terminal closed) is one of them, as
// its default action would end the process on the spot, skipping all
// that; but a command started with it ignored (nohup) keeps ignoring it,
// which catching it would undo.
func stopSignals() []os.Signal {
	signals := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		signals = append(signals, syscall.SIGHUP)
	}
	return signals
}

// usageError is a mistake in the command line: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func run(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return usageError{"no command given"}
	}
	switch args[0] {
	case "serve":
		return serveCommand(ctx, args[1:])
	case "migrate":
		return migrateCommand(ctx, args[1:])
	case "accounts":
		return accountsCommand(ctx, args[1:], stdout)
	case "drivers":
		return driversCommand(ctx, args[1:], stdout)
	case "keys":
		return keysCommand(ctx, args[1:], stdout)
	case "imports":
		return importsCommand(ctx, args[1:], stdout)
	case "webhooks":
		return webhooksCommand(ctx, args[1:], stdout)
	case "demo":
		return demoCommand(ctx, args[1:], stdout)
	case "dev":
		return devCommand(ctx, args[1:], stdout)
	case "version", "--version":
		return versionCommand(args[1:], stdout)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(os.Stderr, usage)
	return usageError{fmt.Sprintf("unknown command %q", args[0])}
}

// parse parses a subcommand's flags, mapping mistakes to usage errors.
func parse(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(os.Stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err.Error()}
	}
	noteSecrets(fs)
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("%s: unexpected argument %q", fs.Name(), fs.Arg(0))}
	}
	return nil
}

// subcommand checks that args name the one action a command has, such as
// "create" in "accounts create". It answers -h or --help with the usage line
// (done is then true) and anything else with a usage error.
func subcommand(args []string, action, usage string, stdout io.Writer) (rest []string, done bool, err error) {
	if len(args) > 0 && args[0] == action {
		return args[1:], false, nil
	}
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprintln(stdout, "Usage: "+usage)
		return nil, true, nil
	}
	return nil, false, usageError{"usage: " + usage}
}
