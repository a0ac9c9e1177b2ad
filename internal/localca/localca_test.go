package localca

import (
	"crypto/x509"
	"encoding/pem"
	"testing"
)

// TestCertificatesVerify: a server certificate verifies for each of its
// hosts as a server and for no other host; a client certificate verifies
// as a client and not as a server; neither verifies under another CA; and
// a CA loaded back from its PEM issues certificates the first one trusts.
func TestCertificatesVerify(t *testing.T) {
	ca := mustCA(t)
	other := mustCA(t)
	server, err := ca.Server("srv", "localhost", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	client, err := ca.Client("svc", "Org")
	if err != nil {
		t.Fatal(err)
	}
	reloaded, err := Load(ca.PEM, ca.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	again, err := reloaded.Client("svc2", "")
	if err != nil {
		t.Fatal(err)
	}
	server2, err := ca.Server("srv", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	serverUse := []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	clientUse := []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	tests := []struct {
		name  string
		cert  []byte
		roots *CA
		host  string
		usage []x509.ExtKeyUsage
		ok    bool
	}{
		{"server for localhost", server.CertPEM, ca, "localhost", serverUse, true},
		{"server for 127.0.0.1", server.CertPEM, ca, "127.0.0.1", serverUse, true},
		{"server for another host", server.CertPEM, ca, "example.com", serverUse, false},
		{"server under another CA", server.CertPEM, other, "localhost", serverUse, false},
		{"client as client", client.CertPEM, ca, "", clientUse, true},
		{"client as server", client.CertPEM, ca, "", serverUse, false},
		{"client under another CA", client.CertPEM, other, "", clientUse, false},
		{"client of the reloaded CA", again.CertPEM, ca, "", clientUse, true},
	}
	for _, tt := range tests {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(tt.roots.PEM)
		_, err := parse(t, tt.cert).Verify(x509.VerifyOptions{Roots: pool, DNSName: tt.host, KeyUsages: tt.usage})
		if (err == nil) != tt.ok {
			t.Errorf("%s: verify error %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
	if parse(t, server.CertPEM).SerialNumber.Cmp(parse(t, server2.CertPEM).SerialNumber) == 0 {
		t.Error("two certificates share a serial number")
	}
}

func mustCA(t *testing.T) *CA {
	t.Helper()
	ca, err := New("test CA")
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

func parse(t *testing.T, certPEM []byte) *x509.Certificate {
	t.Helper()
	b, _ := pem.Decode(certPEM)
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
