package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/internal/localca"
	"github.com/truckjobs/jobboard/internal/testfix"
)

// tlsFiles are the certificates of a TLS test, written into a folder of
// the test: the service's CA and server pair, a client certificate from
// that CA and one from another CA.
type tlsFiles struct {
	dir                       string
	ca                        *localca.CA
	roots                     *x509.CertPool
	caFile, certFile, keyFile string
	internal, stranger        tls.Certificate
}

const internalSubject = "CN=reports-service,O=TruckJobs internal"

func newTLSFiles(t *testing.T) *tlsFiles {
	t.Helper()
	f := &tlsFiles{dir: t.TempDir()}
	var err error
	if f.ca, err = localca.New("jobboard test CA"); err != nil {
		t.Fatal(err)
	}
	f.roots = x509.NewCertPool()
	f.roots.AppendCertsFromPEM(f.ca.PEM)
	f.caFile, f.certFile, f.keyFile = f.path("ca.pem"), f.path("server.pem"), f.path("server-key.pem")
	f.write(t, f.caFile, f.ca.PEM)
	f.issueServer(t, "first")
	f.internal = clientCert(t, f.ca, "reports-service", "TruckJobs internal")
	other, err := localca.New("another CA")
	if err != nil {
		t.Fatal(err)
	}
	f.stranger = clientCert(t, other, "reports-service", "TruckJobs internal")
	return f
}

func (f *tlsFiles) path(name string) string { return filepath.Join(f.dir, name) }

func (f *tlsFiles) write(t *testing.T, file string, data []byte) {
	t.Helper()
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// issueServer writes a new server pair for 127.0.0.1 and localhost, whose
// common name tells it apart.
func (f *tlsFiles) issueServer(t *testing.T, commonName string) {
	t.Helper()
	p, err := f.ca.Server(commonName, "127.0.0.1", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	f.write(t, f.certFile, p.CertPEM)
	f.write(t, f.keyFile, p.KeyPEM)
}

func clientCert(t *testing.T, ca *localca.CA, commonName, org string) tls.Certificate {
	t.Helper()
	p, err := ca.Client(commonName, org)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tls.X509KeyPair(p.CertPEM, p.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// env is the settings of a service serving TLS with the files, taking
// client certificates of their CA.
func (f *tlsFiles) env() []string {
	return []string{"JOBBOARD_TLS_CERT_FILE=" + f.certFile, "JOBBOARD_TLS_KEY_FILE=" + f.keyFile,
		"JOBBOARD_INTERNAL_CLIENT_CA_FILE=" + f.caFile}
}

// grpcTLSConn dials the service over TLS, presenting cert when it is not
// nil, whichever CAs the server names: a Go client given Certificates
// sends none that the server's CAs did not issue, so a stranger's
// certificate would never reach the server.
func (f *tlsFiles) grpcTLSConn(t *testing.T, addr string, cert *tls.Certificate) *grpc.ClientConn {
	t.Helper()
	cfg := &tls.Config{RootCAs: f.roots}
	if cert != nil {
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// servedCommonName is the common name of the certificate a new TLS
// connection to addr gets.
func (f *tlsFiles) servedCommonName(t *testing.T, addr string) string {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: f.roots})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].Subject.CommonName
}

// TestTLS runs the service over TLS with client certificates, as docs/deploy.md
// 3 (TLS) says: REST over HTTP/2 and HTTP/1.1, gRPC with an API key, with the
// internal token and with a client certificate of the internal CA (logged
// by its subject), refused with any other, and a replaced certificate
// served to new connections without a restart.
func TestTLS(t *testing.T) {
	env := migratedEnv(t)
	a := createAccount(t, env, "Alpha Freight")
	f := newTLSFiles(t)
	svc := startServiceOver(t, append(env, f.env()...), f.roots)
	jobs := func(conn *grpc.ClientConn) jobboardv2.JobServiceClient { return jobboardv2.NewJobServiceClient(conn) }

	t.Run("rest", func(t *testing.T) {
		resp, err := svc.client.Get(svc.httpBase + "/healthz")
		if err != nil || resp.Proto != "HTTP/2.0" {
			t.Fatalf("REST over TLS: %v %v, want HTTP/2.0", resp, err)
		}
		resp.Body.Close()
		http1 := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: f.roots},
			TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}}}
		resp, err = http1.Get(svc.httpBase + "/healthz")
		if err != nil || resp.Proto != "HTTP/1.1" {
			t.Fatalf("REST over TLS, HTTP/1.1: %v %v", resp, err)
		}
		resp.Body.Close()
		if code, _, body := svc.request("basic", a.APIKey, "GET", "/api/v2.0/jobs.json", ""); code != 200 {
			t.Errorf("jobs over TLS: %d %s", code, body)
		}
		resp, err = http.Get(strings.Replace(svc.httpBase, "https:", "http:", 1) + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("plain HTTP to the TLS port: %d, want 400", resp.StatusCode)
			}
		}
	})
	t.Run("grpc callers", func(t *testing.T) { grpcCallers(t, f, svc, a, jobs) })
	t.Run("certificate reload", func(t *testing.T) {
		old := jobs(f.grpcTLSConn(t, svc.grpcAddr, nil))
		if _, err := old.ListJobs(withKey(a.APIKey), &jobboardv2.ListJobsRequest{}); err != nil {
			t.Fatal(err)
		}
		f.issueServer(t, "second")
		replaced := time.Now()
		for _, addr := range []string{svc.grpcAddr, strings.TrimPrefix(svc.httpBase, "https://")} {
			testfix.Eventually(10*time.Second, func() bool { return f.servedCommonName(t, addr) == "second" })
			if got := f.servedCommonName(t, addr); got != "second" {
				t.Fatalf("%s serves %q 10 s after the files were replaced, want \"second\"", addr, got)
			}
		}
		t.Logf("figures: a replaced certificate served to new connections after %v", time.Since(replaced).Round(10*time.Millisecond))
		if _, err := old.ListJobs(withKey(a.APIKey), &jobboardv2.ListJobsRequest{}); err != nil {
			t.Errorf("the connection opened before the reload: %v", err)
		}
		if !strings.Contains(svc.stderr.String(), `"msg":"TLS certificate reloaded"`) {
			t.Errorf("no log line of the reload:\n%s", svc.stderr.String())
		}
		_, _, scrape := svc.scrape()
		if !strings.Contains(scrape, "jobboard_tls_certificate_expiry_timestamp_seconds ") {
			t.Errorf("no certificate expiry metric")
		}
	})
}

// grpcCallers: each kind of caller over TLS, and the refusals.
func grpcCallers(t *testing.T, f *tlsFiles, svc *service, a account, jobs func(*grpc.ClientConn) jobboardv2.JobServiceClient) {
	plain := jobs(f.grpcTLSConn(t, svc.grpcAddr, nil))
	internal := jobs(f.grpcTLSConn(t, svc.grpcAddr, &f.internal))
	stranger := jobs(f.grpcTLSConn(t, svc.grpcAddr, &f.stranger))
	forA := func(ctx context.Context) context.Context {
		return metadata.AppendToOutgoingContext(ctx, "x-account-id", fmt.Sprint(a.ID))
	}
	tagged := func(ctx context.Context, id string) context.Context {
		return metadata.AppendToOutgoingContext(ctx, "x-request-id", id)
	}
	tests := []struct {
		name   string
		client jobboardv2.JobServiceClient
		ctx    context.Context
		want   codes.Code
	}{
		{"API key", plain, withKey(a.APIKey), codes.OK},
		{"internal token", plain, forA(withKey(internalToken)), codes.OK},
		{"no credentials", plain, context.Background(), codes.Unauthenticated},
		{"internal certificate", internal, tagged(forA(context.Background()), "cert-call-1"), codes.OK},
		{"internal certificate without x-account-id", internal, context.Background(), codes.InvalidArgument},
		{"internal certificate, unknown account", internal, metadata.AppendToOutgoingContext(context.Background(), "x-account-id", "999999"), codes.NotFound},
		{"internal certificate and the internal token", internal, forA(withKey(internalToken)), codes.OK},
		{"internal certificate and an API key", internal, forA(withKey(a.APIKey)), codes.Unauthenticated},
		{"certificate of another CA", stranger, forA(context.Background()), codes.Unavailable},
		{"certificate of another CA and an API key", stranger, withKey(a.APIKey), codes.Unavailable},
	}
	for _, tt := range tests {
		_, err := tt.client.ListJobs(tt.ctx, &jobboardv2.ListJobsRequest{})
		if status.Code(err) != tt.want {
			t.Errorf("%s: %v, want %s", tt.name, err, tt.want)
		}
	}
	// Links answered over TLS point at the REST port's https.
	created, err := jobboardv2.NewJobImportServiceClient(f.grpcTLSConn(t, svc.grpcAddr, nil)).CreateJobImport(withKey(a.APIKey),
		&jobboardv2.CreateJobImportRequest{Jobs: []*jobboardv2.JobInput{}})
	if want := svc.httpBase + "/api/v2.0/job-imports/"; err != nil || !strings.HasPrefix(created.GetLinks().GetSelf(), want) {
		t.Errorf("CreateJobImport over TLS: links.self %q (%v), want %s...", created.GetLinks().GetSelf(), err, want)
	}
	// Over plaintext, the TLS port answers nothing.
	conn, err := grpc.NewClient(svc.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := jobs(conn).ListJobs(withKey(a.APIKey), &jobboardv2.ListJobsRequest{}); status.Code(err) != codes.Unavailable {
		t.Errorf("plaintext gRPC to the TLS port: %v", err)
	}
	time.Sleep(100 * time.Millisecond)
	lines := logLines(svc.stderr.String(), "rpc", `"request_id":"cert-call-1"`)
	want := `"code":"OK",`
	if len(lines) != 1 || !strings.Contains(lines[0], want) || !strings.Contains(lines[0], fmt.Sprintf(`"account_id":%d,"caller":%q`, a.ID, internalSubject)) {
		t.Errorf("access line of the call by certificate: %q, want the account and \"caller\":%q", lines, internalSubject)
	}
}

// TestTransportSettings: serve refuses to start on a transport setting it
// cannot use, naming it.
func TestTransportSettings(t *testing.T) {
	f := newTLSFiles(t)
	broken := f.path("broken.pem")
	f.write(t, broken, []byte("not PEM"))
	tests := []struct {
		name     string
		settings []string
		want     string
	}{
		{"cert without key", []string{"JOBBOARD_TLS_CERT_FILE=" + f.certFile}, "JOBBOARD_TLS_CERT_FILE and JOBBOARD_TLS_KEY_FILE go together"},
		{"key without cert", []string{"JOBBOARD_TLS_KEY_FILE=" + f.keyFile}, "JOBBOARD_TLS_CERT_FILE and JOBBOARD_TLS_KEY_FILE go together"},
		{"client CA without TLS", []string{"JOBBOARD_INTERNAL_CLIENT_CA_FILE=" + f.caFile}, "JOBBOARD_INTERNAL_CLIENT_CA_FILE requires TLS"},
		{"broken certificate", []string{"JOBBOARD_TLS_CERT_FILE=" + broken, "JOBBOARD_TLS_KEY_FILE=" + f.keyFile}, broken},
		{"client CA without certificates", append(f.env()[:2:2], "JOBBOARD_INTERNAL_CLIENT_CA_FILE="+broken), "JOBBOARD_INTERNAL_CLIENT_CA_FILE: " + broken + " holds no PEM certificate"},
		{"age too short", []string{"JOBBOARD_GRPC_MAX_CONNECTION_AGE=10ms"}, `JOBBOARD_GRPC_MAX_CONNECTION_AGE: "10ms" is not a Go duration of at least 1s`},
		{"grace not a duration", []string{"JOBBOARD_GRPC_MAX_CONNECTION_AGE_GRACE=soon"}, `JOBBOARD_GRPC_MAX_CONNECTION_AGE_GRACE: "soon"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(jobboardBinary(t), "serve")
			// The settings are refused before the database is reached.
			cmd.Env = append(devEnv(), append([]string{"DATABASE_URL=postgres://nobody@127.0.0.1:1/none"}, tt.settings...)...)
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), tt.want) {
				t.Errorf("serve: %v\n%s\nwant an error with %q", err, out, tt.want)
			}
		})
	}
}
