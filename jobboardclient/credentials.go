package jobboardclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
)

// ErrTokenOverPlaintext is Dial's answer to a token or key that would go
// over plaintext to an address that is not loopback.
var ErrTokenOverPlaintext = errors.New("jobboardclient: refusing to send a token over plaintext to an address that is not loopback; use TLS, or set AllowTokenOverPlaintext")

// bearer sends a token as `authorization: Bearer ...` with every call.
type bearer struct {
	token string
	// secure: grpc-go refuses to send it over a connection without TLS.
	secure bool
}

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + b.token}, nil
}

func (b bearer) RequireTransportSecurity() bool { return b.secure }

// callCredentials is the token or key of o, or nil for none.
func callCredentials(target string, o Options) (credentials.PerRPCCredentials, error) {
	if o.InternalToken != "" && o.APIKey != "" {
		return nil, errors.New("jobboardclient: both InternalToken and APIKey given; a connection has one identity")
	}
	token := o.InternalToken + o.APIKey
	switch {
	case token == "":
		return nil, nil
	case !o.Plaintext:
		return bearer{token: token, secure: true}, nil
	case o.AllowTokenOverPlaintext || isLocalTarget(target):
		return bearer{token: token}, nil
	}
	return nil, fmt.Errorf("%w (%s)", ErrTokenOverPlaintext, target)
}

// isLocalTarget reports whether a gRPC target stays on this machine: a Unix
// socket, localhost, or a loopback address.
func isLocalTarget(target string) bool {
	if strings.HasPrefix(target, "unix:") || strings.HasPrefix(target, "unix-abstract:") {
		return true
	}
	// dns:///host:port, dns://resolver/host:port, passthrough:///host:port.
	if scheme, rest, ok := strings.Cut(target, "://"); ok && !strings.Contains(scheme, "/") {
		_, target, _ = strings.Cut(rest, "/")
	}
	host := target
	if h, _, err := net.SplitHostPort(target); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// ActFor returns ctx whose calls act for the account: an internal caller's
// x-account-id metadata, replacing any set before. With an API key the
// account is the key's and this is ignored.
func ActFor(ctx context.Context, accountID int64) context.Context {
	md, _ := metadata.FromOutgoingContext(ctx)
	md = md.Copy()
	md.Set("x-account-id", strconv.FormatInt(accountID, 10))
	return metadata.NewOutgoingContext(ctx, md)
}
