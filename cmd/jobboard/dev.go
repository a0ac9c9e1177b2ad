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
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/truckjobs/jobboard/server/jobs"

	"github.com/truckjobs/jobboard/cmd/jobboard/demo"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/internal/apikey"
	"github.com/truckjobs/jobboard/internal/pglocal"
	"github.com/truckjobs/jobboard/server"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/store"
)

// devCommand serves against a local PostgreSQL kept in the data folder (or
// DATABASE_URL when set) with a demo account whose key stays the same from
// one run to the next. It listens on loopback unless told otherwise.
func devCommand(ctx context.Context, args []string, stdout io.Writer) error {
	var cfg config
	var dataDir string
	var reset, useTLS bool
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	cfg.databaseFlag(fs)
	fs.Lookup("database-url").Usage = "PostgreSQL connection URL; empty: a local PostgreSQL in the data folder (env DATABASE_URL)"
	cfg.serveFlags(fs, devDefault)
	fs.Lookup("internal-token").Usage = "token the board's internal services call gRPC with; empty: one kept in the data folder (env JOBBOARD_INTERNAL_TOKEN)"
	fs.StringVar(&dataDir, "data", devDataDir, "folder for the local database, the demo account's key and webhook secret, and the internal token")
	fs.BoolVar(&reset, "reset", false, "remove the data folder and exit, instead of serving; the next start begins with an empty database and a new demo account")
	fs.BoolVar(&useTLS, "tls", false, "serve REST and gRPC over TLS with a local CA and certificates made in DATA/tls at the first start, taking its client certificate for internal services")
	if err := parse(fs, args); err != nil {
		return err
	}
	if reset {
		return resetDataDir(ctx, dataDir, stdout)
	}
	if _, err := cfg.serverConfig(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dataDir, devTryFolder), 0o755); err != nil {
		return err
	}
	if useTLS {
		if err := cfg.useDevTLS(dataDir); err != nil {
			return err
		}
	}
	local := cfg.databaseURL == ""
	if local {
		cluster, err := pglocal.Start(ctx, clusterDir(dataDir), pglocal.Options{Durable: true})
		if err != nil {
			return inUse(err, dataDir, "stop that one, or start this one with --data DIR")
		}
		defer cluster.Stop()
		slog.Info("local PostgreSQL started", "dir", clusterDir(dataDir), "port", cluster.Port())
		if err := cluster.CreateDatabase(ctx, devDatabase); err != nil {
			return err
		}
		cfg.useLocal(cluster.URL(devDatabase))
	} else if err := cfg.requireDatabase("dev"); err != nil {
		return err
	}
	stopTracing, err := startTracing(ctx)
	if err != nil {
		return err
	}
	defer stopTracing()
	st, err := openAndMigrate(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	creds, err := demoAccount(ctx, st, dataDir)
	if err != nil {
		return err
	}
	if cfg.internalToken == "" {
		if cfg.internalToken, err = devInternalToken(filepath.Join(dataDir, "internal-token")); err != nil {
			return err
		}
		noteSecret(cfg.internalToken)
	}
	return serve(ctx, cfg, st, func() { printBanner(stdout, cfg, creds, dataDir, local) })
}

// The local database of dev: the default data folder, and the name of
// the database in the cluster dev keeps in it.
const (
	devDataDir  = ".data"
	devDatabase = "jobboard"
)

// clusterDir is where dev keeps its local PostgreSQL in the data folder.
func clusterDir(dataDir string) string { return filepath.Join(dataDir, "postgres") }

// inUse words the refusal to use a data folder another dev owns, naming
// it as given and saying what to do; other errors pass unchanged.
func inUse(err error, dataDir, advice string) error {
	var busy *pglocal.InUseError
	if !errors.As(err, &busy) {
		return err
	}
	owner := "a running jobboard dev"
	if busy.PID != 0 {
		owner += fmt.Sprintf(" (pid %d)", busy.PID)
	}
	return fmt.Errorf("%s is in use by %s: %s", dataDir, owner, advice)
}

// resetDataDir removes the data folder, unless a dev is using it. Under the
// folder's lock it is first renamed aside, so a dev started meanwhile makes
// a new folder instead of meeting a half-removed one.
func resetDataDir(ctx context.Context, dataDir string, stdout io.Writer) error {
	info, err := os.Lstat(dataDir)
	if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(stdout, "%s does not exist: nothing to reset\n", dataDir)
		return nil
	}
	if err != nil {
		return err
	}
	if info.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symbolic link: not removed (remove the folder it points to by hand)", dataDir)
	}
	// A folder a dev is serving from is refused as in use before its
	// contents are judged: whatever it holds, stopping that dev is the
	// first thing to do. Only a cluster folder dev made is locked here,
	// since taking the lock makes postgres/ in a folder that has none.
	var lock *pglocal.Lock
	if pglocal.IsClusterDir(clusterDir(dataDir)) {
		if lock, err = lockForReset(dataDir); err != nil {
			return err
		}
		defer lock.Release()
	}
	// A mistyped --data must not remove a folder dev never made.
	if err := checkDevData(dataDir); err != nil {
		return err
	}
	if lock == nil {
		if lock, err = lockForReset(dataDir); err != nil {
			return err
		}
		defer lock.Release()
	}
	if err := lock.StopLeftover(ctx); err != nil {
		return err
	}
	aside := filepath.Clean(dataDir) + fmt.Sprintf(".removing-%d", os.Getpid())
	if err := os.Rename(dataDir, aside); err != nil {
		return err
	}
	if err := os.RemoveAll(aside); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "removed %s: the next jobboard dev starts with an empty database and a new demo account\n", dataDir)
	return nil
}

// lockForReset takes the data folder's lock, refusing a folder a dev is
// serving from.
func lockForReset(dataDir string) (*pglocal.Lock, error) {
	lock, err := pglocal.Acquire(clusterDir(dataDir))
	if err != nil {
		return nil, inUse(err, dataDir, "stop it before resetting (Ctrl-C where it runs)")
	}
	return lock, nil
}

// devTryFolder is where the README's examples keep the files they write as
// a reader tries them (an endpoint's signing secret, a driver to import).
// They describe this database's contents, so a reset removes them with it.
const devTryFolder = "try"

// devDataEntries are all that dev puts in its data folder.
var devDataEntries = map[string]bool{"postgres": true, demoKeyFile: true, demoSecretFile: true, "internal-token": true,
	devTLSFolder: true, devTryFolder: true}

// checkDevData refuses a folder that holds anything dev does not make, or
// a postgres/ that is not a cluster folder of dev's.
func checkDevData(dataDir string) error {
	entries, err := os.ReadDir(dataDir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !devDataEntries[e.Name()] {
			return fmt.Errorf("%s is not a jobboard dev data folder (it holds %s, which dev does not make): not removed", dataDir, e.Name())
		}
	}
	if _, err := os.Stat(clusterDir(dataDir)); err == nil && !pglocal.IsClusterDir(clusterDir(dataDir)) {
		return fmt.Errorf("%s is not a jobboard dev data folder (its postgres/ was not made by dev): not removed", dataDir)
	}
	return nil
}

// demoCredentials are what the banner shows of the demo account.
type demoCredentials struct {
	id                    int64
	apiKey, webhookSecret string
}

// The files in the data folder holding the demo account's credentials.
const (
	demoKeyFile    = "demo-api-key"
	demoSecretFile = "demo-webhook-secret"
)

// demoAccount returns the demo account's credentials, creating the account
// and its demo jobs when the key file is missing or its key no longer
// works. An existing account gets its demo jobs posted again, which brings
// back deleted ones under their ids (1 to 4), so the README's examples,
// which delete some, answer the same way after every restart. The webhook
// secret is read from the database each time (it may have been rotated)
// and written beside the key.
func demoAccount(ctx context.Context, st *store.Store, dataDir string) (demoCredentials, error) {
	var c demoCredentials
	if b, err := os.ReadFile(filepath.Join(dataDir, demoKeyFile)); err == nil {
		c.apiKey = strings.TrimSpace(string(b))
		c.id, err = st.AccountIDByKeyHash(ctx, apikey.Hash(c.apiKey))
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return c, err
		}
		if c.id != 0 {
			// Not fatal: an account at its active-job limit keeps serving.
			if rejected, err := postDemoJobs(ctx, st, c.id); err != nil {
				return c, err
			} else if rejected > 0 {
				slog.Warn("demo jobs not put back", "rejected", rejected)
			}
		}
	}
	if c.id == 0 {
		created, err := createDemoAccount(ctx, st)
		if err != nil {
			return c, err
		}
		if err := os.WriteFile(filepath.Join(dataDir, demoKeyFile), []byte(created.APIKey+"\n"), 0o600); err != nil {
			return c, err
		}
		c.id, c.apiKey = created.AccountID, created.APIKey
	}
	account, err := st.Account(ctx, c.id)
	if err != nil {
		return c, err
	}
	c.webhookSecret = account.WebhookSecret
	return c, os.WriteFile(filepath.Join(dataDir, demoSecretFile), []byte(c.webhookSecret+"\n"), 0o600)
}

// createDemoAccount creates the demo account with its jobs and drivers.
func createDemoAccount(ctx context.Context, st *store.Store) (server.Credentials, error) {
	creds, err := server.CreateAccount(ctx, st, "Demo Carrier")
	if err != nil {
		return creds, err
	}
	rejected, err := postDemoJobs(ctx, st, creds.AccountID)
	if err != nil {
		return creds, err
	}
	if rejected > 0 {
		return creds, fmt.Errorf("seed demo jobs: %d rejected", rejected)
	}
	refs, err := accountJobRefs(ctx, st, creds.AccountID)
	if err != nil {
		return creds, err
	}
	if err := st.SeedApplications(ctx, creds.AccountID, demo.Applications(creds.AccountID, demoDrivers, 1, time.Now(), refs, fmt.Sprintf("demo%d.", creds.AccountID))); err != nil {
		return creds, fmt.Errorf("seed demo drivers: %w", err)
	}
	slog.Info("demo account created", "id", creds.AccountID, "name", creds.Name)
	return creds, nil
}

// postDemoJobs posts the demo jobs to the account: adds them, or puts them
// back as they were (same ids) when they were changed or deleted. It
// returns how many the post rejected.
func postDemoJobs(ctx context.Context, st *store.Store, account int64) (int32, error) {
	jobSvc := jobs.New(st, time.Now)
	resp, err := jobSvc.PostJobs(call.WithCaller(ctx, call.Caller{AccountID: account}),
		&restv2.PostJobsRequest{Jobs: demoJobs()})
	if err != nil {
		return 0, fmt.Errorf("post demo jobs: %w", err)
	}
	return resp.Errors, nil
}

// demoDrivers is how many synthetic applicants the demo account starts with.
const demoDrivers = 300

func demoJobs() []*restv2.JobInput {
	s := func(v string) *string { return &v }
	return []*restv2.JobInput{
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
		{ReferenceNumber: s("DEMO1005"), Title: s("Regional Tanker Driver - Chemicals"), City: s("Baytown"), State: s("TX"),
			PostalCode: s("77520"), DriverType: s("Company Driver"), FreightType: s("Tanker"),
			PayAmountMin: s("1600"), PayAmountMax: s("1950"), PayFrequency: s("Weekly"),
			EmploymentType: []string{"Full-Time"}, RouteType: []string{"Regional"}, LicenseClass: s("A"),
			Description:  s("<p>Bulk chemical loads out of the ship channel, home weekends.</p>"),
			Requirements: s("<ul><li>Class A CDL with tanker and HAZMAT endorsements</li></ul>")},
	}
}

// printBanner says where dev serves, the demo account's credentials, how
// the admin commands and other clients reach the database, and what to try.
func printBanner(w io.Writer, cfg config, creds demoCredentials, dataDir string, local bool) {
	base := "http://" + displayAddr(cfg.httpAddr)
	grpcAddr := displayAddr(cfg.grpcAddr)
	curlTLS, grpcurlTLS, certTry := "", "-plaintext", ""
	if cfg.tlsCertFile != "" {
		tlsFile := func(name string) string { return filepath.Join(dataDir, devTLSFolder, name) }
		base = "https://" + displayAddr(cfg.httpAddr)
		curlTLS, grpcurlTLS = " --cacert "+tlsFile(devCAFile), "-cacert "+tlsFile(devCAFile)
		certTry = fmt.Sprintf("\n  .bin/grpcurl %s -cert %s -key %s -H 'x-account-id: %d' %s jobboard.v2.JobService/ListJobs",
			grpcurlTLS, tlsFile(devClientFile), tlsFile(devClientKeyFile), creds.id, grpcAddr)
	}
	metricsURL := "off"
	if cfg.metricsAddr != "" {
		metricsURL = "http://" + displayAddr(cfg.metricsAddr) + "/metrics"
	}
	file := func(name string) string { return filepath.Join(dataDir, name) }
	fmt.Fprintf(w, `
Job board running:
  REST     %s (API reference: %s/docs)
  gRPC     %s
  metrics  %s

Demo account %d:
  API key         %s
                  (also in %s)
  webhook secret  %s
                  (also in %s; it signs import callbacks)
The internal token for the driver intake is in %s.

%s

  export DATABASE_URL='%s'

Try:
  curl%s -u %s: %s/api/v2.0/jobs.json
  curl%s -u %s: %s/api/v2.0/jobs.xml
  curl%s -u %s: '%s/api/v2.0/drivers.json?state=TX&max=5'
  make grpcurl   # once: installs grpcurl into .bin/
  .bin/grpcurl %s -H 'authorization: Bearer %s' %s jobboard.v2.JobService/ListJobs%s

Press Ctrl-C to stop.
`, base, base, grpcAddr, metricsURL, creds.id, creds.apiKey, file(demoKeyFile), creds.webhookSecret, file(demoSecretFile),
		file("internal-token"), databaseHint(dataDir, local), redact(cfg.databaseURL), curlTLS, creds.apiKey, base, curlTLS, creds.apiKey, base,
		curlTLS, creds.apiKey, base, grpcurlTLS, creds.apiKey, grpcAddr, certTry)
}

// databaseHint says how the admin commands reach dev's database: by
// themselves when it is the local one of the data folder, else with the
// URL that follows the hint.
func databaseHint(dataDir string, local bool) string {
	const commands = "The admin commands (jobboard accounts create, keys create, imports show, ...)"
	if !local {
		return commands + "\nreach this database with:"
	}
	where := "when run in this directory"
	switch {
	case filepath.IsAbs(dataDir):
		where = "when given --data " + dataDir
	case dataDir != devDataDir:
		where += " with --data " + dataDir
	}
	return commands + "\nfind this database by themselves " + where + ".\nOther PostgreSQL clients reach it with:"
}

// displayAddr is host:port of a listen address as a client on this machine
// dials it: localhost for every interface.
func displayAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return net.JoinHostPort(host, port)
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
