package topology

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// logrotateConfig rotates every log of the topology once it passes 50 MB,
// keeping five. copytruncate, because no part reopens its log on a
// signal the same way (Prometheus' goes to a shell's >>, HAProxy's through
// cat's, the replicas' are written by podman's conmon): each writes with
// O_APPEND, so after the copy and the truncation its next line lands at
// the start of the emptied file.
func (t *Topology) logrotateConfig() string {
	files := []string{
		t.path(logsDir, "*.log"),
		t.path(haproxyDir, "haproxy.log"),
		t.path(prometheusDir, "prometheus.log"),
		t.path(jaegerDir, "jaeger.log"),
		t.path(pgbouncerDir, "pgbouncer.log"),
		t.path(firstCluster.dir(), "postgres.log"),
		t.path(secondCluster.dir(), "postgres.log"),
		t.path(restoreCluster.dir(), "postgres.log"),
		t.path(pgbackrestDir, "log", "*.log"),
		t.path(exportersDir, "*.log"),
	}
	return fmt.Sprintf(`# logrotate for the topology's logs (internal/topology); docs/deploy.md.
%s {
    size 50M
    rotate 5
    copytruncate
    compress
    delaycompress
    missingok
    notifempty
}
`, strings.Join(files, "\n"))
}

// LogrotateConfig is the topology's logrotate configuration, which Up
// writes: cron runs logrotate with it (docs/deploy.md).
func (t *Topology) LogrotateConfig() string { return t.path("logrotate.conf") }

func (t *Topology) writeLogrotateConfig() error {
	return os.WriteFile(t.LogrotateConfig(), []byte(t.logrotateConfig()), 0o644)
}

// RotateLogs runs Debian's logrotate on the topology's logs: those over
// 50 MB, or every one that is not empty when force is set. make
// topology-rotate-logs runs it, as cron would.
func (t *Topology) RotateLogs(force bool) error {
	args := []string{"--state", t.path("logrotate.state")}
	if force {
		args = append(args, "--force")
	}
	return run(exec.Command("/usr/sbin/logrotate", append(args, t.LogrotateConfig())...))
}
