package main

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/truckjobs/jobboard/internal/localca"
)

// The files of dev --tls in DATA/tls: a local CA, the server's pair for
// localhost and 127.0.0.1, and a client pair for an internal service, all
// made at the first start and kept, so clients keep trusting the same CA.
const (
	devTLSFolder      = "tls"
	devCAFile         = "ca.pem"
	devCAKeyFile      = "ca-key.pem"
	devServerFile     = "server.pem"
	devServerKeyFile  = "server-key.pem"
	devClientFile     = "client.pem"
	devClientKeyFile  = "client-key.pem"
	devClientName     = "example-internal-service"
	devClientOrg      = "jobboard dev"
	devCACommonName   = "jobboard dev local CA"
	devServerHostName = "localhost"
)

// useDevTLS serves dev over TLS with the certificates of DATA/tls, made
// when missing, taking client certificates of its CA. Settings given
// explicitly win over the folder's files.
func (c *config) useDevTLS(dataDir string) error {
	dir := filepath.Join(dataDir, devTLSFolder)
	if err := devCertificates(dir); err != nil {
		return err
	}
	for _, s := range []struct {
		value *string
		file  string
	}{{&c.tlsCertFile, devServerFile},
		{&c.tlsKeyFile, devServerKeyFile}, {&c.internalClientCAFile, devCAFile}} {
		if *s.value == "" {
			*s.value = filepath.Join(dir, s.file)
		}
	}
	return nil
}

// devCertificates makes the folder's CA and certificates unless they are
// all there already.
func devCertificates(dir string) error {
	files := []string{devCAFile, devCAKeyFile, devServerFile, devServerKeyFile, devClientFile, devClientKeyFile}
	missing := false
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, f)); errors.Is(err, os.ErrNotExist) {
			missing = true
		}
	}
	if !missing {
		return nil
	}
	ca, err := localca.New(devCACommonName)
	if err != nil {
		return err
	}
	server, err := ca.Server(devServerHostName, devServerHostName, "127.0.0.1", "::1")
	if err != nil {
		return err
	}
	client, err := ca.Client(devClientName, devClientOrg)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	contents := [][]byte{ca.PEM, ca.KeyPEM, server.CertPEM, server.KeyPEM, client.CertPEM, client.KeyPEM}
	for i, f := range files {
		// Keys are for this user only; certificates are public.
		mode := os.FileMode(0o644)
		if i%2 == 1 {
			mode = 0o600
		}
		if err := os.WriteFile(filepath.Join(dir, f), contents[i], mode); err != nil {
			return err
		}
	}
	slog.Info("made a local CA and its certificates for TLS", "dir", dir)
	return nil
}
