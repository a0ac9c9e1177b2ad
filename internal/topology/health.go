package topology

import (
	"context"
	"database/sql"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

var client = &http.Client{Timeout: 2 * time.Second}

// WaitReady waits until base's /readyz answers 200.
func WaitReady(base string, limit time.Duration) error {
	var last string
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		resp, err := client.Get(base + "/readyz")
		if err != nil {
			last = err.Error()
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return nil
		}
		last = fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return fmt.Errorf("%s/readyz not ready after %v: %s", base, limit, last)
}

// ServerStates are HAProxy's states of the replicas ("UP", "DOWN",
// "UP 1/2", ...), keyed "rest/NAME" and "grpc/NAME", from its stats page.
func ServerStates() (map[string]string, error) {
	resp, err := client.Get(StatsURL() + ";csv")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	r := csv.NewReader(resp.Body)
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("HAProxy stats: %w", err)
	}
	states := map[string]string{}
	for _, row := range rows {
		// # pxname,svname,...,status is the 18th column.
		if len(row) < 18 || strings.HasPrefix(row[0], "#") || row[1] == "FRONTEND" || row[1] == "BACKEND" {
			continue
		}
		if (row[0] == "rest" || row[0] == "grpc") && !strings.HasSuffix(row[1], "-unchecked") {
			states[row[0]+"/"+row[1]] = row[17]
		}
	}
	return states, nil
}

// WaitHealthy waits until HAProxy counts every replica UP in both pools.
func (t *Topology) WaitHealthy(ctx context.Context, limit time.Duration) error {
	var states map[string]string
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var err error
		if states, err = ServerStates(); err != nil {
			continue
		}
		up := 0
		for _, s := range states {
			if s == "UP" {
				up++
			}
		}
		if up == 2*Replicas {
			return nil
		}
	}
	return fmt.Errorf("HAProxy does not count every replica UP after %v: %v", limit, states)
}

// Status describes each part: listening or not, and what it says of itself.
func (t *Topology) Status(ctx context.Context) []string {
	lines := []string{"topology in " + t.Dir}
	for _, l := range []struct {
		name string
		port int
		more func() string
		sup  supervised // the part's supervisor, if it has one
	}{
		{"PostgreSQL", PrimaryPort, func() string { return clusterState(ctx, PrimaryURL()) }, supervised{}},
		{"PostgreSQL", StandbyPort, func() string { return clusterState(ctx, StandbyURL()) }, supervised{}},
		{"PostgreSQL restored", RestorePort, func() string { return clusterState(ctx, restoreCluster.url()) }, supervised{}},
		{"PgBouncer", PgBouncerPort, func() string { return "" }, t.pgbouncer()},
		{"HAProxy REST", RESTPort, func() string { return "" }, t.haproxy()},
		{"HAProxy gRPC", GRPCPort, func() string { return "" }, supervised{}},
		{"HAProxy stats", StatsPort, haproxyState, supervised{}},
		{"Prometheus", PrometheusPort, firingAlerts(ctx), t.prometheus()},
		{"Jaeger", JaegerQueryPort, func() string { return "" }, t.jaeger("")},
	} {
		state := "down"
		if listening(l.port) {
			state = strings.TrimSpace("listening " + l.more())
		}
		if l.sup.name != "" {
			state += "; " + supervisorState(l.sup.dir, l.sup.name)
		}
		lines = append(lines, fmt.Sprintf("  %-20s %-16s %s", l.name, addr(l.port), state))
	}
	for _, e := range t.exporters() {
		state := "down"
		if listening(e.port) {
			state = "listening"
		}
		lines = append(lines, fmt.Sprintf("  %-20s %-16s %s; %s", e.name, addr(e.port), state, supervisorState(t.path(exportersDir), e.name)))
	}
	for i := 1; i <= Replicas; i++ {
		state := "down"
		if err := WaitReady(ReplicaRESTURL(i), time.Millisecond); err == nil {
			state = "ready"
		} else if listening(RESTPort + i) {
			state = "not ready"
		}
		state += "; " + supervisorState(t.path(replicasDir), ReplicaName(i))
		lines = append(lines, fmt.Sprintf("  %-20s %-16s %s", ReplicaName(i), addr(RESTPort+i), state))
	}
	return lines
}

// supervisorState says whether NAME's supervisor in dir runs, and how
// often it has started NAME again, from its log.
func supervisorState(dir, name string) string {
	state := "no supervisor"
	if _, err := livePid(filepath.Join(dir, name+".supervisor.pid")); err == nil {
		state = "supervised"
	}
	all, err := crashes(dir, name)
	if err != nil {
		return state + " (" + err.Error() + ")"
	}
	if len(all) > 0 {
		last := all[len(all)-1]
		state += fmt.Sprintf(", %d unexpected exits (the last %s, exit %s)", len(all), last.At.Format(time.DateTime), last.Exit)
	}
	return state
}

func haproxyState() string {
	states, err := ServerStates()
	if err != nil {
		return err.Error()
	}
	var parts []string
	for k, v := range states {
		parts = append(parts, k+" "+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// clusterState says whether a cluster is a primary or a standby, and a
// standby's replay lag.
func clusterState(ctx context.Context, dsn string) string {
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return err.Error()
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var standby bool
	if err := db.QueryRowContext(ctx, `SELECT pg_is_in_recovery()`).Scan(&standby); err != nil {
		return err.Error()
	}
	if !standby {
		var replicas int
		_ = db.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'`).Scan(&replicas)
		return fmt.Sprintf("(primary, %d streaming standby)", replicas)
	}
	var lag sql.NullFloat64
	_ = db.QueryRowContext(ctx, `SELECT extract(epoch FROM now() - pg_last_xact_replay_timestamp())`).Scan(&lag)
	return fmt.Sprintf("(standby, last replayed transaction %.1f s old)", lag.Float64)
}

// firingAlerts says which alerts the topology's Prometheus fires.
func firingAlerts(ctx context.Context) func() string {
	return func() string {
		alerts, err := Alerts(ctx)
		if err != nil {
			return err.Error()
		}
		var firing []string
		for _, a := range alerts {
			if a.State == "firing" {
				firing = append(firing, a.Labels["alertname"]+" "+a.Labels["instance"])
			}
		}
		sort.Strings(firing)
		return fmt.Sprintf("alerts firing: %d %v", len(firing), firing)
	}
}
