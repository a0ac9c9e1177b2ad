// Package metrics defines every Prometheus metric the service exposes, in
// one place, so names, labels and buckets are reviewed together and the
// label values that may appear are fixed here rather than spread through
// the handlers.
//
// Each server process gets its own registry (New) instead of the global
// default one: tests build several servers in one process, and the default
// registry would refuse the second set of collectors or mix their counts.
//
// All methods are safe on a nil *Metrics and do nothing, so code paths and
// tests that build services without metrics need no special case.
package metrics

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// namespace prefixes the service's own metrics; the gRPC, Go, process and
// database pool families keep the names their libraries give them, which is
// what existing dashboards expect.
const namespace = "jobboard"

// ImportStatus is how one run of an import ended.
type ImportStatus string

const (
	// ImportComplete: the jobs were written and the import marked complete.
	ImportComplete ImportStatus = "complete"
	// ImportFailed: the run failed (database error, timeout) and rolled
	// back; the queue runs it again.
	ImportFailed ImportStatus = "failed"
	// ImportCancelled: the import can never run (deleted, or its stored
	// payload is unreadable); the queue drops it.
	ImportCancelled ImportStatus = "cancelled"
	// ImportGaveUp: the queue will not run the import again (its last
	// attempt failed, or it can never run), so it was completed with every
	// job failed and its callback queued.
	ImportGaveUp ImportStatus = "gave_up"
)

// CallbackOutcome is the result of one callback delivery attempt.
type CallbackOutcome string

const (
	// CallbackDelivered: the receiver answered 2xx.
	CallbackDelivered CallbackOutcome = "delivered"
	// CallbackFailedRetry: no answer or a non-2xx answer; another attempt
	// follows on the retry schedule.
	CallbackFailedRetry CallbackOutcome = "failed_retry"
	// CallbackGone: the receiver answered 410 Gone; no more attempts.
	CallbackGone CallbackOutcome = "gone_410"
	// CallbackGaveUp: the last scheduled attempt failed too.
	CallbackGaveUp CallbackOutcome = "gave_up"
)

// WebhookOutcome is the result of one webhook delivery job run.
type WebhookOutcome string

const (
	// WebhookDelivered: the endpoint answered 2xx.
	WebhookDelivered WebhookOutcome = "delivered"
	// WebhookFailedRetry: no answer or a non-2xx answer; another attempt
	// follows on the retry schedule.
	WebhookFailedRetry WebhookOutcome = "failed_retry"
	// WebhookGaveUp: the last scheduled attempt failed too.
	WebhookGaveUp WebhookOutcome = "gave_up"
	// WebhookGone: the endpoint answered 410 Gone; it is disabled.
	WebhookGone WebhookOutcome = "gone_410"
	// WebhookFailing: the attempt failed and the endpoint, failing for
	// JOBBOARD_WEBHOOK_DISABLE_AFTER, was disabled.
	WebhookFailing WebhookOutcome = "disabled_failing"
	// WebhookDropped: nothing was sent: the endpoint was deleted, disabled
	// or enabled again since, or the event was cleaned up.
	WebhookDropped WebhookOutcome = "dropped"
)

// Reasons an endpoint is disabled automatically.
const (
	DisabledGone    = "gone"
	DisabledFailing = "failing"
)

// queueStates are the River job states the queue gauge reports: the work
// waiting or under way. Finished jobs (completed, cancelled, discarded) are
// history, not depth.
var queueStates = []string{"available", "scheduled", "running", "retryable"}

// QueueJobs is how many queue jobs of a kind are in a state, and how
// long the oldest of them has been there (see queueOldestHelp).
type QueueJobs struct {
	Kind   string
	State  string
	Count  int64
	Oldest time.Duration
}

// queueOldestHelp says what the oldest job's age is in each state: the
// wait an operator acts on. An available job is due and waits for a
// worker: from when it became due. A running job's attempt has run that
// long: a killed worker's job grows here like a long import until the
// queue rescues it, and the bound of either is the same alert. A scheduled
// or retryable job waits for its time: from when it was enqueued.
const queueOldestHelp = "Age in seconds of the oldest River queue job of a kind in a state, 0 when there is none: " +
	"available, since it became due (the wait for a worker); running, since its attempt started; " +
	"scheduled and retryable, since it was enqueued. Every replica reports the whole queue: aggregate with max."

// QueueDepthFunc reads the queue's depth; it is called at scrape time.
type QueueDepthFunc func(ctx context.Context) ([]QueueJobs, error)

// Metrics is one server process's metrics and the registry exposing them.
type Metrics struct {
	registry         *prometheus.Registry
	httpRequests     *prometheus.CounterVec
	httpDuration     *prometheus.HistogramVec
	httpMu           sync.RWMutex
	httpCache        map[httpKey]httpSeriesOf
	grpc             *grpcprom.ServerMetrics
	importsFinished  *prometheus.CounterVec
	importDuration   *prometheus.HistogramVec
	callbackAttempts *prometheus.CounterVec
	webhookAttempts  *prometheus.CounterVec
	webhookDuration  prometheus.Histogram
	webhooksDisabled *prometheus.CounterVec

	// QueueCacheFor is how long a read of the queue depth is reused (set it
	// before WatchQueue; tests that watch the queue change set 0).
	QueueCacheFor time.Duration
}

// New returns the metrics of one server process, registered on a registry
// of their own together with the Go runtime and process collectors.
func New() *Metrics {
	httpLabels := []string{"route", "method", "code"}
	m := &Metrics{
		QueueCacheFor: 5 * time.Second,
		registry:      prometheus.NewRegistry(),
		httpCache:     map[httpKey]httpSeriesOf{},
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "http_requests_total",
			Help: "HTTP requests served, by route pattern (never the raw path), method and status code.",
		}, httpLabels),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "http_request_duration_seconds",
			Help:    "Time to serve an HTTP request, by route pattern, method and status code.",
			Buckets: prometheus.DefBuckets,
		}, httpLabels),
		grpc: grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram(
			grpcprom.WithHistogramBuckets(prometheus.DefBuckets))),
		importsFinished: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "job_imports_finished_total",
			Help: "Runs of job imports that ended, by status: complete, failed (rolled back; the queue retries), cancelled (dropped) or gave_up (completed with every job failed).",
		}, []string{"status"}),
		importDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "job_import_duration_seconds",
			Help: "Time one run of a job import took, by status.",
			// Imports hold up to 50,000 jobs: from well under a second to minutes.
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600},
		}, []string{"status"}),
		callbackAttempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "callback_delivery_attempts_total",
			Help: "Import completion callback delivery attempts, by outcome: delivered, failed_retry, gone_410 or gave_up.",
		}, []string{"outcome"}),
		webhookAttempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "webhook_deliveries_total",
			Help: "Webhook delivery jobs run, by outcome: delivered, failed_retry, gave_up, gone_410 (endpoint disabled), disabled_failing (endpoint disabled after failing too long) or dropped (nothing sent: endpoint deleted or disabled, event cleaned up).",
		}, []string{"outcome"}),
		webhookDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: namespace, Name: "webhook_delivery_duration_seconds",
			Help: "Time from sending a webhook delivery to its answer (or failure), whatever the outcome.",
			// Receivers answer in milliseconds; the timeout is 15 s.
			Buckets: []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15},
		}),
		webhooksDisabled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "webhook_endpoints_disabled_total",
			Help: "Webhook endpoints the service disabled, by reason: gone (answered 410) or failing (every attempt failed for JOBBOARD_WEBHOOK_DISABLE_AFTER).",
		}, []string{"reason"}),
	}
	m.registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.httpRequests, m.httpDuration, m.grpc, m.importsFinished, m.importDuration, m.callbackAttempts,
		m.webhookAttempts, m.webhookDuration, m.webhooksDisabled,
	)
	// Every label value that can occur starts at zero, so rates and alerts
	// work from the first scrape instead of from the first event.
	for _, s := range []ImportStatus{ImportComplete, ImportFailed, ImportCancelled, ImportGaveUp} {
		m.importsFinished.WithLabelValues(string(s))
		m.importDuration.WithLabelValues(string(s))
	}
	for _, o := range []CallbackOutcome{CallbackDelivered, CallbackFailedRetry, CallbackGone, CallbackGaveUp} {
		m.callbackAttempts.WithLabelValues(string(o))
	}
	for _, o := range []WebhookOutcome{WebhookDelivered, WebhookFailedRetry, WebhookGaveUp, WebhookGone, WebhookFailing, WebhookDropped} {
		m.webhookAttempts.WithLabelValues(string(o))
	}
	for _, r := range []string{DisabledGone, DisabledFailing} {
		m.webhooksDisabled.WithLabelValues(r)
	}
	return m
}

// Handler serves the registry in the Prometheus exposition format. A
// collector that fails (the queue query, say) costs its own samples, not
// the whole scrape.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return promhttp.InstrumentMetricHandler(m.registry, promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError,
		// The endpoint is open: a flood of scrapes gets 503s rather than
		// piling up work.
		MaxRequestsInFlight: 4,
		ErrorLog:            slog.NewLogLogger(slog.Default().Handler(), slog.LevelWarn),
		Registry:            m.registry,
	}))
}

// Registry is where callers register collectors of their own.
func (m *Metrics) Registry() *prometheus.Registry {
	if m == nil {
		return nil
	}
	return m.registry
}

// GRPC is the go-grpc-middleware server metrics, for the interceptor chain;
// nil when m is nil.
func (m *Metrics) GRPC() *grpcprom.ServerMetrics {
	if m == nil {
		return nil
	}
	return m.grpc
}

// httpMethods are the methods labelled as themselves; any other (a client
// may send any token) is "other", so the method label stays bounded.
var httpMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodOptions: true,
}

// ObserveHTTP records one HTTP request. route must come from a fixed set
// (route patterns, fixed paths, "unmatched"), never from the raw path.
func (m *Metrics) ObserveHTTP(route, method string, code int, elapsed time.Duration) {
	if m == nil {
		return
	}
	if !httpMethods[method] {
		method = "other"
	}
	s := m.httpSeries(httpKey{route, method, code})
	s.requests.Inc()
	s.duration.Observe(elapsed.Seconds())
}

// httpKey names one request series by its labels.
type httpKey struct {
	route, method string
	code          int
}

// httpSeriesOf is the counter and histogram of one label set.
type httpSeriesOf struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

// httpSeries finds the series of k, looked up by label values (hashed and
// checked on every call) only the first time. Labels are bounded (route
// patterns, methods, codes), and so is the cache.
func (m *Metrics) httpSeries(k httpKey) httpSeriesOf {
	m.httpMu.RLock()
	s, ok := m.httpCache[k]
	m.httpMu.RUnlock()
	if ok {
		return s
	}
	labels := []string{k.route, k.method, strconv.Itoa(k.code)}
	s = httpSeriesOf{m.httpRequests.WithLabelValues(labels...), m.httpDuration.WithLabelValues(labels...)}
	m.httpMu.Lock()
	m.httpCache[k] = s
	m.httpMu.Unlock()
	return s
}

// ImportFinished records one run of an import.
func (m *Metrics) ImportFinished(status ImportStatus, elapsed time.Duration) {
	if m == nil {
		return
	}
	m.importsFinished.WithLabelValues(string(status)).Inc()
	m.importDuration.WithLabelValues(string(status)).Observe(elapsed.Seconds())
}

// ImportSwept records an import the sweep completed with every job failed
// after the queue gave up on it: counted as gave_up, with no run to time.
func (m *Metrics) ImportSwept() {
	if m == nil {
		return
	}
	m.importsFinished.WithLabelValues(string(ImportGaveUp)).Inc()
}

// CallbackAttempt records one callback delivery attempt.
func (m *Metrics) CallbackAttempt(outcome CallbackOutcome) {
	if m == nil {
		return
	}
	m.callbackAttempts.WithLabelValues(string(outcome)).Inc()
}

// WebhookDelivery records one run of a webhook delivery job; elapsed is
// the time the request took, ignored for dropped deliveries.
func (m *Metrics) WebhookDelivery(outcome WebhookOutcome, elapsed time.Duration) {
	if m == nil {
		return
	}
	m.webhookAttempts.WithLabelValues(string(outcome)).Inc()
	if outcome != WebhookDropped {
		m.webhookDuration.Observe(elapsed.Seconds())
	}
}

// WebhookEndpointDisabled records an endpoint the service disabled.
func (m *Metrics) WebhookEndpointDisabled(reason string) {
	if m == nil {
		return
	}
	m.webhooksDisabled.WithLabelValues(reason).Inc()
}

// WatchDB exposes the connection pool's statistics (go_sql_* with
// db_name="jobboard").
func (m *Metrics) WatchDB(db *sql.DB) error {
	if m == nil {
		return nil
	}
	if err := m.registry.Register(collectors.NewDBStatsCollector(db, namespace)); err != nil {
		return fmt.Errorf("register database pool metrics: %w", err)
	}
	return nil
}

// BuildInfo exposes which build serves: jobboard_build_info, always 1,
// with the commit (buildinfo.Info.Short), the Go version and the schema
// version the build serves as labels. During a rolling upgrade,
// count by (revision) (jobboard_build_info) says how far it has gone.
func (m *Metrics) BuildInfo(revision, goVersion string, schemaVersion int) error {
	if m == nil {
		return nil
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: namespace, Name: "build_info",
		Help: "Always 1; the labels say which build serves: the commit (+modified when built from a checkout with changes), the Go version and the database schema version it serves.",
		ConstLabels: prometheus.Labels{"revision": revision, "go_version": goVersion,
			"schema_version": strconv.Itoa(schemaVersion)}})
	g.Set(1)
	if err := m.registry.Register(g); err != nil {
		return fmt.Errorf("register build metric: %w", err)
	}
	return nil
}

// Readiness exposes the outcome of the readiness checks serve runs every
// second (the gRPC health follows them): jobboard_ready is 1 while the
// server would answer /readyz 200, and jobboard_database_up 1 while its
// primary database (or the pooler in front of it) answers. The returned
// function records one check.
func (m *Metrics) Readiness() (func(ready, databaseUp bool), error) {
	if m == nil {
		return func(bool, bool) {}, nil
	}
	ready := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: namespace, Name: "ready",
		Help: "1 while the server is ready to serve (what GET /readyz and the gRPC health say), 0 while it is not: database unreachable, schema not what this version knows, or draining. Checked every second."})
	dbUp := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: namespace, Name: "database_up",
		Help: "1 while the primary database (through the pooler when there is one) answered the last readiness check, 0 while it did not. Checked every second."})
	for _, c := range []prometheus.Collector{ready, dbUp} {
		if err := m.registry.Register(c); err != nil {
			return nil, fmt.Errorf("register readiness metrics: %w", err)
		}
	}
	return func(r, up bool) {
		ready.Set(oneIf(r))
		dbUp.Set(oneIf(up))
	}, nil
}

func oneIf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// ReadDBStatus is what the service shows of its read database.
type ReadDBStatus struct {
	// Up: reads go to it (not to the primary in its place).
	Up bool
	// Fallbacks counts the reads the primary served in its place.
	Fallbacks uint64
	// AuthLookups counts the API key and account lookups it answered
	// because the primary could not be reached.
	AuthLookups uint64
}

// WatchReadDB exposes the read database (JOBBOARD_READ_DATABASE_URL):
// jobboard_read_database_up is 0 while reads go to the primary because it
// failed, jobboard_read_database_fallbacks_total counts the reads the
// primary served in its place, jobboard_read_database_auth_lookups_total
// the authentication lookups it served in the primary's place, and
// go_sql_* with db_name="jobboard_read" are its pool's statistics. status
// is read at scrape time.
func (m *Metrics) WatchReadDB(db *sql.DB, status func() ReadDBStatus) error {
	if m == nil {
		return nil
	}
	up := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: namespace, Name: "read_database_up",
		Help: "1 while the drivers list and detail and job search are read from the read database, 0 while it is unreachable and the primary serves them.",
	}, func() float64 {
		if status().Up {
			return 1
		}
		return 0
	})
	fallbacks := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Namespace: namespace, Name: "read_database_fallbacks_total",
		Help: "Reads of the drivers list and detail and job search the primary served because the read database could not.",
	}, func() float64 { return float64(status().Fallbacks) })
	authLookups := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Namespace: namespace, Name: "read_database_auth_lookups_total",
		Help: "API key and account lookups the read database answered because the primary could not be reached.",
	}, func() float64 { return float64(status().AuthLookups) })
	for _, c := range []prometheus.Collector{up, fallbacks, authLookups, collectors.NewDBStatsCollector(db, namespace+"_read")} {
		if err := m.registry.Register(c); err != nil {
			return fmt.Errorf("register read database metrics: %w", err)
		}
	}
	return nil
}

// Replication is where the read database stands as a standby.
type Replication struct {
	// Standby: it is in recovery, replaying a primary's WAL. False after a
	// failover promoted it, or when the URL names a primary.
	Standby bool
	// LagSeconds is how far its replay is behind the primary: the age of
	// the last transaction it replayed while the primary has WAL it has
	// not replayed, 0 when it has replayed all the primary wrote.
	LagSeconds float64
	// LagBytes is the primary's WAL it has not replayed yet (received or
	// not).
	LagBytes float64
}

// replicationCacheFor is how long a read of the read database's standing
// is reused by scrapes.
const replicationCacheFor = 5 * time.Second

// WatchReplication exposes where the read database stands, read by read
// at scrape time: jobboard_read_database_standby, and its replay lag in
// seconds and bytes. While it (or the primary, whose WAL position the lag
// is measured against) cannot be read they are left out:
// jobboard_read_database_up and jobboard_database_up say which is down.
func (m *Metrics) WatchReplication(read func(ctx context.Context) (Replication, error)) error {
	if m == nil {
		return nil
	}
	name := func(n string) string { return prometheus.BuildFQName(namespace, "read_database", n) }
	c := &replicationCollector{read: &scrapeRead[Replication]{what: "read database replication", read: read, cacheFor: replicationCacheFor},
		standby: prometheus.NewDesc(name("standby"),
			"1 while the read database is a standby in recovery (replaying the primary's WAL), 0 when it is not: "+
				"promoted by a failover, or a primary named by JOBBOARD_READ_DATABASE_URL. Absent while it cannot be read.", nil, nil),
		lagSeconds: prometheus.NewDesc(name("replay_lag_seconds"),
			"How far the read database's replay is behind the primary: the age of the last transaction it replayed while the primary has WAL it has not replayed, 0 when it has replayed all of it. Absent while either cannot be read.", nil, nil),
		lagBytes: prometheus.NewDesc(name("replay_lag_bytes"),
			"The primary's WAL the read database has not replayed yet, received or not.", nil, nil)}
	if err := m.registry.Register(c); err != nil {
		return fmt.Errorf("register replication metrics: %w", err)
	}
	return nil
}

type replicationCollector struct {
	read                          *scrapeRead[Replication]
	standby, lagSeconds, lagBytes *prometheus.Desc
}

func (c *replicationCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.standby
	ch <- c.lagSeconds
	ch <- c.lagBytes
}

func (c *replicationCollector) Collect(ch chan<- prometheus.Metric) {
	r, _, err := c.read.get()
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.standby, prometheus.GaugeValue, oneIf(r.Standby))
	ch <- prometheus.MustNewConstMetric(c.lagSeconds, prometheus.GaugeValue, r.LagSeconds)
	ch <- prometheus.MustNewConstMetric(c.lagBytes, prometheus.GaugeValue, r.LagBytes)
}

// ReplicationSlot is one of the primary's replication slots.
type ReplicationSlot struct {
	Name          string
	Active        bool
	RetainedBytes float64
}

// Primary is what the database the service writes to says of itself.
type Primary struct {
	// InRecovery: it is a standby, so every write fails (read-only
	// transactions). The pooler names a standby, or an old primary came
	// back as one after a failover.
	InRecovery bool
	// Slots are its replication slots; none while it is in recovery.
	Slots []ReplicationSlot
}

// WatchPrimary exposes the database the service writes to, read by read
// at scrape time (at most every replicationCacheFor):
// jobboard_database_primary, and jobboard_replication_slot_active and
// jobboard_replication_slot_retained_wal_bytes by slot. While it cannot
// be read they are left out (jobboard_database_up says so).
func (m *Metrics) WatchPrimary(read func(ctx context.Context) (Primary, error)) error {
	if m == nil {
		return nil
	}
	name := func(n string) string { return prometheus.BuildFQName(namespace, "replication_slot", n) }
	c := &primaryCollector{read: &scrapeRead[Primary]{what: "primary database", read: read, cacheFor: replicationCacheFor},
		primary: prometheus.NewDesc(prometheus.BuildFQName(namespace, "database", "primary"),
			"1 while the database the service writes to (through the pooler when there is one) is a primary, "+
				"0 while it is a standby in recovery and every write fails. Absent while it cannot be read.", nil, nil),
		active: prometheus.NewDesc(name("active"),
			"1 while a consumer (a standby) is connected to the primary's replication slot, 0 while none is. "+
				"Every replica reports the same primary: aggregate with max.", []string{"slot"}, nil),
		retained: prometheus.NewDesc(name("retained_wal_bytes"),
			"WAL the primary keeps for the replication slot, which its consumer has not confirmed: "+
				"it grows without bound while the consumer is gone, unless max_slot_wal_keep_size is set.", []string{"slot"}, nil)}
	if err := m.registry.Register(c); err != nil {
		return fmt.Errorf("register primary database metrics: %w", err)
	}
	return nil
}

type primaryCollector struct {
	read                      *scrapeRead[Primary]
	primary, active, retained *prometheus.Desc
}

func (c *primaryCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.primary
	ch <- c.active
	ch <- c.retained
}

func (c *primaryCollector) Collect(ch chan<- prometheus.Metric) {
	p, _, err := c.read.get()
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.primary, prometheus.GaugeValue, oneIf(!p.InRecovery))
	for _, s := range p.Slots {
		ch <- prometheus.MustNewConstMetric(c.active, prometheus.GaugeValue, oneIf(s.Active), s.Name)
		ch <- prometheus.MustNewConstMetric(c.retained, prometheus.GaugeValue, s.RetainedBytes, s.Name)
	}
}

// WatchKeys exposes the API key watch: jobboard_key_watch_listening is 1
// while listening reports that the server hears every key change (and
// so remembers keys in use), 0 while it does not and every request looks
// its key up in the database.
func (m *Metrics) WatchKeys(listening func() bool) error {
	if m == nil {
		return nil
	}
	g := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: namespace, Name: "key_watch_listening",
		Help: "1 while the server hears every API key change as it commits and remembers the keys in use, " +
			"0 while the watch is lost and every request looks its key up in the database (slower, never wrong)."},
		func() float64 { return oneIf(listening()) })
	if err := m.registry.Register(g); err != nil {
		return fmt.Errorf("register key watch metric: %w", err)
	}
	return nil
}

// DatabaseRoute exposes whether the hottest reads run as named prepared
// statements: jobboard_database_prepared_statements is 1 when the pool's
// connection reaches PostgreSQL directly, 0 when a pooler or proxy (or a
// Unix socket, which cannot be checked) is in between.
func (m *Metrics) DatabaseRoute(prepared bool) error {
	if m == nil {
		return nil
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: namespace, Name: "database_prepared_statements",
		Help: "1 when the job retrieve and API key lookup run as prepared statements (the connection reaches PostgreSQL directly), 0 when they are sent unprepared (PgBouncer or a proxy in between, or no way to tell).",
	})
	if prepared {
		g.Set(1)
	}
	if err := m.registry.Register(g); err != nil {
		return fmt.Errorf("register database route metric: %w", err)
	}
	return nil
}

// WatchQueue exposes the queue's depth, read by depth at scrape time. Every
// kind in kinds is reported in every state of queueStates, zero when it has
// no jobs there, so the series exist before the first job does.
func (m *Metrics) WatchQueue(depth QueueDepthFunc, kinds ...string) error {
	if m == nil {
		return nil
	}
	c := &queueCollector{depth: &scrapeRead[[]QueueJobs]{what: "queue depth", read: depth, cacheFor: m.QueueCacheFor}, kinds: kinds,
		desc: prometheus.NewDesc(prometheus.BuildFQName(namespace, "", "queue_jobs"),
			"River queue jobs waiting or running, by kind and state (available, scheduled, running, retryable). "+
				"Every replica reports the whole queue: aggregate with max, not sum. "+
				"While the database cannot be read, the last values read stay (see jobboard_queue_read_timestamp_seconds).",
			[]string{"kind", "state"}, nil),
		oldest: prometheus.NewDesc(prometheus.BuildFQName(namespace, "", "queue_oldest_job_age_seconds"),
			queueOldestHelp, []string{"kind", "state"}, nil),
		readAtDesc: prometheus.NewDesc(prometheus.BuildFQName(namespace, "", "queue_read_timestamp_seconds"),
			"Unix time of the last read of the queue's depth that succeeded: it stops advancing while the database cannot be read.",
			nil, nil)}
	if err := m.registry.Register(c); err != nil {
		return fmt.Errorf("register queue metrics: %w", err)
	}
	return nil
}

// queueCollector reads the queue when scraped (scrapeRead): the queue is
// shared by every replica, and only the database knows its depth. The last
// depth read stays through a database outage, as a graph or an alert
// expects, and the time of that read says how old it is.
type queueCollector struct {
	depth                    *scrapeRead[[]QueueJobs]
	kinds                    []string
	desc, oldest, readAtDesc *prometheus.Desc
}

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.desc
	ch <- c.oldest
	ch <- c.readAtDesc
}

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	rows, readAt, err := c.depth.get()
	if readAt.IsZero() {
		// Never read: no value to stand for the queue's.
		ch <- prometheus.NewInvalidMetric(c.desc, fmt.Errorf("read queue depth: %w", err))
		return
	}
	ch <- prometheus.MustNewConstMetric(c.readAtDesc, prometheus.GaugeValue, float64(readAt.UnixNano())/1e9)
	type series struct {
		count  int64
		oldest time.Duration
	}
	byKey := map[[2]string]series{}
	for _, k := range c.kinds {
		for _, s := range queueStates {
			byKey[[2]string{k, s}] = series{}
		}
	}
	for _, r := range rows {
		key := [2]string{r.Kind, r.State}
		s := byKey[key]
		s.count += r.Count
		s.oldest = max(s.oldest, r.Oldest)
		byKey[key] = s
	}
	for key, s := range byKey {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(s.count), key[0], key[1])
		ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, s.oldest.Seconds(), key[0], key[1])
	}
}
