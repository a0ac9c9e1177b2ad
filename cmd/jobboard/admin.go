package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc/status"

	jobboardv2 "jobboard/gen/jobboard/v2"
	"jobboard/internal/demo"
	"jobboard/server"
	"jobboard/server/store"
)

// storeCommand is an administrative command on the database: it parses its
// flags, checks them before touching the database, opens and migrates the
// database, and runs.
type storeCommand struct {
	name  string // as typed, such as "keys create"
	nargs int    // positional arguments required
	// flags registers the command's own flags.
	flags func(fs *flag.FlagSet)
	// check validates the command line; it runs before the database is opened.
	check func(args []string) error
	run   func(ctx context.Context, st *store.Store, args []string) error
}

func (c storeCommand) exec(ctx context.Context, args []string) error {
	var cfg config
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	cfg.databaseFlag(fs)
	if c.flags != nil {
		c.flags(fs)
	}
	fs.SetOutput(os.Stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{fmt.Sprintf("%s: %v", c.name, err)}
	}
	if fs.NArg() != c.nargs {
		return usageError{fmt.Sprintf("%s: expected %d argument(s), got %d", c.name, c.nargs, fs.NArg())}
	}
	if c.check != nil {
		if err := c.check(fs.Args()); err != nil {
			return err
		}
	}
	if err := cfg.requireDatabase(c.name); err != nil {
		return err
	}
	st, err := openAndMigrate(ctx, cfg.databaseURL)
	if err != nil {
		return err
	}
	defer st.Close()
	return c.run(ctx, st, fs.Args())
}

// printJSON writes v as one JSON line.
func printJSON(w io.Writer, v any) error { return json.NewEncoder(w).Encode(v) }

func migrateCommand(ctx context.Context, args []string) error {
	return storeCommand{name: "migrate", run: func(ctx context.Context, st *store.Store, _ []string) error {
		v, err := st.SchemaVersion(ctx)
		if err != nil {
			return err
		}
		slog.Info("database schema is current", "version", v)
		return nil
	}}.exec(ctx, args)
}

const accountsUsage = "jobboard accounts create --name NAME | list | rotate-webhook-secret --account ID"

func accountsCommand(ctx context.Context, args []string, stdout io.Writer) error {
	var name string
	var account int64
	accountFlag := func(fs *flag.FlagSet) {
		fs.Int64Var(&account, "account", 0, "the account (required)")
	}
	needAccount := func(cmd string) func([]string) error {
		return func([]string) error {
			if account <= 0 {
				return usageError{cmd + ": --account is required"}
			}
			return nil
		}
	}
	if len(args) == 0 {
		return usageError{"usage: " + accountsUsage}
	}
	switch args[0] {
	case "create":
		return storeCommand{name: "accounts create",
			flags: func(fs *flag.FlagSet) { fs.StringVar(&name, "name", "", "the employer's name (required)") },
			check: func([]string) error {
				if name = strings.TrimSpace(name); name == "" {
					return usageError{"accounts create: --name is required"}
				}
				return nil
			},
			run: func(ctx context.Context, st *store.Store, _ []string) error {
				creds, err := server.CreateAccount(ctx, st, name)
				if err != nil {
					return fmt.Errorf("create account: %w", err)
				}
				return printJSON(stdout, creds)
			}}.exec(ctx, args[1:])
	case "list":
		return storeCommand{name: "accounts list", run: func(ctx context.Context, st *store.Store, _ []string) error {
			accounts, err := st.ListAccounts(ctx)
			if err != nil {
				return err
			}
			for _, a := range accounts {
				if err := printJSON(stdout, a); err != nil {
					return err
				}
			}
			return nil
		}}.exec(ctx, args[1:])
	case "rotate-webhook-secret":
		return storeCommand{name: "accounts rotate-webhook-secret", flags: accountFlag,
			check: needAccount("accounts rotate-webhook-secret"),
			run: func(ctx context.Context, st *store.Store, _ []string) error {
				secret, err := server.RotateWebhookSecret(ctx, st, account)
				if errors.Is(err, store.ErrNotFound) {
					return fmt.Errorf("account %d not found", account)
				}
				if err != nil {
					return err
				}
				return printJSON(stdout, map[string]any{"id": account, "webhookSecret": secret})
			}}.exec(ctx, args[1:])
	case "-h", "--help":
		fmt.Fprintln(stdout, "Usage: "+accountsUsage)
		return nil
	}
	return usageError{"usage: " + accountsUsage}
}

// revokeConfirmWithin is how long keys revoke waits for running servers to
// confirm they forgot the revoked keys.
const revokeConfirmWithin = 10 * time.Second

const keysUsage = "jobboard keys create --account ID | jobboard keys revoke KEY_PREFIX"

// keysCommand: jobboard keys create --account ID | keys revoke PREFIX.
func keysCommand(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return usageError{"usage: " + keysUsage}
	}
	switch args[0] {
	case "create":
		var account int64
		return storeCommand{name: "keys create",
			flags: func(fs *flag.FlagSet) { fs.Int64Var(&account, "account", 0, "the account to add a key to (required)") },
			check: func([]string) error {
				if account <= 0 {
					return usageError{"keys create: --account is required"}
				}
				return nil
			},
			run: func(ctx context.Context, st *store.Store, _ []string) error {
				key, err := server.CreateAPIKey(ctx, st, account)
				if errors.Is(err, store.ErrNotFound) {
					return fmt.Errorf("account %d not found", account)
				}
				if err != nil {
					return err
				}
				return printJSON(stdout, key)
			}}.exec(ctx, args[1:])
	case "revoke":
		return storeCommand{name: "keys revoke", nargs: 1, run: func(ctx context.Context, st *store.Store, rest []string) error {
			// The prefix as listed, or a whole key (its prefix is taken).
			prefix := server.KeyPrefix(rest[0])
			rev, err := st.RevokeAPIKeys(ctx, prefix, revokeConfirmWithin)
			if err != nil {
				return err
			}
			if rev.Revoked == 0 {
				return fmt.Errorf("no active key with prefix %q", prefix)
			}
			if rev.Confirmed < rev.Servers {
				slog.Warn("not every running server confirmed in time that it forgot the key; those that did not drop it within 30 s",
					"servers", rev.Servers, "confirmed", rev.Confirmed)
			}
			return printJSON(stdout, struct {
				Prefix string `json:"prefix"`
				store.Revocation
			}{prefix, rev})
		}}.exec(ctx, args[1:])
	case "-h", "--help":
		fmt.Fprintln(stdout, "Usage: "+keysUsage)
		return nil
	}
	return usageError{"usage: " + keysUsage}
}

// importsCommand: jobboard imports show ID prints an import's state and its
// callback delivery attempts, for operators.
func importsCommand(ctx context.Context, args []string, stdout io.Writer) error {
	args, done, err := subcommand(args, "show", "jobboard imports show IMPORT_ID", stdout)
	if done || err != nil {
		return err
	}
	return storeCommand{name: "imports show", nargs: 1, run: func(ctx context.Context, st *store.Store, rest []string) error {
		imp, err := st.ImportByID(ctx, rest[0])
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("job import %q not found", rest[0])
		}
		if err != nil {
			return err
		}
		attempts, err := st.CallbackAttempts(ctx, imp.ID)
		if err != nil {
			return err
		}
		results := json.RawMessage("null")
		if imp.Results != nil {
			results = imp.Results
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"id": imp.ID, "account": imp.AccountID, "status": imp.Status,
			"requestedAt": imp.RequestedAt, "completedAt": imp.CompletedAt, "callbackUrl": imp.CallbackURL,
			"requestId": imp.RequestID, "results": results, "callbackAttempts": attempts})
	}}.exec(ctx, args)
}

// driversCommand: jobboard drivers import --account ID FILE.
func driversCommand(ctx context.Context, args []string, stdout io.Writer) error {
	args, done, err := subcommand(args, "import", "jobboard drivers import --account ID FILE", stdout)
	if done || err != nil {
		return err
	}
	var account int64
	var apps []*jobboardv2.DriverApplication
	return storeCommand{name: "drivers import", nargs: 1,
		flags: func(fs *flag.FlagSet) {
			fs.Int64Var(&account, "account", 0, "the account the drivers applied to (required)")
		},
		check: func(rest []string) error {
			if account <= 0 {
				return usageError{"drivers import: --account is required"}
			}
			data, err := os.ReadFile(rest[0])
			if err != nil {
				return err
			}
			if apps, err = parseDriverFile(data); err != nil {
				return fmt.Errorf("%s: %w", rest[0], err)
			}
			return nil
		},
		run: func(ctx context.Context, st *store.Store, rest []string) error {
			if _, err := server.ImportApplicationFile(ctx, st, account, apps); err != nil {
				return fmt.Errorf("%s: nothing imported: %s", rest[0], status.Convert(err).Message())
			}
			return printJSON(stdout, map[string]int{"imported": len(apps)})
		}}.exec(ctx, args)
}

// demoCommand: jobboard demo seed --account ID --drivers N.
func demoCommand(ctx context.Context, args []string, stdout io.Writer) error {
	args, done, err := subcommand(args, "seed", "jobboard demo seed --account ID [--drivers N]", stdout)
	if done || err != nil {
		return err
	}
	var account int64
	var n int
	var seed uint64
	return storeCommand{name: "demo seed",
		flags: func(fs *flag.FlagSet) {
			fs.Int64Var(&account, "account", 0, "the account the synthetic drivers apply to (required)")
			fs.IntVar(&n, "drivers", 100_000, "how many synthetic driver applications to add")
			fs.Uint64Var(&seed, "seed", uint64(time.Now().UnixNano()), "random seed")
		},
		check: func([]string) error {
			if account <= 0 || n <= 0 {
				return usageError{"demo seed: --account and a positive --drivers are required"}
			}
			return nil
		},
		run: func(ctx context.Context, st *store.Store, _ []string) error {
			started := time.Now()
			refs, err := accountJobRefs(ctx, st, account)
			if err != nil {
				return err
			}
			tag := fmt.Sprintf("s%x.", seed)
			if err := st.SeedApplications(ctx, account, demo.Applications(account, n, seed, time.Now(), refs, tag)); err != nil {
				return err
			}
			return printJSON(stdout, map[string]any{"seeded": n, "seconds": time.Since(started).Seconds()})
		}}.exec(ctx, args)
}
