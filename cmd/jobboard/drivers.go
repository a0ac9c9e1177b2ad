package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	jobboardv2 "jobboard/gen/jobboard/v2"
	"jobboard/internal/demo"
	"jobboard/server"
)

// driversCommand: jobboard drivers import --account ID FILE.
func driversCommand(ctx context.Context, args []string, stdout io.Writer) error {
	args, done, err := subcommand(args, "import", "jobboard drivers import --account ID FILE", stdout)
	if done || err != nil {
		return err
	}
	var cfg config
	var account int64
	fs := flag.NewFlagSet("drivers import", flag.ContinueOnError)
	cfg.databaseFlag(fs)
	fs.Int64Var(&account, "account", 0, "the account the drivers applied to (required)")
	fs.SetOutput(os.Stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if account <= 0 || fs.NArg() != 1 {
		return usageError{"drivers import: usage: jobboard drivers import --account ID FILE"}
	}
	if err := cfg.requireDatabase("drivers import"); err != nil {
		return err
	}
	data, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	apps, err := parseDriverFile(data)
	if err != nil {
		return fmt.Errorf("%s: %w", fs.Arg(0), err)
	}
	st, err := openAndMigrate(ctx, cfg.databaseURL)
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := server.ImportApplications(ctx, st, account, apps); err != nil {
		return fmt.Errorf("%s: nothing imported: %s", fs.Arg(0), status.Convert(err).Message())
	}
	return json.NewEncoder(stdout).Encode(map[string]int{"imported": len(apps)})
}

// parseDriverFile reads a JSON array of drivers in the detail representation.
// Derived fields (id, has_job_apps, job_id, title) are ignored; endorsement
// is the text form or a list of codes.
func parseDriverFile(data []byte) ([]*jobboardv2.DriverApplication, error) {
	var raw []map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("not a JSON array of drivers: %w", err)
	}
	apps := make([]*jobboardv2.DriverApplication, len(raw))
	for i, entry := range raw {
		if e, ok := entry["endorsement"]; ok {
			codes, err := endorsementCodes(e)
			if err != nil {
				return nil, fmt.Errorf("[%d] endorsement: %w", i, err)
			}
			entry["endorsements"], _ = json.Marshal(codes)
			delete(entry, "endorsement")
		}
		b, _ := json.Marshal(entry)
		apps[i] = &jobboardv2.DriverApplication{}
		if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(b, apps[i]); err != nil {
			return nil, fmt.Errorf("[%d]: %v", i, err)
		}
	}
	return apps, nil
}

// endorsementCodes reads "Doubles/Triples (T), HAZMAT (H)" or ["T", "H"].
func endorsementCodes(raw json.RawMessage) ([]string, error) {
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list, nil
	}
	var text *string
	if err := json.Unmarshal(raw, &text); err != nil {
		return nil, fmt.Errorf("expected text such as \"HAZMAT (H)\" or a list of codes")
	}
	codes := []string{}
	if text == nil {
		return codes, nil
	}
	for _, part := range strings.Split(*text, ",") {
		if part = strings.TrimSpace(part); part != "" {
			codes = append(codes, part)
		}
	}
	return codes, nil
}

// demoCommand: jobboard demo seed --account ID --drivers N.
func demoCommand(ctx context.Context, args []string, stdout io.Writer) error {
	args, done, err := subcommand(args, "seed", "jobboard demo seed --account ID [--drivers N]", stdout)
	if done || err != nil {
		return err
	}
	var cfg config
	var account int64
	var n int
	var seed uint64
	fs := flag.NewFlagSet("demo seed", flag.ContinueOnError)
	cfg.databaseFlag(fs)
	fs.Int64Var(&account, "account", 0, "the account the synthetic drivers apply to (required)")
	fs.IntVar(&n, "drivers", 100_000, "how many synthetic driver applications to add")
	fs.Uint64Var(&seed, "seed", uint64(time.Now().UnixNano()), "random seed")
	if err := parse(fs, args); err != nil {
		return err
	}
	if account <= 0 || n <= 0 {
		return usageError{"demo seed: --account and a positive --drivers are required"}
	}
	if err := cfg.requireDatabase("demo seed"); err != nil {
		return err
	}
	st, err := openAndMigrate(ctx, cfg.databaseURL)
	if err != nil {
		return err
	}
	defer st.Close()
	started := time.Now()
	refs, err := accountJobRefs(ctx, st, account)
	if err != nil {
		return err
	}
	tag := fmt.Sprintf("s%x.", seed)
	if err := st.SeedApplications(ctx, account, demo.Applications(account, n, seed, time.Now(), refs, tag)); err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(map[string]any{"seeded": n, "seconds": time.Since(started).Seconds()})
}
