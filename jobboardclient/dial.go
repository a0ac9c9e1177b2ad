package jobboardclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/internal/certreload"
)

// Options say how Dial connects. The zero value is TLS against the
// system's roots, no credentials and DefaultRetryPolicy.
type Options struct {
	// Plaintext connects without TLS.
	Plaintext bool
	// CAFile holds the PEM certificates the server's must chain to; empty
	// means the system's roots.
	CAFile string
	// CertFile and KeyFile hold the client certificate and its key (PEM),
	// presented to the server to authenticate as an internal caller.
	CertFile, KeyFile string
	// ServerName is the name the server's certificate must have, when not
	// the host of the target.
	ServerName string

	// InternalToken is the board's internal token; APIKey an account's key.
	// At most one of them.
	InternalToken, APIKey string
	// AllowTokenOverPlaintext lets a token or key go over plaintext to an
	// address that is not loopback, such as a sidecar proxy's.
	AllowTokenOverPlaintext bool

	// Retry is the policy for UNAVAILABLE; the zero value means
	// DefaultRetryPolicy.
	Retry RetryPolicy
	// KeepaliveTime is how long a connection with a call in flight may stay
	// silent before the client pings it; 0 means 1 minute, negative no
	// pings. The board takes a ping every 5 s at most; a server with
	// grpc-go's default policy one every 5 minutes.
	KeepaliveTime time.Duration
	// WaitConnected makes Dial return only once the connection is up, or
	// with an error when ctx ends first. Otherwise Dial returns at once and
	// the first call waits for the connection.
	WaitConnected bool

	// DialOptions are added after the package's own.
	DialOptions []grpc.DialOption
}

// Conn is a connection to the job board with its service clients.
type Conn struct {
	cc       *grpc.ClientConn
	Jobs     jobboardv2.JobServiceClient
	Drivers  jobboardv2.DriverServiceClient
	Intake   jobboardv2.DriverIntakeServiceClient
	Imports  jobboardv2.JobImportServiceClient
	Webhooks jobboardv2.WebhookServiceClient
	Events   jobboardv2.EventServiceClient
	// Search searches every account's jobs; only the internal token or an
	// internal client certificate may call it.
	Search jobboardv2.JobSearchServiceClient
}

// ClientConn is the underlying gRPC connection, for other services such as
// health checks.
func (c *Conn) ClientConn() *grpc.ClientConn { return c.cc }

// Close closes the connection; calls in flight fail.
func (c *Conn) Close() error { return c.cc.Close() }

// Defaults of the connection.
const (
	defaultKeepaliveTime = time.Minute
	keepaliveTimeout     = 20 * time.Second
	// maxRetryBuffer is the largest request grpc-go keeps to retry: the
	// board's largest, an import of 64 MiB. grpc-go's default, 256 KiB,
	// would leave a large post or batch unretried.
	maxRetryBuffer = 64 << 20
)

// Dial connects to the job board at target (host:port, or any gRPC target
// such as dns:///host:port). ctx bounds the wait of Options.WaitConnected.
func Dial(ctx context.Context, target string, o Options) (*Conn, error) {
	transport, err := transportCredentials(o)
	if err != nil {
		return nil, err
	}
	serviceConfig, err := o.Retry.serviceConfig()
	if err != nil {
		return nil, err
	}
	dialOpts := []grpc.DialOption{
		grpc.WithTransportCredentials(transport),
		grpc.WithDefaultServiceConfig(serviceConfig),
		grpc.WithDefaultCallOptions(grpc.MaxRetryRPCBufferSize(maxRetryBuffer)),
		grpc.WithChainUnaryInterceptor(importIdempotencyKey),
	}
	creds, err := callCredentials(target, o)
	if err != nil {
		return nil, err
	}
	if creds != nil {
		dialOpts = append(dialOpts, grpc.WithPerRPCCredentials(creds))
	}
	if o.KeepaliveTime >= 0 {
		t := o.KeepaliveTime
		if t == 0 {
			t = defaultKeepaliveTime
		}
		dialOpts = append(dialOpts, grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: t, Timeout: keepaliveTimeout}))
	}
	cc, err := grpc.NewClient(target, append(dialOpts, o.DialOptions...)...)
	if err != nil {
		return nil, fmt.Errorf("jobboardclient: %s: %w", target, err)
	}
	if o.WaitConnected {
		if err := waitConnected(ctx, cc); err != nil {
			cc.Close()
			return nil, fmt.Errorf("jobboardclient: connect to %s: %w", target, err)
		}
	}
	return &Conn{cc: cc, Jobs: jobboardv2.NewJobServiceClient(cc), Drivers: jobboardv2.NewDriverServiceClient(cc),
		Intake: jobboardv2.NewDriverIntakeServiceClient(cc), Imports: jobboardv2.NewJobImportServiceClient(cc),
		Webhooks: jobboardv2.NewWebhookServiceClient(cc), Events: jobboardv2.NewEventServiceClient(cc),
		Search: jobboardv2.NewJobSearchServiceClient(cc)}, nil
}

// waitConnected waits until cc is ready or ctx ends.
func waitConnected(ctx context.Context, cc *grpc.ClientConn) error {
	cc.Connect()
	for {
		s := cc.GetState()
		if s == connectivity.Ready {
			return nil
		}
		if !cc.WaitForStateChange(ctx, s) {
			return fmt.Errorf("%w (connection %s)", ctx.Err(), s)
		}
	}
}

// transportCredentials is plaintext or TLS with the files of o.
func transportCredentials(o Options) (credentials.TransportCredentials, error) {
	if o.Plaintext {
		if o.CAFile != "" || o.CertFile != "" || o.KeyFile != "" || o.ServerName != "" {
			return nil, errors.New("jobboardclient: certificate files or a server name given with Plaintext")
		}
		return insecure.NewCredentials(), nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: o.ServerName}
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("jobboardclient: CA file: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("jobboardclient: CA file %s holds no PEM certificate", o.CAFile)
		}
	}
	if o.CertFile != "" || o.KeyFile != "" {
		if o.CertFile == "" || o.KeyFile == "" {
			return nil, errors.New("jobboardclient: a client certificate needs both CertFile and KeyFile")
		}
		// The files are read again at handshakes when they may have
		// changed: a long-running service keeps working across a renewal
		// of a short-lived certificate.
		pair, err := certreload.Load(o.CertFile, o.KeyFile, certreload.DefaultCheckEvery)
		if err != nil {
			return nil, fmt.Errorf("jobboardclient: client certificate: %w", err)
		}
		cfg.GetClientCertificate = pair.GetClientCertificate
	}
	return credentials.NewTLS(cfg), nil
}
