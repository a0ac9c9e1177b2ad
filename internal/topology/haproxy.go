package topology

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

const haproxyDir = "haproxy"

// haproxyConfig is HAProxy's configuration. A replica leaves a pool when
// its check fails twice, 500 ms apart once it has failed once; a refused
// connection is retried on another replica at once (redispatch).
func (t *Topology) haproxyConfig() (string, error) {
	check, err := grpcHealthCheckRequest()
	if err != nil {
		return "", err
	}
	rest, grpc := haproxyServers()
	return fmt.Sprintf(`# HAProxy for the topology (internal/topology); docs/deploy.md explains it.
global
    # Every request (info) and each server's state change (notice), to
    # standard error, which the start sends to %[1]s/haproxy.log.
    log stderr format iso local0 info
    maxconn 4000

defaults
    mode http
    log global
    option dontlognull
    timeout connect 2s
    timeout client 3m
    # Above the service's own write timeout (2 min) for large lists and posts.
    timeout server 3m
    timeout check 1s
    timeout http-request 15s
    # A replica that refuses the connection is tried again, on another one.
    retries 3
    option redispatch 1
    default-server check inter 1s fastinter 500ms downinter 1s fall 2 rise 2

# REST: HTTP/1.1, and HTTP/2 with prior knowledge (HAProxy tells them
# apart by the HTTP/2 preface), to the replicas over HTTP/1.1.
frontend rest
    bind %[2]s
    option httplog
    option forwardfor
    default_backend rest

backend rest
    balance roundrobin
    option allbackups
    option httpchk GET /readyz
    http-check expect status 200
    # Which replica answered: the load tests count requests per replica.
    http-response set-header X-Served-By %%s
%[3]s
# gRPC: HTTP/2 without TLS (h2c) on both sides. The check is a
# grpc.health.v1.Health/Check call written out as HTTP/2 frames; a replica
# passes when the answer holds the message status SERVING.
frontend grpc
    bind %[4]s proto h2
    option httplog
    default_backend grpc

backend grpc
    balance roundrobin
    option allbackups
    option tcp-check
    tcp-check connect
    tcp-check send-binary %[5]s
    tcp-check expect binary %[6]s
    http-response set-header X-Served-By %%s
%[7]s
# The stats page, and HAProxy's metrics for Prometheus on /metrics.
listen stats
    bind %[8]s
    # Prometheus scrapes it every 2 s: not a line each time.
    no log
    http-request use-service prometheus-exporter if { path /metrics }
    stats enable
    stats uri /
    stats refresh 2s
`, t.path(haproxyDir), addr(RESTPort), rest, addr(GRPCPort), hex.EncodeToString(check),
		hex.EncodeToString(servingAnswer), grpc, addr(StatsPort)), nil
}

// haproxyServers are the server lines of the REST and gRPC backends: each
// replica, checked, then each again as an unchecked backup. When every
// replica fails its check, the database is out rather than the replicas:
// the same replicas, unchecked, take the traffic then, so reads served by
// the standby still answer and writes get the service's own fast 503
// instead of HAProxy's.
func haproxyServers() (rest, grpc string) {
	var r, g strings.Builder
	for i := 1; i <= Replicas; i++ {
		fmt.Fprintf(&r, "    server %s %s\n", ReplicaName(i), addr(RESTPort+i))
		fmt.Fprintf(&g, "    server %s %s proto h2\n", ReplicaName(i), addr(GRPCPort+i))
	}
	for i := 1; i <= Replicas; i++ {
		fmt.Fprintf(&r, "    server %s-unchecked %s backup no-check\n", ReplicaName(i), addr(RESTPort+i))
		fmt.Fprintf(&g, "    server %s-unchecked %s proto h2 backup no-check\n", ReplicaName(i), addr(GRPCPort+i))
	}
	return r.String(), g.String()
}

// servingAnswer is the gRPC message of a HealthCheckResponse with status
// SERVING: not compressed, 2 bytes long, field 1 = 1.
var servingAnswer = []byte{0, 0, 0, 0, 2, 0x08, 0x01}

// grpcHealthCheckRequest is an HTTP/2 connection preface, empty settings
// and one grpc.health.v1.Health/Check call for the whole server (an empty
// HealthCheckRequest), as bytes for HAProxy's tcp-check to send.
func grpcHealthCheckRequest() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(http2.ClientPreface)
	fr := http2.NewFramer(&buf, nil)
	if err := fr.WriteSettings(); err != nil {
		return nil, err
	}
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, f := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", "/grpc.health.v1.Health/Check"},
		{":authority", "haproxy-check"}, {"content-type", "application/grpc"}, {"te", "trailers"}} {
		if err := enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]}); err != nil {
			return nil, err
		}
	}
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block.Bytes(), EndHeaders: true}); err != nil {
		return nil, err
	}
	if err := fr.WriteData(1, true, []byte{0, 0, 0, 0, 0}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// StartHAProxy writes HAProxy's configuration, checks it and starts it
// under its supervisor.
func (t *Topology) StartHAProxy() error {
	if err := os.MkdirAll(t.path(haproxyDir), 0o755); err != nil {
		return err
	}
	cfg, err := t.haproxyConfig()
	if err != nil {
		return err
	}
	file := t.path(haproxyDir, "haproxy.cfg")
	if err := os.WriteFile(file, []byte(cfg), 0o644); err != nil {
		return err
	}
	if err := run(exec.Command("/usr/sbin/haproxy", "-c", "-q", "-f", file)); err != nil {
		return err
	}
	if err := startSupervised(t.haproxy()); err != nil {
		return fmt.Errorf("haproxy: %w", err)
	}
	if err := waitListening(RESTPort, 10*time.Second); err != nil {
		return fmt.Errorf("haproxy: %w (see %s)", err, t.path(haproxyDir, "haproxy.log"))
	}
	return nil
}

// StopHAProxy stops HAProxy (SIGTERM: at once) and its supervisor.
func (t *Topology) StopHAProxy() error {
	return stopSupervised(t.haproxy(), syscall.SIGTERM)
}

// haproxy is HAProxy under its supervisor (supervise.go), in the
// foreground as a master and its worker (-W -db) rather than daemonized
// (-D), which would close standard error, the log's way out; the master
// writes its pid (-p). The log goes through cat, which appends to the
// file: HAProxy sets its standard error non-blocking and drops O_APPEND
// on the way, so after logrotate's copytruncate it would go on writing at
// its old offset, leaving a hole of NUL bytes. pipefail gives the
// supervisor HAProxy's exit status rather than cat's; cat ends when
// HAProxy's worker does (it ends when its master does).
func (t *Topology) haproxy() supervised {
	dir := t.path(haproxyDir)
	script := `set -o pipefail; /usr/sbin/haproxy -W -db -p "$1/haproxy.pid" -f "$1/haproxy.cfg" 2>&1 | cat >>"$1/haproxy.log"`
	return supervised{name: "haproxy", dir: dir, log: os.DevNull, argv: []string{"bash", "-c", script, "bash", dir}, ownPidFile: true}
}
