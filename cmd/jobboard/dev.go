package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	jobboardv2 "jobboard/gen/jobboard/v2"
	"jobboard/internal/demo"
	"jobboard/internal/pglocal"
	"jobboard/server"
	"jobboard/server/store"
)

// devCommand serves against a local PostgreSQL kept in the data folder (or
// DATABASE_URL when set) with a demo account whose key stays the same from
// one run to the next.
func devCommand(ctx context.Context, args []string, stdout io.Writer) error {
	var cfg config
	var dataDir string
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	cfg.databaseFlag(fs)
	cfg.serveFlags(fs)
	fs.StringVar(&dataDir, "data", ".data", "folder for the local database and the demo key")
	if _, ok := os.LookupEnv("JOBBOARD_CALLBACK_ALLOW_PRIVATE"); !ok {
		// Locally, the receiver of a callback is usually on this machine.
		cfg.callbackAllowPrivate = "true"
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if _, err := cfg.serverConfig(); err != nil {
		return err
	}
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return err
	}
	if cfg.databaseURL == "" {
		slog.Info("starting local PostgreSQL", "dir", filepath.Join(dataDir, "postgres"))
		cluster, err := pglocal.Start(ctx, filepath.Join(dataDir, "postgres"), pglocal.Options{Durable: true})
		if err != nil {
			return err
		}
		defer cluster.Stop()
		if err := cluster.CreateDatabase(ctx, "jobboard"); err != nil {
			return err
		}
		cfg.databaseURL = cluster.URL("jobboard")
	}
	st, err := openAndMigrate(ctx, cfg.databaseURL)
	if err != nil {
		return err
	}
	defer st.Close()
	key, err := demoAccount(ctx, st, filepath.Join(dataDir, "demo-api-key"))
	if err != nil {
		return err
	}
	if cfg.internalToken == "" {
		if cfg.internalToken, err = devInternalToken(filepath.Join(dataDir, "internal-token")); err != nil {
			return err
		}
	}
	return serve(ctx, cfg, st, func() { printBanner(stdout, cfg, key, dataDir) })
}

// demoAccount returns the demo account's key, creating the account and its
// demo jobs when the key file is missing or its key no longer works.
func demoAccount(ctx context.Context, st *store.Store, keyFile string) (string, error) {
	if b, err := os.ReadFile(keyFile); err == nil {
		key := strings.TrimSpace(string(b))
		if _, err := st.AccountIDByKeyHash(ctx, server.HashAPIKey(key)); err == nil {
			return key, nil
		} else if !errors.Is(err, store.ErrNotFound) {
			return "", err
		}
	}
	creds, err := server.CreateAccount(ctx, st, "Demo Carrier")
	if err != nil {
		return "", err
	}
	jobs := server.NewJobService(st, time.Now)
	resp, err := jobs.PostJobs(server.ContextWithCaller(ctx, server.Caller{AccountID: creds.AccountID}),
		&jobboardv2.PostJobsRequest{Jobs: demoJobs()})
	if err != nil {
		return "", fmt.Errorf("seed demo jobs: %w", err)
	}
	if resp.Errors > 0 {
		return "", fmt.Errorf("seed demo jobs: %d rejected", resp.Errors)
	}
	refs, err := accountJobRefs(ctx, st, creds.AccountID)
	if err != nil {
		return "", err
	}
	if err := st.SeedApplications(ctx, creds.AccountID, demo.Applications(creds.AccountID, demoDrivers, 1, time.Now(), refs, fmt.Sprintf("demo%d.", creds.AccountID))); err != nil {
		return "", fmt.Errorf("seed demo drivers: %w", err)
	}
	if err := os.WriteFile(keyFile, []byte(creds.APIKey+"\n"), 0o600); err != nil {
		return "", err
	}
	slog.Info("demo account created", "id", creds.AccountID, "name", creds.Name)
	return creds.APIKey, nil
}

// demoDrivers is how many synthetic applicants the demo account starts with.
const demoDrivers = 300

func demoJobs() []*jobboardv2.JobInput {
	s := func(v string) *string { return &v }
	return []*jobboardv2.JobInput{
		{ReferenceNumber: s("DEMO1001"), Title: s("OTR Company Driver - Dry Van"), City: s("Dallas"), State: s("TX"),
			PostalCode: s("75201"), DriverType: s("Company Driver"), FreightType: s("Dry Van"),
			PayAmountMin: s("0.58"), PayAmountMax: s("0.68"), PayFrequency: s("Per Mile"),
			EmploymentType: []string{"Full-Time"}, RouteType: []string{"OTR"}, LicenseClass: s("A"),
			Description:  s("<p>Home every 10-14 days. <strong>Late-model</strong> Freightliners.</p>"),
			Requirements: s("<ul><li>Class A CDL</li><li>1 year of experience</li></ul>")},
		{ReferenceNumber: s("DEMO1002"), Title: s("Regional Flatbed Owner Operator"), City: s("Joplin"), State: s("MO"),
			PostalCode: s("64801"), DriverType: s("Owner Operator"), FreightType: s("Flatbed"),
			Preference: s("Lease Purchase"), PayAmountMin: s("2500"), PayAmountMax: s("3800"), PayFrequency: s("Weekly"),
			EmploymentType: []string{"Full-Time", "Permanent"}, RouteType: []string{"Regional"}, LicenseClass: s("A"),
			Description: s("<p>Steady regional flatbed freight, home most weekends.</p>")},
		{ReferenceNumber: s("DEMO1003"), Title: s("Local Tanker Driver - HAZMAT"), City: s("Houston"), State: s("TX"),
			PostalCode: s("77002"), DriverType: s("Company Driver"), FreightType: s("Tanker"),
			PayAmountMin: s("28"), PayAmountMax: s("34.50"), PayFrequency: s("Hourly"),
			EmploymentType: []string{"Full-Time"}, RouteType: []string{"Local"}, TwicOnly: s("true"), LicenseClass: s("A"),
			Description: s("<p>Home daily. Tanker and HAZMAT endorsements required.</p>")},
		{ReferenceNumber: s("DEMO1004"), Title: s("CDL Student Program"), City: s("Phoenix"), State: s("AZ"),
			DriverType: s("Student"), FreightType: s("Refrigerated"), PayFrequency: s("Weekly"), PayAmountMin: s("900"),
			EmploymentType: []string{"Full-Time"}, RouteType: []string{"OTR"},
			Description: s("<p>Paid CDL training, then a reefer lane with a mentor.</p>")},
	}
}

func printBanner(w io.Writer, cfg config, key, dataDir string) {
	base := "http://localhost" + portOf(cfg.httpAddr)
	fmt.Fprintf(w, `
Job board running: REST %s, gRPC localhost%s
Demo account API key (also in %s; the internal token for the
driver intake is in %s):

  %s

Try:
  curl -u %s: %s/api/v2.0/jobs.json
  curl -u %s: %s/api/v2.0/jobs.xml
  curl -u %s: '%s/api/v2.0/drivers.json?state=TX&max=5'
  grpcurl -plaintext -H 'authorization: Bearer %s' localhost%s jobboard.v2.JobService/ListJobs

Press Ctrl-C to stop.
`, base, portOf(cfg.grpcAddr), filepath.Join(dataDir, "demo-api-key"), filepath.Join(dataDir, "internal-token"), key, key, base, key, base, key, base, key, portOf(cfg.grpcAddr))
}

// portOf returns ":PORT" of a listen address.
func portOf(addr string) string {
	if i := strings.LastIndex(addr, ":"); i >= 0 {
		return addr[i:]
	}
	return addr
}

// devInternalToken returns the token kept in file, creating a random one
// the first time, so the intake can be tried locally.
func devInternalToken(file string) (string, error) {
	if b, err := os.ReadFile(file); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), nil
	}
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	token := hex.EncodeToString(b)
	return token, os.WriteFile(file, []byte(token+"\n"), 0o600)
}

// accountJobRefs lists the reference numbers of the account's active jobs.
func accountJobRefs(ctx context.Context, st *store.Store, account int64) ([]string, error) {
	jobs, err := st.ListJobs(ctx, account)
	if err != nil {
		return nil, err
	}
	refs := make([]string, len(jobs))
	for i, j := range jobs {
		refs[i] = j.ReferenceNumber
	}
	return refs, nil
}
