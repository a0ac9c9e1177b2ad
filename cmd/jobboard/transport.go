package main

import (
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"

	"github.com/truckjobs/jobboard/internal/certreload"
	"github.com/truckjobs/jobboard/internal/metrics"
	"github.com/truckjobs/jobboard/internal/resetguard"
)

// The keepalive of gRPC connections, fixed rather than settings: they only
// need to suit every client, and README "Operating" documents them.
const (
	// keepaliveIdle: a connection silent this long is pinged, and closed
	// when the ping gets no answer within keepaliveTimeout, so a client
	// that vanished (a crashed host, a dropped NAT entry) does not hold a
	// connection until the age limit.
	keepaliveIdle    = 2 * time.Minute
	keepaliveTimeout = 20 * time.Second
	// keepaliveMinClientPing is the shortest interval at which a client may
	// ping; one pinging more often is sent GOAWAY ENHANCE_YOUR_CALM
	// ("too_many_pings") and disconnected. grpc-go clients never ping by
	// default, and their keepalive time cannot go below 10 s (grpc-java's
	// neither): half that lets every such client ping, with or without
	// calls in flight, with room for pings that arrive early, while a
	// client flooding the server with pings is still cut off.
	keepaliveMinClientPing = 5 * time.Second
)

func (c *config) transportFlags(fs *flag.FlagSet) {
	setting(fs, &c.tlsCertFile, "tls-cert-file", "JOBBOARD_TLS_CERT_FILE", "",
		"PEM certificate (chain) the REST and gRPC listeners serve TLS with, reloaded when it changes; empty: plaintext. Needs the key file")
	setting(fs, &c.tlsKeyFile, "tls-key-file", "JOBBOARD_TLS_KEY_FILE", "", "PEM private key of the TLS certificate")
	setting(fs, &c.internalClientCAFile, "internal-client-ca-file", "JOBBOARD_INTERNAL_CLIENT_CA_FILE", "",
		"PEM CA certificates: a gRPC client certificate chaining to them authenticates an internal service, any other is refused; needs TLS. Empty: no client certificates")
	setting(fs, &c.grpcMaxConnAge, "grpc-max-connection-age", "JOBBOARD_GRPC_MAX_CONNECTION_AGE", "5m",
		"how long a gRPC connection lives before the server asks the client to reconnect (clients rebalance across replicas)")
	setting(fs, &c.grpcMaxConnAgeGrace, "grpc-max-connection-age-grace", "JOBBOARD_GRPC_MAX_CONNECTION_AGE_GRACE", "2m",
		"how long calls in flight on an aged connection may still run before it is closed")
}

// transport is how the REST and gRPC listeners talk: TLS or plaintext,
// which client certificates gRPC takes, how long a gRPC connection lives.
// The metrics and profiler listeners are not concerned: they stay
// plaintext, for the monitoring on a private address.
type transport struct {
	// cert is nil without TLS.
	cert *certreload.Pair
	// clientCAs is nil when client certificates are not taken.
	clientCAs           *x509.CertPool
	maxAge, maxAgeGrace time.Duration
}

// transport checks the transport settings and loads the certificate and
// the client CA, naming the first bad setting.
func (c *config) transport() (transport, error) {
	var t transport
	var err error
	if t.maxAge, err = minDuration("JOBBOARD_GRPC_MAX_CONNECTION_AGE", c.grpcMaxConnAge, time.Second); err != nil {
		return transport{}, err
	}
	if t.maxAgeGrace, err = minDuration("JOBBOARD_GRPC_MAX_CONNECTION_AGE_GRACE", c.grpcMaxConnAgeGrace, time.Second); err != nil {
		return transport{}, err
	}
	if (c.tlsCertFile == "") != (c.tlsKeyFile == "") {
		return transport{}, usageError{fmt.Sprintf("JOBBOARD_TLS_CERT_FILE and JOBBOARD_TLS_KEY_FILE go together: set both for TLS, or neither (cert file %q, key file %q)",
			c.tlsCertFile, c.tlsKeyFile)}
	}
	if c.internalClientCAFile != "" && c.tlsCertFile == "" {
		return transport{}, usageError{"JOBBOARD_INTERNAL_CLIENT_CA_FILE requires TLS: client certificates are only sent over TLS, so set JOBBOARD_TLS_CERT_FILE and JOBBOARD_TLS_KEY_FILE too"}
	}
	if c.tlsCertFile == "" {
		return t, nil
	}
	if t.cert, err = certreload.Load(c.tlsCertFile, c.tlsKeyFile, certreload.DefaultCheckEvery); err != nil {
		return transport{}, usageError{"JOBBOARD_TLS_CERT_FILE, JOBBOARD_TLS_KEY_FILE: " + err.Error()}
	}
	if c.internalClientCAFile != "" {
		if t.clientCAs, err = loadCAs(c.internalClientCAFile); err != nil {
			return transport{}, usageError{"JOBBOARD_INTERNAL_CLIENT_CA_FILE: " + err.Error()}
		}
	}
	return t, nil
}

// minDuration parses the setting name's value, a Go duration of at least min.
func minDuration(name, value string, min time.Duration) (time.Duration, error) {
	d, err := time.ParseDuration(value)
	if err != nil || d < min {
		return 0, usageError{fmt.Sprintf("%s: %q is not a Go duration of at least %s, such as 5m", name, value, min)}
	}
	return d, nil
}

func loadCAs(file string) (*x509.CertPool, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("%s holds no PEM certificate", file)
	}
	return pool, nil
}

// tls reports whether the API listeners serve TLS.
func (t transport) tls() bool { return t.cert != nil }

// restTLS is the REST listener's TLS configuration, nil without TLS. It
// asks for no client certificate: REST callers are employers with API keys
// and browsers on /docs, whom a certificate request would only confuse,
// while internal services call gRPC. net/http offers HTTP/2 and HTTP/1.1
// by ALPN on it.
func (t transport) restTLS() *tls.Config {
	if t.cert == nil {
		return nil
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: t.cert.GetCertificate}
}

// maxStreamsPerConnection bounds the streams one HTTP/2 connection (gRPC,
// or REST over TLS) may have open at once, and so the handlers it can keep
// running (docs/api.md 7); it is also how many streams a client may reset
// in a second before its connection is closed (resetguard).
const maxStreamsPerConnection = 100

// rapidResetClosed logs the connections of api (gRPC or REST) closed for
// rapid reset, at most one line a second with how many were closed since
// the last.
func rapidResetClosed(api string) func(remote net.Addr, resets, opened int) {
	var unlogged atomic.Int64
	lines := rate.Sometimes{Interval: time.Second}
	return func(remote net.Addr, resets, opened int) {
		n := unlogged.Add(1)
		lines.Do(func() {
			unlogged.Add(-n)
			slog.Warn("closed a "+api+" connection with GOAWAY: its client reset streams faster than it let them complete (rapid reset)",
				"client", remote.String(), "resets_in_a_second", resets, "opened_in_that_second", opened, "connections_closed", n)
		})
	}
}

// grpcOptions are the gRPC server's transport options: stream limits, TLS (verifying a
// client certificate when one is sent and a client CA is set; the
// handshake of any other certificate fails), connection ageing, keepalive,
// and the connection metrics.
func (t transport) grpcOptions(m *metrics.Metrics) ([]grpc.ServerOption, error) {
	opts := []grpc.ServerOption{
		grpc.MaxConcurrentStreams(maxStreamsPerConnection),
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionAge: t.maxAge, MaxConnectionAgeGrace: t.maxAgeGrace,
			Time: keepaliveIdle, Timeout: keepaliveTimeout}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: keepaliveMinClientPing, PermitWithoutStream: true}),
	}
	var creds credentials.TransportCredentials
	if t.cert != nil {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: t.cert.GetCertificate}
		if t.clientCAs != nil {
			cfg.ClientAuth, cfg.ClientCAs = tls.VerifyClientCertIfGiven, t.clientCAs
		}
		creds = credentials.NewTLS(cfg)
	}
	creds, err := m.CountGRPCConnections(creds)
	if err != nil {
		return nil, err
	}
	creds = resetguard.Credentials(creds, resetguard.Settings{MaxResetsPerSecond: maxStreamsPerConnection, Closed: rapidResetClosed("gRPC")})
	if creds != nil {
		opts = append(opts, grpc.Creds(creds))
	}
	return opts, nil
}

// watch exposes the served certificate's expiry among the metrics.
func (t transport) watch(m *metrics.Metrics) error {
	if t.cert == nil {
		return nil
	}
	return m.WatchCertificate(t.cert.NotAfter)
}
