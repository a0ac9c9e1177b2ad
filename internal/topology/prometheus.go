package topology

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	rules "github.com/truckjobs/jobboard/deploy/prometheus"
)

const prometheusDir = "prometheus"

// PrometheusPort is the topology's Prometheus: its UI and HTTP API.
const PrometheusPort = 19390

// PrometheusURL is the topology's Prometheus.
func PrometheusURL() string { return fmt.Sprintf("http://%s:%d", Host, PrometheusPort) }

// ScrapeEvery is how often the topology's Prometheus scrapes and evaluates
// the rules: often, so the scenarios see an alert soon after its for
// duration; a production Prometheus scrapes every 15 s or so.
const ScrapeEvery = 2 * time.Second

// prometheusConfig scrapes every replica's metrics listener (job
// jobboard, as deploy/prometheus/alerts.yml expects), HAProxy's built-in
// exporter, and the PostgreSQL exporters, and loads the service's alert
// rules.
func (t *Topology) prometheusConfig() string {
	var replicas []string
	for i := 1; i <= Replicas; i++ {
		replicas = append(replicas, fmt.Sprintf("%q", addr(metricsBase+i)))
	}
	quoted := func(targets []string) string {
		var q []string
		for _, tg := range targets {
			q = append(q, fmt.Sprintf("%q", tg))
		}
		return strings.Join(q, ", ")
	}
	postgres := t.exporterTargets()
	return fmt.Sprintf(`# Prometheus for the topology (internal/topology); docs/operations.md.
global:
  scrape_interval: %[1]s
  scrape_timeout: %[1]s
  evaluation_interval: %[1]s
rule_files:
  - alerts.yml
scrape_configs:
  - job_name: jobboard
    static_configs:
      - targets: [%[2]s]
  - job_name: haproxy
    static_configs:
      - targets: [%[3]q]
  - job_name: postgres
    static_configs:
      - targets: [%[4]s]
`, ScrapeEvery, strings.Join(replicas, ", "), addr(StatsPort), quoted(postgres))
}

// StartPrometheus writes the configuration and the alert rules, checks
// them, and starts Debian's prometheus under its supervisor.
func (t *Topology) StartPrometheus() error {
	dir := t.path(prometheusDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	config := t.path(prometheusDir, "prometheus.yml")
	if err := os.WriteFile(config, []byte(t.prometheusConfig()), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(t.path(prometheusDir, "alerts.yml"), rules.Alerts, 0o644); err != nil {
		return err
	}
	if err := run(exec.Command("promtool", "check", "config", config)); err != nil {
		return err
	}
	if err := startSupervised(t.prometheus()); err != nil {
		return err
	}
	if err := waitListening(PrometheusPort, 30*time.Second); err != nil {
		return fmt.Errorf("prometheus: %w (see %s)", err, t.path(prometheusDir, "prometheus.log"))
	}
	return nil
}

// StopPrometheus stops Prometheus (SIGTERM: it writes its data and exits)
// and its supervisor.
func (t *Topology) StopPrometheus() error {
	return stopSupervised(t.prometheus(), syscall.SIGTERM)
}

// prometheus is Prometheus under its supervisor (supervise.go), with its
// data and log in the topology's folder. A restarted Prometheus keeps its
// data; its alerts start again from pending.
func (t *Topology) prometheus() supervised {
	dir := t.path(prometheusDir)
	return supervised{name: "prometheus", dir: dir, log: t.path(prometheusDir, "prometheus.log"),
		argv: []string{"prometheus", "--config.file=" + t.path(prometheusDir, "prometheus.yml"), "--storage.tsdb.path=" + t.path(prometheusDir, "data"),
			"--web.listen-address=" + addr(PrometheusPort), "--storage.tsdb.retention.time=1d"}}
}

// Alert is one alert as Prometheus' API lists it.
type Alert struct {
	Labels   map[string]string `json:"labels"`
	State    string            `json:"state"` // pending or firing
	ActiveAt time.Time         `json:"activeAt"`
}

// Alerts lists the alerts the topology's Prometheus has pending or firing.
func Alerts(ctx context.Context) ([]Alert, error) {
	var data struct {
		Alerts []Alert `json:"alerts"`
	}
	err := prometheusGet(ctx, "/api/v1/alerts", &data)
	return data.Alerts, err
}

// prometheusGet asks the topology's Prometheus' HTTP API for path and
// decodes the data of a successful answer into data.
func prometheusGet(ctx context.Context, path string, data any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, PrometheusURL()+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer := struct {
		Status string `json:"status"`
		Data   any    `json:"data"`
	}{Data: data}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		return fmt.Errorf("prometheus %s: %w", path, err)
	}
	if answer.Status != "success" {
		return fmt.Errorf("prometheus %s: status %q", path, answer.Status)
	}
	return nil
}
