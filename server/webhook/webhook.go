// Package webhook signs and sends the service's callbacks: Standard
// Webhooks signatures, and an HTTP client that will not reach private
// addresses, follow redirects or wait forever.
package webhook

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"code.dny.dev/ssrf"

	"github.com/truckjobs/jobboard/internal/tracing"
)

// secretPrefix starts every signing secret.
const secretPrefix = "whsec_"

// NewSecret returns a fresh signing secret: whsec_ and the base64 of 32
// random bytes, the Standard Webhooks form.
func NewSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return secretPrefix + base64.StdEncoding.EncodeToString(b)
}

// Sign returns the webhook-signature value for a message: "v1," and the
// base64 HMAC-SHA256, keyed by the secret's bytes, of "id.timestamp.body".
func Sign(secret, id string, timestamp int64, body []byte) (string, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, secretPrefix))
	if err != nil {
		return "", fmt.Errorf("signing secret is not %s followed by base64: %w", secretPrefix, err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + strconv.FormatInt(timestamp, 10) + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// Headers sets the Standard Webhooks headers of a signed request.
func Headers(h http.Header, secret, id string, timestamp time.Time, body []byte) error {
	return SignedHeaders(h, id, timestamp, body, secret)
}

// SignedHeaders sets the Standard Webhooks headers of a request signed by
// each of secrets: webhook-signature lists one "v1,…" per secret, separated
// by spaces, so a receiver holding any of them can verify it (a secret
// being rotated signs alongside its successor).
func SignedHeaders(h http.Header, id string, timestamp time.Time, body []byte, secrets ...string) error {
	if len(secrets) == 0 {
		return errors.New("no signing secret")
	}
	sigs := make([]string, len(secrets))
	for i, secret := range secrets {
		sig, err := Sign(secret, id, timestamp.Unix(), body)
		if err != nil {
			return err
		}
		sigs[i] = sig
	}
	h.Set("Content-Type", "application/json")
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", strconv.FormatInt(timestamp.Unix(), 10))
	h.Set("webhook-signature", strings.Join(sigs, " "))
	return nil
}

// guardian refuses loopback, private, link-local and other non-public
// addresses on any port.
var guardian = ssrf.New(ssrf.WithAnyPort())

// idleConns is how many idle connections the client keeps, in all and to
// one host: enough for every delivery worker (server.DefaultWebhookWorkers,
// 20) and the callback workers to send to one receiver at once without
// dialling anew, which Go's default of 2 a host would make most of them do.
// Reusing a connection is safe: the address check ran when it was dialled.
const idleConns = 32

// NewClient returns the client callbacks are sent with: no proxy, no
// redirects followed, the given timeout, and unless allowPrivate, a dialer
// that refuses non-public addresses after resolving them, on every
// connection.
func NewClient(timeout time.Duration, allowPrivate bool) *http.Client {
	dialer := &net.Dialer{Timeout: timeout}
	if !allowPrivate {
		dialer.Control = guardian.Safe
	}
	transport := &http.Transport{
		Proxy:               nil,
		DialContext:         dialer.DialContext,
		TLSHandshakeTimeout: timeout,
		MaxIdleConns:        idleConns,
		MaxIdleConnsPerHost: idleConns,
		IdleConnTimeout:     30 * time.Second,
	}
	return &http.Client{
		Timeout:   timeout,
		Transport: tracing.Transport(transport),
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// CheckURL validates a callback address: absolute http(s), a host, no user
// information, and unless allowPrivate, every address the host resolves to
// public. The error is for people and names the rule.
func CheckURL(ctx context.Context, raw string, allowPrivate bool) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil || !u.IsAbs() || u.Host == "":
		return errors.New("must be an absolute http or https URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("scheme %q is not http or https", u.Scheme)
	case u.User != nil:
		return errors.New("must not carry a user name or password")
	case allowPrivate:
		return nil
	}
	host := u.Hostname()
	// One message whatever the cause, naming the rule and never an address
	// the name resolved to: otherwise a tenant could use the check to map
	// names of the network the service runs in.
	refused := fmt.Errorf("host %s must resolve to public addresses only; loopback, private, link-local and other reserved addresses, and names that do not resolve, are refused", quoteHost(host))
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{ip}
	} else {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		if err != nil || len(ips) == 0 {
			return refused
		}
		addrs = ips
	}
	for _, ip := range addrs {
		if err := guardian.SafeAddr(ip.Unmap()); err != nil {
			return refused
		}
	}
	return nil
}

// quoteHost quotes a host name for a message, cut to a length a real name
// never exceeds (253 characters).
func quoteHost(host string) string {
	if len(host) > 253 {
		host = host[:253] + "..."
	}
	return strconv.Quote(host)
}

// Redact is a callback URL as logs and recorded attempts show it: scheme
// and host. Receivers often carry a token in the path or the query (chat
// webhooks do), which is theirs to keep.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(unparsable URL)"
	}
	return u.Scheme + "://" + u.Host + "/..."
}

// RedactError takes the URL's path and query out of an error of the HTTP
// client, which quotes the whole URL.
func RedactError(err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		uerr.URL = Redact(uerr.URL)
	}
	return err
}

// Describe is what an attempt's record says about a failed send: a fixed
// description of the kind of failure, for the endpoint's owner to read.
// The client's error is not shown, since for a refused connection it
// carries the address the host resolved to, which the rule of callbacks
// keeps from tenants (docs/api.md 4.5); the server's log keeps it.
func Describe(err error, timeout time.Duration) string {
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var recordErr tls.RecordHeaderError
	var alertErr tls.AlertError
	var unknownAuthority x509.UnknownAuthorityError
	var hostnameErr x509.HostnameError
	var invalidCert x509.CertificateInvalidError
	switch {
	case errors.Is(err, ssrf.ErrProhibitedIP), errors.Is(err, ssrf.ErrProhibitedPort),
		errors.Is(err, ssrf.ErrProhibitedNetwork), errors.Is(err, ssrf.ErrInvalidHostPort):
		return "address refused: the host resolved to an address that is not public"
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return "no answer within " + timeout.String()
	case errors.As(err, &dnsErr):
		return "the host name does not resolve"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection reset or closed before an answer"
	case errors.As(err, &certErr), errors.As(err, &recordErr), errors.As(err, &alertErr),
		errors.As(err, &unknownAuthority), errors.As(err, &hostnameErr), errors.As(err, &invalidCert):
		return "TLS handshake failed"
	}
	return "connection failed"
}

// isTimeout reports a timeout of the client or the network.
func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// Sent is one POST to a receiver: when it started, how long it took, and
// the answer's status, or the error when no answer came.
type Sent struct {
	Started time.Time
	Took    time.Duration
	// Status is nil when no answer came; Err then says why.
	Status *int
	Err    error
}

// Send posts req with client and reads at most 64 KiB of the answer, so the
// connection can serve the next delivery, whatever the receiver sends.
func Send(client *http.Client, req *http.Request) Sent {
	s := Sent{Started: time.Now()}
	resp, err := client.Do(req)
	if err == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		s.Status = &resp.StatusCode
	}
	s.Took, s.Err = time.Since(s.Started), err
	return s
}
