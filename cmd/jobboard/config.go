package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/truckjobs/jobboard/server/leads"

	"github.com/truckjobs/jobboard/gateway/render"
	"github.com/truckjobs/jobboard/internal/forwarded"
	"github.com/truckjobs/jobboard/internal/pglocal"
	"github.com/truckjobs/jobboard/server"
	"github.com/truckjobs/jobboard/server/admission"
	"github.com/truckjobs/jobboard/server/store"
)

// config is the service's configuration: environment first, flags override.
type config struct {
	databaseURL          string
	databaseDirectURL    string
	readDatabaseURL      string
	httpAddr             string
	grpcAddr             string
	publicURL            string
	internalToken        string
	internalTokenPrev    string
	callbackAllowPrivate string
	callbackSchedule     string
	importRescueAfter    string
	webhookWorkers       string
	webhookDisableAfter  string
	debugAddr            string
	rateLimit            string
	rateBurst            string
	trustedProxies       string
	authFailureLimit     string
	authFailureBurst     string
	metricsAddr          string
	// Admission control (server/admission).
	maxInFlight    string
	admissionQueue string
	admissionWait  string
	accountFlight  string
	// The transport of the API listeners (transport.go).
	tlsCertFile          string
	tlsKeyFile           string
	internalClientCAFile string
	grpcMaxConnAge       string
	grpcMaxConnAgeGrace  string
}

// setting registers a string flag that starts from env when it is set, and
// names the variable in the help text. The help shows the built-in default
// def, never the environment's value: that may be a secret (the internal
// token, a password inside DATABASE_URL), and help and flag mistakes print it.
func setting(fs *flag.FlagSet, p *string, name, env, def, help string) {
	fs.StringVar(p, name, def, fmt.Sprintf("%s (env %s)", help, env))
	if e, ok := os.LookupEnv(env); ok {
		*p = e
	}
}

// serveDefaults are the built-in defaults in which dev differs from serve.
type serveDefaults struct {
	httpAddr, grpcAddr, metricsAddr, callbackAllowPrivate string
}

var (
	serveDefault = serveDefaults{httpAddr: ":8080", grpcAddr: ":9090", metricsAddr: ":9464", callbackAllowPrivate: "false"}
	// dev is for one machine: it listens on loopback only, since it lets
	// callbacks reach loopback and private addresses (a receiver on this
	// machine) and serves a demo account whose key is printed.
	devDefault = serveDefaults{httpAddr: "127.0.0.1:8080", grpcAddr: "127.0.0.1:9090",
		metricsAddr: "127.0.0.1:9464", callbackAllowPrivate: "true"}
)

// databaseURLFlags are the flags of the database URLs: each may hold a
// password, and each is checked before use.
var databaseURLFlags = []string{"database-url", "database-direct-url", "read-database-url"}

func (c *config) databaseFlag(fs *flag.FlagSet) {
	setting(fs, &c.databaseURL, "database-url", "DATABASE_URL", "", "PostgreSQL connection URL; may be PgBouncer in transaction pooling mode")
	setting(fs, &c.databaseDirectURL, "database-direct-url", "JOBBOARD_DATABASE_DIRECT_URL", "",
		"PostgreSQL URL without a transaction-mode pooler, for what needs a session: LISTEN, the migrations' lock (default: DATABASE_URL)")
}

// databaseOptions are the optional databases of docs/deploy.md 3 for store.Open.
func (c *config) databaseOptions() []store.Option {
	return []store.Option{store.DirectURL(c.databaseDirectURL), store.ReadURL(c.readDatabaseURL)}
}

func (c *config) serveFlags(fs *flag.FlagSet, d serveDefaults) {
	setting(fs, &c.httpAddr, "http-addr", "JOBBOARD_HTTP_ADDR", d.httpAddr, "REST listen address")
	setting(fs, &c.grpcAddr, "grpc-addr", "JOBBOARD_GRPC_ADDR", d.grpcAddr, "gRPC listen address")
	setting(fs, &c.publicURL, "public-url", "JOBBOARD_PUBLIC_URL", "", "absolute base URL used in links (default: from each request)")
	setting(fs, &c.internalToken, "internal-token", "JOBBOARD_INTERNAL_TOKEN", "", "token the board's internal services call gRPC with (empty: internal access off)")
	setting(fs, &c.internalTokenPrev, "internal-token-previous", "JOBBOARD_INTERNAL_TOKEN_PREVIOUS", "",
		"the internal token being rotated out, accepted beside the current one until it is unset")
	setting(fs, &c.callbackAllowPrivate, "callback-allow-private", "JOBBOARD_CALLBACK_ALLOW_PRIVATE", d.callbackAllowPrivate,
		"let import callbacks go to loopback and private addresses (development only)")
	setting(fs, &c.callbackSchedule, "callback-retry-schedule", "JOBBOARD_CALLBACK_RETRY_SCHEDULE", "",
		"comma-separated waits before each callback retry, such as 5s,5m,30m (default 5s,5m,30m,2h,5h,10h,10h)")
	setting(fs, &c.webhookWorkers, "webhook-workers", "JOBBOARD_WEBHOOK_WORKERS", strconv.Itoa(leads.DefaultWebhookWorkers),
		"webhook deliveries this process sends at once (they mostly wait on receivers); 0: it queues deliveries but sends none, leaving them to processes with workers on the same database")
	setting(fs, &c.webhookDisableAfter, "webhook-disable-after", "JOBBOARD_WEBHOOK_DISABLE_AFTER", "120h",
		"how long every delivery to a webhook endpoint may fail before the endpoint is disabled (a Go duration)")
	setting(fs, &c.importRescueAfter, "import-rescue-after", "JOBBOARD_IMPORT_RESCUE_AFTER", "10m",
		"how long an import may stay running before another replica takes it over (its worker is presumed dead)")
	setting(fs, &c.rateLimit, "rate-limit", "JOBBOARD_RATE_LIMIT", "50",
		"requests a second each account (all its keys together) may make on average; 0: no limit")
	setting(fs, &c.rateBurst, "rate-burst", "JOBBOARD_RATE_BURST", "100",
		"requests an account may make at once before the rate applies")
	setting(fs, &c.authFailureLimit, "auth-failure-limit", "JOBBOARD_AUTH_FAILURE_LIMIT", "10",
		"requests with a missing or wrong key a second each client address may make on average; 0: no limit")
	setting(fs, &c.authFailureBurst, "auth-failure-burst", "JOBBOARD_AUTH_FAILURE_BURST", "20",
		"requests with a missing or wrong key a client address may make at once before that rate applies")
	setting(fs, &c.trustedProxies, "trusted-proxies", "JOBBOARD_TRUSTED_PROXIES", "",
		"comma-separated IP addresses and CIDR prefixes of the proxies whose X-Forwarded-Host and X-Forwarded-Proto are believed (default: none)")
	setting(fs, &c.debugAddr, "debug-addr", "JOBBOARD_DEBUG_ADDR", "",
		"listen address of Go's profiler (/debug/pprof/), such as 127.0.0.1:6060; empty: off. Keep it private")
	setting(fs, &c.readDatabaseURL, "read-database-url", "JOBBOARD_READ_DATABASE_URL", "",
		"PostgreSQL URL of a streaming replica serving the drivers list and detail and job search; the primary serves them while it is unreachable (default: DATABASE_URL)")
	setting(fs, &c.metricsAddr, "metrics-addr", "JOBBOARD_METRICS_ADDR", d.metricsAddr,
		"listen address of the Prometheus metrics (/metrics), apart from the API; empty: off")
	c.admissionFlags(fs)
	c.transportFlags(fs)
}

// Admission control's defaults (docs/deploy.md, Sizing admission control,
// has the measurements). 32 places: a request spends part of its time off
// the database (HTTP, JSON, writing the answer), so 1.5x the pool's 20
// connections keeps the pool busy while at most a dozen requests wait for
// a connection, where database/sql picks at random who gets the next. The
// wait bound is above the one second a refused client is told to wait: a
// request that would be served within it gains nothing from a 503 and a
// retry, and refusing it makes a client that retries at once come back
// and cost a whole request again. The queue only bounds memory: the
// expected wait decides first.
const (
	defaultMaxInFlight    = "32"
	defaultAdmissionQueue = "2048"
	defaultAdmissionWait  = "2s"
	// One account's places: 0 is half of the places (server/admission).
	defaultAccountInFlight = "0"
)

func (c *config) admissionFlags(fs *flag.FlagSet) {
	setting(fs, &c.maxInFlight, "max-in-flight", "JOBBOARD_MAX_IN_FLIGHT", defaultMaxInFlight,
		"API requests (REST and gRPC) worked at once; the next ones wait in line or get 503 UNAVAILABLE with Retry-After; 0: no limit. Health, readiness and metrics are exempt")
	setting(fs, &c.admissionQueue, "admission-queue", "JOBBOARD_ADMISSION_QUEUE", defaultAdmissionQueue,
		"API requests that may wait, in arrival order, for one of the places of --max-in-flight (one account at most half of them); past that, 503 at once")
	setting(fs, &c.admissionWait, "admission-wait", "JOBBOARD_ADMISSION_WAIT", defaultAdmissionWait,
		"the longest an API request waits in line (a Go duration); one that would wait longer, judging by how fast the line moves, gets 503 at once")
	setting(fs, &c.accountFlight, "admission-account-in-flight", "JOBBOARD_ADMISSION_ACCOUNT_IN_FLIGHT", defaultAccountInFlight,
		"places of --max-in-flight one account may hold at once; its further requests wait while other accounts' pass them; 0: half of --max-in-flight")
}

// admission checks the admission control settings.
func (c *config) admission() (admission.Settings, error) {
	n, err := strconv.Atoi(c.maxInFlight)
	if err != nil || n < 0 {
		return admission.Settings{}, usageError{fmt.Sprintf("JOBBOARD_MAX_IN_FLIGHT: %q is not a whole number of requests (0 or more; 0 is no limit)", c.maxInFlight)}
	}
	q, err := strconv.Atoi(c.admissionQueue)
	if err != nil || q < 0 {
		return admission.Settings{}, usageError{fmt.Sprintf("JOBBOARD_ADMISSION_QUEUE: %q is not a whole number of requests (0 or more)", c.admissionQueue)}
	}
	wait, err := time.ParseDuration(c.admissionWait)
	if err != nil || wait <= 0 {
		return admission.Settings{}, usageError{fmt.Sprintf("JOBBOARD_ADMISSION_WAIT: %q is not a positive Go duration such as 1s or 500ms", c.admissionWait)}
	}
	perAccount, err := strconv.Atoi(c.accountFlight)
	if err != nil || perAccount < 0 || (n > 0 && perAccount > n) {
		return admission.Settings{}, usageError{fmt.Sprintf("JOBBOARD_ADMISSION_ACCOUNT_IN_FLIGHT: %q is not a whole number of requests from 0 (half of JOBBOARD_MAX_IN_FLIGHT) to JOBBOARD_MAX_IN_FLIGHT", c.accountFlight)}
	}
	return admission.Settings{MaxInFlight: n, Queue: q, MaxWait: wait, AccountInFlight: perAccount}, nil
}

// serverConfig checks the service settings, naming the first bad one.
func (c *config) serverConfig() (server.Config, error) {
	allow, err := strconv.ParseBool(c.callbackAllowPrivate)
	if err != nil {
		return server.Config{}, usageError{fmt.Sprintf("JOBBOARD_CALLBACK_ALLOW_PRIVATE: %q is not true or false", c.callbackAllowPrivate)}
	}
	schedule, err := parseRetrySchedule(c.callbackSchedule)
	if err != nil {
		return server.Config{}, err
	}
	rescue, err := time.ParseDuration(c.importRescueAfter)
	if err != nil || rescue < 2*time.Second {
		return server.Config{}, usageError{fmt.Sprintf("JOBBOARD_IMPORT_RESCUE_AFTER: %q is not a Go duration of at least 2s", c.importRescueAfter)}
	}
	rateLimit, rateBurst, err := parseRate("JOBBOARD_RATE", c.rateLimit, c.rateBurst)
	if err != nil {
		return server.Config{}, err
	}
	proxies, err := forwarded.Parse(c.trustedProxies)
	if err != nil {
		return server.Config{}, usageError{"JOBBOARD_TRUSTED_PROXIES: " + err.Error()}
	}
	failureLimit, failureBurst, err := parseRate("JOBBOARD_AUTH_FAILURE", c.authFailureLimit, c.authFailureBurst)
	if err != nil {
		return server.Config{}, err
	}
	_, restPort, err := net.SplitHostPort(c.httpAddr)
	if err != nil {
		return server.Config{}, usageError{fmt.Sprintf("JOBBOARD_HTTP_ADDR: %q is not a host:port address such as :8080", c.httpAddr)}
	}
	webhookWorkers, disableAfter, err := c.webhookSettings()
	if err != nil {
		return server.Config{}, err
	}
	admit, err := c.admission()
	if err != nil {
		return server.Config{}, err
	}
	if err := c.checkInternalTokens(); err != nil {
		return server.Config{}, err
	}
	return server.Config{
		WebhookWorkers:          webhookWorkers,
		SendNoDeliveries:        webhookWorkers == 0,
		WebhookDisableAfter:     disableAfter,
		RESTPort:                restPort,
		RescueStuckImportsAfter: rescue,
		InternalToken:           c.internalToken,
		InternalTokenPrevious:   c.internalTokenPrev,
		PublicURL:               c.publicURL,
		AllowPrivateCallbacks:   allow,
		CallbackRetrySchedule:   schedule,
		RenderCallback:          render.JSON,
		RateLimit:               rateLimit,
		RateBurst:               rateBurst,
		TrustedProxies:          proxies,
		AuthFailureLimit:        failureLimit,
		AuthFailureBurst:        failureBurst,
		Admission:               admit,
	}, nil
}

// checkInternalTokens refuses a previous internal token that cannot be
// one: without a current token (a rotation ends by unsetting the previous
// one, never the current), or the same as the current.
func (c *config) checkInternalTokens() error {
	switch {
	case c.internalTokenPrev == "":
		return nil
	case c.internalToken == "":
		return usageError{"JOBBOARD_INTERNAL_TOKEN_PREVIOUS is set without JOBBOARD_INTERNAL_TOKEN: a rotation keeps the old token there beside the new one, never alone"}
	case c.internalTokenPrev == c.internalToken:
		return usageError{"JOBBOARD_INTERNAL_TOKEN_PREVIOUS is the same as JOBBOARD_INTERNAL_TOKEN: set it to the token being rotated out, or unset it"}
	}
	return nil
}

// webhookSettings checks the settings of webhook deliveries.
func (c *config) webhookSettings() (int, time.Duration, error) {
	workers, err := strconv.Atoi(c.webhookWorkers)
	if err != nil || workers < 0 {
		return 0, 0, usageError{fmt.Sprintf("JOBBOARD_WEBHOOK_WORKERS: %q is not a whole number of deliveries (0 or more)", c.webhookWorkers)}
	}
	after, err := time.ParseDuration(c.webhookDisableAfter)
	if err != nil || after <= 0 {
		return 0, 0, usageError{fmt.Sprintf("JOBBOARD_WEBHOOK_DISABLE_AFTER: %q is not a positive Go duration such as 120h", c.webhookDisableAfter)}
	}
	return workers, after, nil
}

// parseRetrySchedule reads JOBBOARD_CALLBACK_RETRY_SCHEDULE; empty is nil,
// the default schedule.
func parseRetrySchedule(text string) ([]time.Duration, error) {
	var schedule []time.Duration
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	for _, part := range strings.Split(text, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil || d <= 0 {
			return nil, usageError{fmt.Sprintf("JOBBOARD_CALLBACK_RETRY_SCHEDULE: %q is not a positive Go duration such as 5s or 2h", part)}
		}
		schedule = append(schedule, d)
	}
	return schedule, nil
}

// requireDatabase is the usage error of a command run without a database.
func (c *config) requireDatabase(command string) error {
	if c.databaseURL == "" {
		return usageError{command + ": DATABASE_URL (or --database-url) is required"}
	}
	// A URL the driver cannot parse would come back in its error, password
	// and all; this error shows neither.
	for _, u := range []struct{ value, name string }{{c.databaseURL, "DATABASE_URL (or --database-url)"},
		{c.databaseDirectURL, "JOBBOARD_DATABASE_DIRECT_URL (or --database-direct-url)"},
		{c.readDatabaseURL, "JOBBOARD_READ_DATABASE_URL (or --read-database-url)"}} {
		if strings.Contains(u.value, "://") {
			if _, err := url.Parse(u.value); err != nil {
				return usageError{command + ": " + u.name + " is not a valid URL such as postgres://user:password@host:5432/db (a password with special characters must be percent-encoded); the value is not shown, as it may hold a password"}
			}
		}
	}
	return nil
}

// databaseOrLocal is requireDatabase for the admin commands, which without
// a URL use the database of the jobboard dev running in dataDir (make run's,
// by default): they find its port in the folder, so nothing needs exporting
// first. serve never does this: in production a missing URL is a mistake.
func (c *config) databaseOrLocal(command, dataDir string) error {
	if c.databaseURL != "" {
		return c.requireDatabase(command)
	}
	url, err := pglocal.RunningURL(clusterDir(dataDir), devDatabase)
	if errors.Is(err, pglocal.ErrNotRunning) {
		return usageError{fmt.Sprintf("%s: no DATABASE_URL and no database running in %s: start make run (jobboard dev), or set DATABASE_URL", command, dataDir)}
	}
	if err != nil {
		return fmt.Errorf("%s: no DATABASE_URL, and the database in %s cannot be found: %w", command, dataDir, err)
	}
	slog.Info("no DATABASE_URL: using the database of the jobboard dev running in "+dataDir, "url", url)
	c.useLocal(url)
	return nil
}

// useLocal points the service at a local database (jobboard dev's), alone:
// the optional URLs would name other databases.
func (c *config) useLocal(url string) {
	c.databaseURL, c.databaseDirectURL, c.readDatabaseURL = url, "", ""
}

// parseRate reads the pair of settings PREFIX_LIMIT (requests a second, 0
// or more; 0 is no limit) and PREFIX_BURST (requests at once, 1 or more).
func parseRate(prefix, limit, burst string) (float64, int, error) {
	perSecond, err := strconv.ParseFloat(limit, 64)
	if err != nil || perSecond < 0 || math.IsInf(perSecond, 0) || math.IsNaN(perSecond) {
		return 0, 0, usageError{fmt.Sprintf("%s_LIMIT: %q is not a number of requests a second (0 or more)", prefix, limit)}
	}
	n, err := strconv.Atoi(burst)
	if err != nil || n < 1 {
		return 0, 0, usageError{fmt.Sprintf("%s_BURST: %q is not a whole number of requests (1 or more)", prefix, burst)}
	}
	return perSecond, n, nil
}
