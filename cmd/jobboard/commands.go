package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"

	"jobboard/server"
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
	args, done, err := subcommand(args, "create", "jobboard accounts create --name NAME", stdout)
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
