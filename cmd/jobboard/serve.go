package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"time"

	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"

	"github.com/truckjobs/jobboard/gateway"
	"github.com/truckjobs/jobboard/gateway/apidocs"
	"github.com/truckjobs/jobboard/internal/buildinfo"
	"github.com/truckjobs/jobboard/internal/gcheap"
	"github.com/truckjobs/jobboard/internal/metrics"
	"github.com/truckjobs/jobboard/internal/resetguard"
	"github.com/truckjobs/jobboard/internal/tracing"
	"github.com/truckjobs/jobboard/server"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/store"
)

// shutdownGrace bounds how long in-flight requests may take after SIGTERM.
const shutdownGrace = 30 * time.Second

func serveCommand(ctx context.Context, args []string) error {
	var cfg config
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	cfg.databaseFlag(fs)
	cfg.serveFlags(fs, serveDefault)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := cfg.requireDatabase("serve"); err != nil {
		return err
	}
	if _, err := cfg.serverConfig(); err != nil {
		return err
	}
	if _, err := cfg.transport(); err != nil {
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
	return serve(ctx, cfg, st, nil)
}

func openAndMigrate(ctx context.Context, cfg config) (*store.Store, error) {
	st, err := store.Open(ctx, cfg.databaseURL, cfg.databaseOptions()...)
	if err != nil {
		return nil, err
	}
	applied, err := st.Migrate(ctx)
	if err != nil {
		st.Close()
		return nil, err
	}
	for _, name := range applied {
		slog.Info("migration applied", "name", name)
	}
	if err := warnIfSchemaAhead(ctx, st); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// warnIfSchemaAhead says, at start, that a newer build has migrated the
// database past what this one knows. It serves anyway (checkReady): the
// migrations only add, and an upgrade migrates first, then replaces the
// replicas, so an older replica answers meanwhile; the warning says to
// replace it.
func warnIfSchemaAhead(ctx context.Context, st *store.Store) error {
	v, err := st.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	if v > store.LatestVersion() {
		slog.WarnContext(ctx, "database schema is ahead of this build: serving, as migrations only add; replace this replica with the build that migrated it",
			"database_version", v, "build_version", store.LatestVersion())
	}
	return nil
}

// tuneCollector sets the collector's pace (internal/gcheap), unless GOGC
// is set, which rules instead; it returns what the serving line says of it.
func tuneCollector() string {
	if gcheap.Tune(os.Getenv("GOGC")) {
		return fmt.Sprintf("heap floor %d MiB", gcheap.Floor>>20)
	}
	return "GOGC from the environment"
}

// serve runs the REST and gRPC servers until ctx ends, then drains them.
// ready, when set, is called once both listeners are open.
func serve(ctx context.Context, cfg config, st *store.Store, ready func()) error {
	collector := tuneCollector()
	scfg, err := cfg.serverConfig()
	if err != nil {
		return err
	}
	// One registry per serving process, shared by the HTTP, gRPC, queue
	// and database metrics and exposed at /metrics on a listener of its own.
	scfg.Metrics = metrics.New()
	tr, err := cfg.transport()
	if err != nil {
		return err
	}
	grpcOpts, err := tr.grpcOptions(scfg.Metrics)
	if err != nil {
		return err
	}
	if err := tr.watch(scfg.Metrics); err != nil {
		return err
	}
	svcs, err := server.NewServices(st, scfg)
	if err != nil {
		return err
	}
	logDatabaseRoute(st.Route())
	api, err := gateway.New(ctx, gateway.Config{Jobs: svcs.Jobs, Drivers: svcs.Drivers, Imports: svcs.Imports, Webhooks: svcs.Webhooks, Events: svcs.Events, Boundary: call.Boundary,
		Authenticate: svcs.Auth.AuthenticateKey, TrustedProxies: scfg.TrustedProxies, Admit: svcs.Admit, Resume: svcs.Resume})
	if err != nil {
		return err
	}
	// The key watch ends with serve, whatever ends it: the signal, or a
	// listener or server that failed.
	stopKeyWatch, err := watchKeys(ctx, svcs)
	if err != nil {
		return err
	}
	defer stopKeyWatch()
	// The count tables' rows are folded off the intake's requests; the
	// loop outlives the drain, so what the drain wrote is folded too.
	defer st.StartCountFolding(ctx)()
	srv := servers{svcs: svcs, shuttingDown: new(atomicBool), probes: new(readyProbes)}
	srv.http, srv.metrics = httpServers(st, api, scfg.Metrics, srv.shuttingDown, srv.probes)
	srv.http.TLSConfig = tr.restTLS()
	if srv.http.TLSConfig != nil {
		if err := resetguard.ServeHTTP2(srv.http, maxStreamsPerConnection, resetguard.Settings{
			MaxResetsPerSecond: maxStreamsPerConnection, Closed: rapidResetClosed("REST")}); err != nil {
			return err
		}
	}
	lns, err := listen(cfg)
	if err != nil {
		return err
	}
	if cfg.debugAddr != "" {
		if err := serveDebug(ctx, cfg.debugAddr); err != nil {
			lns.close()
			return err
		}
	}
	srv.grpc = svcs.NewGRPCServer(append(tracing.GRPCServerOptions(), grpcOpts...)...)
	build := buildinfo.Read()
	stopFollowing, err := followHealth(ctx, svcs, st, scfg.Metrics, srv.shuttingDown, build)
	if err != nil {
		lns.close()
		return err
	}
	defer stopFollowing()
	slog.Info("serving", append(lns.logAttrs(), "tls", tr.tls(), "client_certificates", tr.clientCAs != nil,
		"revision", build.Short(), "schema_version", store.LatestVersion(), "garbage_collection", collector)...)
	if ready != nil {
		ready()
	}

	// The queue gets a context the signal does not cancel: cancelling it
	// would cancel the running import instead of letting it finish.
	if err := svcs.Queue.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("start job queue: %w", err)
	}
	return srv.run(ctx, lns)
}

// watchKeys starts the services' watch of API key changes and returns
// what stops it and waits for its end.
func watchKeys(ctx context.Context, svcs *server.Services) (stop func(), err error) {
	watchCtx, cancel := context.WithCancel(ctx)
	wait, err := svcs.Auth.WatchKeys(watchCtx)
	if err != nil {
		cancel()
		return nil, err
	}
	return func() { cancel(); wait() }, nil
}

// logDatabaseRoute says once whether the hottest reads are prepared, and
// why: the addresses compared, never the URL.
func logDatabaseRoute(r store.Route) {
	mode := "unprepared"
	if r.Direct {
		mode = "prepared"
	}
	slog.Info("database statements", "mode", mode, "reason", r.Reason)
}

// servers are serve's API, metrics and gRPC servers and the services
// behind them.
type servers struct {
	svcs          *server.Services
	http, metrics *http.Server
	grpc          *grpc.Server
	// shuttingDown turns readiness off as the drain starts.
	shuttingDown *atomicBool
	// probes tells the drain when the load balancer has seen it.
	probes *readyProbes
}

// run serves each server on its listener until ctx ends or one of them
// fails, then drains them all.
func (s servers) run(ctx context.Context, lns listeners) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return serveHTTP("http", s.http, lns.http) })
	if lns.metrics != nil {
		g.Go(func() error { return serveHTTP("metrics", s.metrics, lns.metrics) })
	}
	g.Go(func() error { return s.grpc.Serve(lns.grpc) })
	g.Go(func() error {
		<-gctx.Done()
		return s.drain(ctx)
	})
	return g.Wait()
}

// drain lets in-flight requests and the running import finish within
// shutdownGrace, then stops what is left.
func (s servers) drain(ctx context.Context) error {
	slog.Info("shutting down")
	s.shuttingDown.set()
	s.svcs.Health.Shutdown()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	// Requests still come while the balancer has not seen the replica not
	// ready; they are served as usual until it has.
	s.probes.waitSeenNotReady(sctx)
	err := s.http.Shutdown(sctx)
	// Metrics are read until the API has drained, then no more.
	if merr := s.metrics.Shutdown(sctx); err == nil {
		err = merr
	}
	// The running import step finishes (its transaction commits) or,
	// past the grace period, is cancelled and rolls back to run again.
	if qerr := s.svcs.Queue.Stop(sctx); qerr != nil {
		slog.Warn("job queue stopped before its imports finished; they roll back and run again", "error", qerr)
		_ = s.svcs.Queue.StopAndCancel(context.Background())
	}
	stopped := make(chan struct{})
	go func() { s.grpc.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-sctx.Done():
		s.grpc.Stop()
	}
	return err
}

// httpServers are the API's server, with health, readiness and the API
// reference beside the API, and the metrics server.
func httpServers(st *store.Store, api http.Handler, m *metrics.Metrics, shuttingDown *atomicBool, probes *readyProbes) (apiSrv, metricsSrv *http.Server) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		err := checkReady(r.Context(), st, shuttingDown)
		probes.asked(err == nil)
		if err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	apidocs.Routes(mux)
	mux.Handle("/", api)
	// Bounded reads and writes, so a client trickling a body or not reading
	// the answer cannot hold a connection and its buffers forever.
	// Unclean paths are refused before the mux, which would redirect them.
	apiSrv = &http.Server{Handler: tracing.HTTPHandler(gateway.AccessLog(gateway.RefuseUncleanPaths(mux), m.ObserveHTTP)), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		WriteTimeout: 2 * time.Minute, IdleTimeout: 2 * time.Minute}
	// /metrics is apart from the API: only those who can reach its address
	// (the monitoring) read it. On the API port it is an unknown path.
	metricsMux := http.NewServeMux()
	metricsMux.Handle("GET /metrics", m.Handler())
	metricsSrv = &http.Server{Handler: metricsMux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute}
	return apiSrv, metricsSrv
}

// serveHTTP serves srv on ln until it is shut down, over TLS when srv
// has a TLS configuration.
func serveHTTP(name string, srv *http.Server, ln net.Listener) error {
	serve := srv.Serve
	if srv.TLSConfig != nil {
		serve = func(ln net.Listener) error { return srv.ServeTLS(ln, "", "") }
	}
	if err := serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("%s server: %w", name, err)
	}
	return nil
}

// listeners are serve's open listeners; metrics is nil when it is off.
type listeners struct{ http, grpc, metrics net.Listener }

// listen opens the REST, gRPC and metrics listeners, or none of them.
func listen(cfg config) (listeners, error) {
	var lns listeners
	for _, l := range []struct {
		ln   *net.Listener
		addr string
	}{{&lns.http, cfg.httpAddr}, {&lns.grpc, cfg.grpcAddr}, {&lns.metrics, cfg.metricsAddr}} {
		if l.addr == "" && l.ln == &lns.metrics {
			continue
		}
		ln, err := net.Listen("tcp", l.addr)
		if err != nil {
			lns.close()
			return listeners{}, fmt.Errorf("listen %s: %w", l.addr, err)
		}
		*l.ln = ln
	}
	return lns, nil
}

func (l listeners) close() {
	for _, ln := range []net.Listener{l.http, l.grpc, l.metrics} {
		if ln != nil {
			ln.Close()
		}
	}
}

// logAttrs are the listeners' addresses for the log line saying where the
// service serves.
func (l listeners) logAttrs() []any {
	attrs := []any{"http", l.http.Addr().String(), "grpc", l.grpc.Addr().String()}
	if l.metrics != nil {
		attrs = append(attrs, "metrics", l.metrics.Addr().String())
	}
	return attrs
}

// errDatabaseUnreachable is checkReady's answer when the primary (or the
// pooler in front of it) did not answer.
var errDatabaseUnreachable = errors.New("database unreachable")

// checkReady: not shutting down, database reachable, schema current. A
// schema ahead of this build (a newer version migrated it first) is ready:
// migrations add, so the older build serves until it is replaced.
func checkReady(ctx context.Context, st *store.Store, shuttingDown *atomicBool) error {
	if shuttingDown.get() {
		return errors.New("shutting down")
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	v, err := st.SchemaVersion(ctx)
	if err != nil {
		return errDatabaseUnreachable
	}
	if v < store.LatestVersion() {
		return fmt.Errorf("database schema at version %d, want %d", v, store.LatestVersion())
	}
	return nil
}

// serveDebug serves Go's profiler on its own listener, apart from the API:
// profiles show internals and cost CPU, so only operators reach them. The
// command line is left out: it may hold --database-url.
func serveDebug(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	go func() { _ = srv.Serve(ln) }()
	slog.Info("profiler", "addr", ln.Addr().String())
	return nil
}
