package topology

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"time"
)

const exportersDir = "exporters"

// The exporters Prometheus scrapes besides the replicas and HAProxy:
// Debian's prometheus-postgres-exporter, one for each cluster. PgBouncer
// has none: Debian's prometheus-pgbouncer-exporter (1.7) stops at its start
// against Debian's PgBouncer (1.18), reading a column of SHOW STATS that
// PgBouncer renamed in 1.8 (KeyError: 'total_requests'), and the Go one is
// not on the module proxy here. The replicas' own gauges watch it from
// their side: jobboard_database_up, go_sql_* (waits for a connection).
const postgresExporterBase = 19187 // + 0 for the first cluster, + 1 for the second

// exporter is one exporter process: its name (its pid and log files), its
// port, its command and environment.
type exporter struct {
	name string
	port int
	argv []string
	env  []string
}

func (t *Topology) exporters() []exporter {
	var ex []exporter
	for i, c := range []cluster{firstCluster, secondCluster} {
		port := postgresExporterBase + i
		ex = append(ex, exporter{name: fmt.Sprintf("postgres-exporter-%d", c.port()), port: port,
			argv: []string{"prometheus-postgres-exporter", "--web.listen-address=" + addr(port)},
			env:  []string{"DATA_SOURCE_NAME=" + url(c.port(), "postgres")}})
	}
	return ex
}

// StartExporters starts every exporter under its supervisor, each with its
// log and pid file in the topology's folder.
func (t *Topology) StartExporters() error {
	dir := t.path(exportersDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, e := range t.exporters() {
		if err := startSupervised(t.supervisedExporter(e)); err != nil {
			return fmt.Errorf("%s: %w", e.name, err)
		}
		if err := waitListening(e.port, 30*time.Second); err != nil {
			return fmt.Errorf("%s: %w (see %s)", e.name, err, t.path(exportersDir, e.name+".log"))
		}
	}
	return nil
}

// supervisedExporter is e under its supervisor (supervise.go).
func (t *Topology) supervisedExporter(e exporter) supervised {
	return supervised{name: e.name, dir: t.path(exportersDir), log: t.path(exportersDir, e.name+".log"), argv: e.argv, env: e.env}
}

// StopExporters stops every exporter.
func (t *Topology) StopExporters() error {
	var first error
	for _, e := range t.exporters() {
		if err := stopSupervised(t.supervisedExporter(e), syscall.SIGTERM); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// exporterTargets are the exporters' addresses for Prometheus.
func (t *Topology) exporterTargets() []string {
	var targets []string
	for _, e := range t.exporters() {
		targets = append(targets, addr(e.port))
	}
	return targets
}

// Target is one of Prometheus' scrape targets and its health.
type Target struct {
	Labels    map[string]string `json:"labels"`
	Health    string            `json:"health"` // up, down or unknown
	LastError string            `json:"lastError"`
}

// Targets lists the topology's Prometheus' active scrape targets.
func Targets(ctx context.Context) ([]Target, error) {
	var data struct {
		ActiveTargets []Target `json:"activeTargets"`
	}
	err := prometheusGet(ctx, "/api/v1/targets?state=active", &data)
	return data.ActiveTargets, err
}
