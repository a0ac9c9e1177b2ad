package jobboardclient

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
)

// TestTokenOverPlaintext: a token or key goes over plaintext only to this
// machine, unless the caller allows it; over TLS, anywhere.
func TestTokenOverPlaintext(t *testing.T) {
	tests := []struct {
		target string
		o      Options
		want   error
	}{
		{"10.0.0.5:9090", Options{Plaintext: true, InternalToken: "t"}, ErrTokenOverPlaintext},
		{"board.example.com:9090", Options{Plaintext: true, APIKey: "k"}, ErrTokenOverPlaintext},
		{"dns:///board.example.com:9090", Options{Plaintext: true, InternalToken: "t"}, ErrTokenOverPlaintext},
		{"dns://8.8.8.8/board.example.com:9090", Options{Plaintext: true, InternalToken: "t"}, ErrTokenOverPlaintext},
		{"127.0.0.1:9090", Options{Plaintext: true, InternalToken: "t"}, nil},
		{"127.0.0.2:9090", Options{Plaintext: true, InternalToken: "t"}, nil},
		{"localhost:9090", Options{Plaintext: true, InternalToken: "t"}, nil},
		{"[::1]:9090", Options{Plaintext: true, APIKey: "k"}, nil},
		{"dns:///localhost:9090", Options{Plaintext: true, InternalToken: "t"}, nil},
		{"unix:///run/jobboard/grpc.sock", Options{Plaintext: true, InternalToken: "t"}, nil},
		{"10.0.0.5:9090", Options{Plaintext: true, InternalToken: "t", AllowTokenOverPlaintext: true}, nil},
		{"10.0.0.5:9090", Options{Plaintext: true}, nil},
		{"board.example.com:9090", Options{InternalToken: "t"}, nil},
	}
	for _, tt := range tests {
		conn, err := Dial(context.Background(), tt.target, tt.o)
		if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
			t.Errorf("Dial(%s, %+v): %v, want %v", tt.target, tt.o, err, tt.want)
		}
		if conn != nil {
			conn.Close()
		}
	}
	if _, err := Dial(context.Background(), "127.0.0.1:9090", Options{Plaintext: true, InternalToken: "t", APIKey: "k"}); err == nil {
		t.Error("Dial took a token and a key")
	}
}

// pki is a throwaway CA with a server and a client certificate, in files.
type pki struct {
	caFile, serverCert, serverKey, clientCert, clientKey string
	pool                                                 *x509.CertPool
}

func newPKI(t *testing.T) pki {
	t.Helper()
	dir := t.TempDir()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	p := pki{caFile: filepath.Join(dir, "ca.pem"), pool: x509.NewCertPool()}
	p.pool.AddCert(ca)
	writePEM(t, p.caFile, "CERTIFICATE", caDER)
	issue := func(name string, serial int64, usage x509.ExtKeyUsage, ips ...net.IP) (string, string) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			ExtKeyUsage: []x509.ExtKeyUsage{usage}, KeyUsage: x509.KeyUsageDigitalSignature, IPAddresses: ips}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		keyDER, _ := x509.MarshalECPrivateKey(key)
		certFile, keyFile := filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
		writePEM(t, certFile, "CERTIFICATE", der)
		writePEM(t, keyFile, "EC PRIVATE KEY", keyDER)
		return certFile, keyFile
	}
	p.serverCert, p.serverKey = issue("server", 2, x509.ExtKeyUsageServerAuth, net.IPv4(127, 0, 0, 1))
	p.clientCert, p.clientKey = issue("ingest-service", 3, x509.ExtKeyUsageClientAuth)
	return p
}

func writePEM(t *testing.T, path, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// whoBoard answers GetJob with the subject of the client's certificate
// as the job's title and its authorization as the reference number.
type whoBoard struct {
	jobboardv2.UnimplementedJobServiceServer
}

func (whoBoard) GetJob(ctx context.Context, _ *jobboardv2.GetJobRequest) (*jobboardv2.GetJobResponse, error) {
	job := &jobboardv2.Job{}
	if p, ok := peer.FromContext(ctx); ok {
		if info, ok := p.AuthInfo.(credentials.TLSInfo); ok && len(info.State.PeerCertificates) > 0 {
			job.Title = info.State.PeerCertificates[0].Subject.CommonName
		}
	}
	if md, ok := metadataOf(ctx); ok {
		job.ReferenceNumber = md
	}
	return &jobboardv2.GetJobResponse{Job: job}, nil
}

// TestTLS: the client verifies the server against the CA file, presents
// its certificate, and sends the token over TLS.
func TestTLS(t *testing.T) {
	p := newPKI(t)
	serverCert, err := tls.LoadX509KeyPair(p.serverCert, p.serverKey)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{serverCert},
		ClientCAs: p.pool, ClientAuth: tls.VerifyClientCertIfGiven, MinVersion: tls.VersionTLS12})))
	jobboardv2.RegisterJobServiceServer(srv, whoBoard{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Stop()

	tests := []struct {
		name      string
		o         Options
		wantCode  codes.Code
		wantTitle string
	}{
		{"CA file and client certificate", Options{CAFile: p.caFile, CertFile: p.clientCert, KeyFile: p.clientKey, InternalToken: "tok"}, codes.OK, "ingest-service"},
		{"CA file, token only", Options{CAFile: p.caFile, InternalToken: "tok"}, codes.OK, ""},
		{"system roots do not know the test CA", Options{InternalToken: "tok"}, codes.Unavailable, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.Retry = RetryPolicy{MaxAttempts: 1}
			conn, err := Dial(context.Background(), ln.Addr().String(), tt.o)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			resp, err := conn.Jobs.GetJob(ctx, &jobboardv2.GetJobRequest{Id: 1})
			if status.Code(err) != tt.wantCode {
				t.Fatalf("GetJob: %v, want %v", err, tt.wantCode)
			}
			if err == nil && (resp.Job.Title != tt.wantTitle || resp.Job.ReferenceNumber != "Bearer tok") {
				t.Errorf("the server saw certificate %q and authorization %q", resp.Job.Title, resp.Job.ReferenceNumber)
			}
		})
	}
	if _, err := Dial(context.Background(), ln.Addr().String(), Options{CertFile: p.clientCert}); err == nil {
		t.Error("Dial took a certificate without its key")
	}
	if _, err := Dial(context.Background(), ln.Addr().String(), Options{Plaintext: true, CAFile: p.caFile}); err == nil {
		t.Error("Dial took a CA file with Plaintext")
	}
}

// metadataOf is the call's authorization metadata.
func metadataOf(ctx context.Context) (string, bool) {
	md, ok := metadata.FromIncomingContext(ctx)
	if !ok || len(md.Get("authorization")) == 0 {
		return "", false
	}
	return md.Get("authorization")[0], true
}
