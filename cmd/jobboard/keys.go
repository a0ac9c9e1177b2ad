package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"jobboard/server"
	"jobboard/server/store"
)

// withStore parses a subcommand's flags (database flag included), opens the
// migrated store and runs fn with the remaining arguments.
func withStore(ctx context.Context, name string, args []string, flags func(fs *flag.FlagSet), nargs int,
	fn func(st *store.Store, args []string) error) error {
	var cfg config
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	cfg.databaseFlag(fs)
	if flags != nil {
		flags(fs)
	}
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{fmt.Sprintf("%s: %v", name, err)}
	}
	if fs.NArg() != nargs {
		return usageError{fmt.Sprintf("%s: expected %d argument(s), got %d", name, nargs, fs.NArg())}
	}
	if err := cfg.requireDatabase(name); err != nil {
		return err
	}
	st, err := openAndMigrate(ctx, cfg.databaseURL)
	if err != nil {
		return err
	}
	defer st.Close()
	return fn(st, fs.Args())
}

// accountsListCommand: jobboard accounts list.
func accountsListCommand(ctx context.Context, args []string, stdout io.Writer) error {
	return withStore(ctx, "accounts list", args, nil, 0, func(st *store.Store, _ []string) error {
		accounts, err := st.ListAccounts(ctx)
		if err != nil {
			return err
		}
		enc := json.NewEncoder(stdout)
		for _, a := range accounts {
			if err := enc.Encode(a); err != nil {
				return err
			}
		}
		return nil
	})
}

// keysCommand: jobboard keys create --account ID | keys revoke PREFIX.
func keysCommand(ctx context.Context, args []string, stdout io.Writer) error {
	const usage = "jobboard keys create --account ID | jobboard keys revoke KEY_PREFIX"
	if len(args) == 0 {
		return usageError{"usage: " + usage}
	}
	switch args[0] {
	case "create":
		var account int64
		return withStore(ctx, "keys create", args[1:], func(fs *flag.FlagSet) {
			fs.Int64Var(&account, "account", 0, "the account to add a key to (required)")
		}, 0, func(st *store.Store, _ []string) error {
			if account <= 0 {
				return usageError{"keys create: --account is required"}
			}
			key, err := server.CreateAPIKey(ctx, st, account)
			if errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("account %d not found", account)
			}
			if err != nil {
				return err
			}
			return json.NewEncoder(stdout).Encode(key)
		})
	case "revoke":
		return withStore(ctx, "keys revoke", args[1:], nil, 1, func(st *store.Store, rest []string) error {
			// The prefix as listed, or a whole key (its prefix is taken).
			prefix := server.KeyPrefix(rest[0])
			n, err := st.RevokeAPIKeys(ctx, prefix)
			if err != nil {
				return err
			}
			if n == 0 {
				return fmt.Errorf("no active key with prefix %q", prefix)
			}
			return json.NewEncoder(stdout).Encode(map[string]any{"prefix": prefix, "revoked": n})
		})
	case "-h", "--help":
		fmt.Fprintln(stdout, "Usage: "+usage)
		return nil
	}
	return usageError{"usage: " + usage}
}
