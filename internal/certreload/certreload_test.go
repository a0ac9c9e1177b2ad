package certreload

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/internal/localca"
	"github.com/truckjobs/jobboard/internal/logtest"
)

// TestReload: a replaced pair is served once checkEvery has passed, not
// before; a pair that does not load keeps the previous certificate and is
// logged once, naming its files; a repaired pair is then served.
func TestReload(t *testing.T) {
	logs := logtest.Capture(t)
	ca, err := localca.New("test CA")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "server.pem"), filepath.Join(dir, "server-key.pem")
	write := func(p localca.Pair) {
		t.Helper()
		for file, data := range map[string][]byte{certFile: p.CertPEM, keyFile: p.KeyPEM} {
			if err := os.WriteFile(file, data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	issue := func(name string) localca.Pair {
		t.Helper()
		p, err := ca.Server(name, "localhost")
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	write(issue("first"))
	pair, err := Load(certFile, keyFile, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Now()
	pair.now = func() time.Time { return clock }
	served := func() string {
		t.Helper()
		c, err := pair.GetCertificate(&tls.ClientHelloInfo{})
		if err != nil {
			t.Fatal(err)
		}
		return c.Leaf.Subject.CommonName
	}

	steps := []struct {
		name    string
		change  func()
		advance time.Duration
		want    string
		logged  string // in the log since the previous step
	}{
		{"replaced, checked too soon", func() { write(issue("second")) }, 30 * time.Second, "first", ""},
		{"replaced, checked in time", func() {}, 31 * time.Second, "second", "TLS certificate reloaded"},
		{"key of another certificate", func() {
			other := issue("third")
			if err := os.WriteFile(keyFile, other.KeyPEM, 0o600); err != nil {
				t.Fatal(err)
			}
		}, time.Minute, "second", `"cert_file":"` + certFile + `","key_file":"` + keyFile + `","error":"tls: private key does not match public key"`},
		{"still broken: not logged again", func() {}, time.Minute, "second", ""},
		{"repaired", func() { write(issue("fourth")) }, time.Minute, "fourth", "TLS certificate reloaded"},
		{"a file gone", func() { os.Remove(keyFile) }, time.Minute, "fourth", "TLS key file: open " + keyFile},
	}
	for _, s := range steps {
		before := len(logs.String())
		s.change()
		clock = clock.Add(s.advance)
		if got := served(); got != s.want {
			t.Errorf("%s: served %q, want %q", s.name, got, s.want)
		}
		added := logs.String()[before:]
		if s.logged == "" && added != "" || !strings.Contains(added, s.logged) {
			t.Errorf("%s: logged %q, want %q", s.name, added, s.logged)
		}
	}
	// A client presents the same certificate, reloaded the same way.
	write(issue("fifth"))
	clock = clock.Add(time.Minute)
	if c, err := pair.GetClientCertificate(&tls.CertificateRequestInfo{}); err != nil || c.Leaf.Subject.CommonName != "fifth" {
		t.Errorf("client certificate after a renewal: %v %v, want fifth", c, err)
	}
	if pair.NotAfter().Before(time.Now().Add(300 * 24 * time.Hour)) {
		t.Errorf("NotAfter %v, want the served certificate's", pair.NotAfter())
	}
}

func TestLoadRefusesBrokenPair(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	os.WriteFile(certFile, []byte("not a certificate"), 0o600)
	os.WriteFile(keyFile, []byte("not a key"), 0o600)
	if _, err := Load(certFile, keyFile, time.Second); err == nil || !strings.Contains(err.Error(), certFile) {
		t.Errorf("Load of a broken pair: %v, want an error naming %s", err, certFile)
	}
	if _, err := Load(filepath.Join(dir, "missing.pem"), keyFile, time.Second); err == nil || !strings.Contains(err.Error(), "missing.pem") {
		t.Errorf("Load of a missing file: %v", err)
	}
}
