package metrics

import (
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// CountGRPCConnections wraps the gRPC server's transport credentials (nil
// for none: plain TCP) so that they count the server's connections:
// jobboard_grpc_connections_opened_total and jobboard_grpc_connections_open.
// With connections aged out (JOBBOARD_GRPC_MAX_CONNECTION_AGE) the first
// grows steadily, the second stays flat: clients reconnect, and behind a
// layer-4 balancer they spread over the replicas again.
//
// Credentials rather than a stats handler: with any stats handler grpc-go
// copies every call's metadata and reports each event of every call, which
// costs a call like GetJob some twenty allocations (BenchmarkGetJobGRPC).
// It returns creds unchanged when m is nil.
func (m *Metrics) CountGRPCConnections(creds credentials.TransportCredentials) (credentials.TransportCredentials, error) {
	if m == nil {
		return creds, nil
	}
	c := &countingCredentials{
		opened: prometheus.NewCounter(prometheus.CounterOpts{Namespace: namespace, Name: "grpc_connections_opened_total",
			Help: "gRPC connections the server accepted (after the TLS handshake, when TLS is on)."}),
		open: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: namespace, Name: "grpc_connections_open",
			Help: "gRPC connections open now."}),
	}
	for _, col := range []prometheus.Collector{c.opened, c.open} {
		if err := m.registry.Register(col); err != nil {
			return nil, fmt.Errorf("register gRPC connection metrics: %w", err)
		}
	}
	if creds == nil {
		creds = insecure.NewCredentials()
	}
	c.TransportCredentials = creds
	return c, nil
}

// countingCredentials counts the connections whose handshake succeeds once
// their client sends something: a port probe that connects and hangs up
// (a load balancer's TCP check) is no gRPC connection.
type countingCredentials struct {
	credentials.TransportCredentials
	opened prometheus.Counter
	open   prometheus.Gauge
}

func (c *countingCredentials) ServerHandshake(raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, info, err := c.TransportCredentials.ServerHandshake(raw)
	if err != nil {
		return conn, info, err
	}
	return &countedConn{Conn: conn, creds: c}, info, nil
}

func (c *countingCredentials) Clone() credentials.TransportCredentials {
	return &countingCredentials{TransportCredentials: c.TransportCredentials.Clone(), opened: c.opened, open: c.open}
}

// The states of a countedConn: it is counted as open from its first read
// of data until it is closed, and never counted once closed.
const (
	connNew int32 = iota
	connCounted
	connClosed
)

// countedConn counts itself at its first read of data, and leaves the
// open connections when it is first closed.
type countedConn struct {
	net.Conn
	creds *countingCredentials
	state atomic.Int32
}

func (c *countedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 && c.state.Load() == connNew && c.state.CompareAndSwap(connNew, connCounted) {
		c.creds.opened.Inc()
		c.creds.open.Inc()
	}
	return n, err
}

func (c *countedConn) Close() error {
	if c.state.Swap(connClosed) == connCounted {
		c.creds.open.Dec()
	}
	return c.Conn.Close()
}

// WatchCertificate exposes jobboard_tls_certificate_expiry_timestamp_seconds,
// when the served certificate expires, read at scrape time: a reloaded
// certificate shows from the first connection that got it. Alert on it
// getting close.
func (m *Metrics) WatchCertificate(notAfter func() time.Time) error {
	if m == nil {
		return nil
	}
	g := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: namespace, Name: "tls_certificate_expiry_timestamp_seconds",
		Help: "Unix time at which the TLS certificate the REST and gRPC listeners serve expires."},
		func() float64 { return float64(notAfter().Unix()) })
	if err := m.registry.Register(g); err != nil {
		return fmt.Errorf("register certificate metric: %w", err)
	}
	return nil
}
