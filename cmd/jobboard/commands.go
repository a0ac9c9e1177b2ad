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
	"sync/atomic"

	"jobboard/server"
	"jobboard/server/store"
)

type atomicBool struct{ v atomic.Bool }

func (b *atomicBool) set()      { b.v.Store(true) }
func (b *atomicBool) get() bool { return b.v.Load() }

func migrateCommand(ctx context.Context, args []string) error {
	var cfg config
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	cfg.databaseFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := cfg.requireDatabase("migrate"); err != nil {
		return err
	}
	st, err := openAndMigrate(ctx, cfg.databaseURL)
	if err != nil {
		return err
	}
	defer st.Close()
	v, err := st.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	slog.Info("database schema is current", "version", v)
	return nil
}

func accountsCommand(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) > 0 && args[0] == "rotate-webhook-secret" {
		return rotateSecretCommand(ctx, args[1:], stdout)
	}
	if len(args) > 0 && args[0] == "list" {
		return accountsListCommand(ctx, args[1:], stdout)
	}
	args, done, err := subcommand(args, "create", "jobboard accounts create --name NAME | list | rotate-webhook-secret --account ID", stdout)
	if done || err != nil {
		return err
	}
	var cfg config
	var name string
	fs := flag.NewFlagSet("accounts create", flag.ContinueOnError)
	cfg.databaseFlag(fs)
	fs.StringVar(&name, "name", "", "the employer's name (required)")
	if err := parse(fs, args); err != nil {
		return err
	}
	name = strings.TrimSpace(name)
	if name == "" {
		return usageError{"accounts create: --name is required"}
	}
	if err := cfg.requireDatabase("accounts create"); err != nil {
		return err
	}
	st, err := openAndMigrate(ctx, cfg.databaseURL)
	if err != nil {
		return err
	}
	defer st.Close()
	creds, err := server.CreateAccount(ctx, st, name)
	if err != nil {
		return fmt.Errorf("create account: %w", err)
	}
	return json.NewEncoder(stdout).Encode(creds)
}

// rotateSecretCommand: jobboard accounts rotate-webhook-secret --account ID.
func rotateSecretCommand(ctx context.Context, args []string, stdout io.Writer) error {
	var cfg config
	var account int64
	fs := flag.NewFlagSet("accounts rotate-webhook-secret", flag.ContinueOnError)
	cfg.databaseFlag(fs)
	fs.Int64Var(&account, "account", 0, "the account whose callback signing secret to replace (required)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if account <= 0 {
		return usageError{"accounts rotate-webhook-secret: --account is required"}
	}
	if err := cfg.requireDatabase("accounts rotate-webhook-secret"); err != nil {
		return err
	}
	st, err := openAndMigrate(ctx, cfg.databaseURL)
	if err != nil {
		return err
	}
	defer st.Close()
	secret, err := server.RotateWebhookSecret(ctx, st, account)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("account %d not found", account)
	}
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(map[string]any{"id": account, "webhookSecret": secret})
}

// importsCommand: jobboard imports show ID prints an import's state and its
// callback delivery attempts, for operators.
func importsCommand(ctx context.Context, args []string, stdout io.Writer) error {
	args, done, err := subcommand(args, "show", "jobboard imports show IMPORT_ID", stdout)
	if done || err != nil {
		return err
	}
	var cfg config
	fs := flag.NewFlagSet("imports show", flag.ContinueOnError)
	cfg.databaseFlag(fs)
	fs.SetOutput(os.Stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"usage: jobboard imports show IMPORT_ID"}
	}
	if err := cfg.requireDatabase("imports show"); err != nil {
		return err
	}
	st, err := openAndMigrate(ctx, cfg.databaseURL)
	if err != nil {
		return err
	}
	defer st.Close()
	imp, err := st.ImportByID(ctx, fs.Arg(0))
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("job import %q not found", fs.Arg(0))
	}
	if err != nil {
		return err
	}
	attempts, err := st.CallbackAttempts(ctx, imp.ID)
	if err != nil {
		return err
	}
	out := map[string]any{"id": imp.ID, "account": imp.AccountID, "status": imp.Status, "requestedAt": imp.RequestedAt,
		"completedAt": imp.CompletedAt, "callbackUrl": imp.CallbackURL, "results": json.RawMessage(orNull(imp.Results)),
		"callbackAttempts": attempts}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func orNull(b []byte) []byte {
	if b == nil {
		return []byte("null")
	}
	return b
}
