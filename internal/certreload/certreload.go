// Package certreload serves a TLS certificate from a certificate file and a
// key file that may be replaced while the server runs (a renewal by
// cert-manager, certbot or an operator): new connections get the new
// certificate without a restart, and open ones keep theirs.
package certreload

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// DefaultCheckEvery is how often the files are read again, at most: a
// renewed certificate is served within seconds, and a server taking
// thousands of handshakes a second reads two small files once per period.
const DefaultCheckEvery = 2 * time.Second

// Pair is the certificate served, from its two files.
type Pair struct {
	certFile, keyFile string
	checkEvery        time.Duration
	now               func() time.Time

	mu      sync.Mutex
	current *tls.Certificate
	// tried is the content last read, loaded or not: a pair that failed to
	// load is logged once, not at every check, and tried again only once
	// either file changes.
	triedCert, triedKey []byte
	checked             time.Time
}

// Load reads the pair, which must be valid: a server must not start
// without the certificate it was given.
func Load(certFile, keyFile string, checkEvery time.Duration) (*Pair, error) {
	p := &Pair{certFile: certFile, keyFile: keyFile, checkEvery: checkEvery, now: time.Now}
	certPEM, keyPEM, err := p.read()
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate %s with key %s: %w", certFile, keyFile, err)
	}
	p.current, p.triedCert, p.triedKey, p.checked = &cert, certPEM, keyPEM, p.now()
	return p, nil
}

// GetCertificate is for tls.Config: the current certificate, after reading
// the files again when checkEvery has passed since the last time.
func (p *Pair) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if now := p.now(); now.Sub(p.checked) >= p.checkEvery {
		p.checked = now
		p.reload()
	}
	return p.current, nil
}

// GetClientCertificate is for a client's tls.Config: the same certificate,
// sent whatever authorities the server names, so a server that does not
// trust it refuses the handshake rather than taking an anonymous caller.
func (p *Pair) GetClientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	return p.GetCertificate(nil)
}

// NotAfter is when the certificate served now expires.
func (p *Pair) NotAfter() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.current.Leaf.NotAfter
}

// reload loads the files when their content changed; a pair that does not
// load (a key not yet replaced beside its new certificate, a truncated
// file) leaves the previous certificate served and is logged.
func (p *Pair) reload() {
	certPEM, keyPEM, err := p.read()
	if err != nil {
		slog.Error("TLS certificate not reloaded; the previous one is still served", "error", err)
		return
	}
	if bytes.Equal(certPEM, p.triedCert) && bytes.Equal(keyPEM, p.triedKey) {
		return
	}
	p.triedCert, p.triedKey = certPEM, keyPEM
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		slog.Error("TLS certificate not reloaded; the previous one is still served",
			"cert_file", p.certFile, "key_file", p.keyFile, "error", err)
		return
	}
	p.current = &cert
	slog.Info("TLS certificate reloaded", "cert_file", p.certFile, "subject", cert.Leaf.Subject.String(),
		"not_after", cert.Leaf.NotAfter.UTC().Format(time.RFC3339))
}

func (p *Pair) read() (certPEM, keyPEM []byte, err error) {
	if certPEM, err = os.ReadFile(p.certFile); err != nil {
		return nil, nil, fmt.Errorf("TLS certificate file: %w", err)
	}
	if keyPEM, err = os.ReadFile(p.keyFile); err != nil {
		return nil, nil, fmt.Errorf("TLS key file: %w", err)
	}
	return certPEM, keyPEM, nil
}
