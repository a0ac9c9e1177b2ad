package metrics

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/stats"
)

// GRPCConnections is a gRPC stats handler that counts the server's
// connections: jobboard_grpc_connections_opened_total and
// jobboard_grpc_connections_open. With connections aged out
// (JOBBOARD_GRPC_MAX_CONNECTION_AGE) the first grows steadily, the second
// stays flat: clients reconnect, and behind a layer-4 balancer they spread
// over the replicas again. Nil when m is nil.
func (m *Metrics) GRPCConnections() (stats.Handler, error) {
	if m == nil {
		return nil, nil
	}
	h := &connCounter{
		opened: prometheus.NewCounter(prometheus.CounterOpts{Namespace: namespace, Name: "grpc_connections_opened_total",
			Help: "gRPC connections the server accepted (after the TLS handshake, when TLS is on)."}),
		open: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: namespace, Name: "grpc_connections_open",
			Help: "gRPC connections open now."}),
	}
	for _, c := range []prometheus.Collector{h.opened, h.open} {
		if err := m.registry.Register(c); err != nil {
			return nil, fmt.Errorf("register gRPC connection metrics: %w", err)
		}
	}
	return h, nil
}

type connCounter struct {
	opened prometheus.Counter
	open   prometheus.Gauge
}

func (c *connCounter) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (c *connCounter) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context   { return ctx }
func (c *connCounter) HandleRPC(context.Context, stats.RPCStats)                         {}

func (c *connCounter) HandleConn(_ context.Context, s stats.ConnStats) {
	switch s.(type) {
	case *stats.ConnBegin:
		c.opened.Inc()
		c.open.Inc()
	case *stats.ConnEnd:
		c.open.Dec()
	}
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
