package topology

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"
)

// Up builds the topology from nothing and starts it: the previous run's
// folder is removed first (Up refuses while any part of it still runs),
// so each Up starts from an empty database. It returns once every part
// answers and HAProxy counts every replica healthy.
func (t *Topology) Up(ctx context.Context) error {
	if running := t.running(); len(running) > 0 {
		return fmt.Errorf("the topology in %s is running already (%v): make topology-down first", t.Dir, running)
	}
	// Supervisors left by a run that ended without Down (its process
	// killed) would start their parts again into the new folder.
	if err := endSupervisors(t.Dir); err != nil {
		return err
	}
	if err := os.RemoveAll(t.Dir); err != nil {
		return err
	}
	if err := os.MkdirAll(t.Dir, 0o755); err != nil {
		return err
	}
	steps := []struct {
		what string
		do   func() error
	}{
		{"PostgreSQL primary on " + addr(PrimaryPort), func() error { return t.initPrimary(ctx) }},
		{"pgBackRest's stanza " + stanza + " (WAL archived from the primary)", func() error { return t.createStanza(ctx) }},
		{"hot standby on " + addr(StandbyPort) + " (pg_basebackup -R)", func() error {
			return t.makeStandby(ctx, firstCluster, secondCluster)
		}},
		{"PgBouncer on " + addr(PgBouncerPort) + " (transaction pooling)", func() error {
			if err := t.writePgBouncerConfig(PrimaryPort); err != nil {
				return err
			}
			return t.StartPgBouncer()
		}},
		{"Jaeger on " + addr(JaegerQueryPort) + " (traces over OTLP on " + addr(JaegerOTLPPort) + ")", t.StartJaeger},
		{"an internal token in " + t.path(internalTokenFile), func() error {
			_, err := t.writeNewToken(internalTokenFile)
			return err
		}},
		{fmt.Sprintf("%d replicas of %s (podman)", Replicas, t.Image), func() error {
			if err := t.setReplicaImage(t.Image); err != nil {
				return err
			}
			return t.startReplicas()
		}},
		{"HAProxy on " + addr(RESTPort) + " (REST) and " + addr(GRPCPort) + " (gRPC)", t.StartHAProxy},
		{"the PostgreSQL exporters", t.StartExporters},
		{"Prometheus on " + addr(PrometheusPort) + " (the replicas, HAProxy, the exporters, deploy/prometheus/alerts.yml)", t.StartPrometheus},
		{"every replica healthy in HAProxy", func() error { return t.WaitHealthy(ctx, 2*time.Minute) }},
		{"logrotate's configuration in " + t.LogrotateConfig(), t.writeLogrotateConfig},
	}
	for _, s := range steps {
		start := time.Now()
		if err := s.do(); err != nil {
			return fmt.Errorf("%s: %w", s.what, err)
		}
		t.Log("up: %s (%.1f s)", s.what, time.Since(start).Seconds())
	}
	return nil
}

// startReplicas starts the replicas together: they migrate at start, one
// at a time under the migrations' advisory lock, and wait until each
// answers /readyz.
func (t *Topology) startReplicas() error {
	for i := 1; i <= Replicas; i++ {
		if err := t.StartReplica(i); err != nil {
			return err
		}
	}
	for i := 1; i <= Replicas; i++ {
		if err := t.WaitReplicaReady(i, 2*time.Minute); err != nil {
			return err
		}
	}
	return nil
}

// WaitReplicaReady waits until replica i answers /readyz; a replica that
// has exited fails at once, with the end of its log.
func (t *Topology) WaitReplicaReady(i int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		err := WaitReady(ReplicaRESTURL(i), time.Second)
		if err == nil {
			return nil
		}
		if running, _ := t.replicaRunning(i); !running || time.Now().After(deadline) {
			return fmt.Errorf("%s: %w\n%s", ReplicaName(i), err, tailString(t.ReplicaLogs(i), 3000))
		}
	}
}

// Down stops every part and leaves nothing running; the folder stays, with
// its logs, until the next Up. Every part is stopped even when one fails.
func (t *Topology) Down() error {
	var errs []error
	errs = append(errs, t.StopPrometheus())
	errs = append(errs, t.StopExporters())
	errs = append(errs, t.StopHAProxy())
	errs = append(errs, t.removeReplicas())
	errs = append(errs, t.StopJaeger())
	errs = append(errs, t.StopPgBouncer())
	errs = append(errs, t.stopCluster(restoreCluster, false))
	errs = append(errs, t.stopCluster(t.standby(), false))
	errs = append(errs, t.stopCluster(t.primary(), false))
	if running := t.running(); len(running) > 0 {
		errs = append(errs, fmt.Errorf("still listening after down: %v", running))
	}
	return errors.Join(errs...)
}

// running lists the topology's ports that something listens on.
func (t *Topology) running() []int {
	var ports []int
	for _, p := range t.ports() {
		if listening(p) {
			ports = append(ports, p)
		}
	}
	return ports
}

func (t *Topology) ports() []int {
	ports := []int{PrimaryPort, StandbyPort, PgBouncerPort, RESTPort, GRPCPort, StatsPort, PrometheusPort, JaegerOTLPPort, JaegerQueryPort,
		jaegerQueryGRPCPort, jaegerHealthPort, RestorePort, postgresExporterBase, postgresExporterBase + 1}
	for i := 1; i <= Replicas; i++ {
		ports = append(ports, RESTPort+i, GRPCPort+i, metricsBase+i)
	}
	return ports
}

func listening(port int) bool {
	conn, err := net.DialTimeout("tcp", addr(port), 500*time.Millisecond)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

func waitListening(port int, limit time.Duration) error {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if listening(port) {
			return nil
		}
	}
	return fmt.Errorf("nothing listens on %s after %v", addr(port), limit)
}

func tailString(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// Addresses are the lines Up prints: where each part answers.
func Addresses() []string {
	lines := []string{
		"REST (HAProxy, HTTP/1.1 and h2c)  " + RESTURL(),
		"gRPC (HAProxy, h2c)               " + GRPCAddr(),
		"HAProxy stats                     " + StatsURL(),
		"PgBouncer (transaction pool)      " + PoolURL(),
		"PgBouncer (session pool)          " + SessionURL(),
		"PostgreSQL primary                " + PrimaryURL(),
		"PostgreSQL hot standby            " + StandbyURL(),
		"Prometheus (alerts)               " + PrometheusURL(),
		"Jaeger (traces: /api/traces/ID)   " + JaegerURL(),
	}
	for i := 1; i <= Replicas; i++ {
		lines = append(lines, fmt.Sprintf("%-33s %s  gRPC %s  %s", ReplicaName(i), ReplicaRESTURL(i),
			ReplicaGRPCAddr(i), ReplicaMetricsURL(i)))
	}
	return lines
}
