package auth

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/truckjobs/jobboard/internal/authheader"
	"github.com/truckjobs/jobboard/server/call"
)

// Internal services may authenticate with a client certificate instead of
// the internal token (docs/api.md 2, Internal callers). The TLS handshake did the checking: the
// gRPC listener verifies a certificate a client sends against
// JOBBOARD_INTERNAL_CLIENT_CA_FILE and refuses the connection when it does
// not chain there, so a connection with verified chains is an internal
// service's. Listeners without that CA ask for no certificate, and their
// connections never have verified chains.

// AuthenticateGRPCPeer authenticates a call by its connection's verified
// client certificate when it has one, else by its metadata as
// AuthenticateGRPC does.
//
// A certificate decides who calls: the call is the internal service it
// names, with the internal token's rights and x-account-id rules. An
// authorization metadata beside it is refused as ambiguous (an API key
// would claim one account while the certificate claims every one), except
// the internal token itself, which names the same caller: services moving
// from the token to certificates may send both for a while.
func (a *Authenticator) AuthenticateGRPCPeer(ctx context.Context, method string, md metadata.MD, client func() string) (call.Caller, error) {
	subject, ok := verifiedClientCertificate(ctx)
	if !ok {
		return a.AuthenticateGRPC(ctx, method, md, client)
	}
	if auth := call.FirstValue(md, "authorization"); auth != "" && !a.isInternalToken(auth) {
		return call.Caller{}, errAmbiguousCredentials
	}
	c, err := a.internalCaller(ctx, md, method)
	if err != nil {
		return call.Caller{}, err
	}
	c.Certificate = subject
	return c, nil
}

var errAmbiguousCredentials = status.Error(codes.Unauthenticated,
	"ambiguous credentials: this connection's client certificate authenticates an internal service, "+
		"and the call also carries authorization metadata other than the internal token; "+
		"send an API key on a connection without a client certificate")

// isInternalToken reports whether an authorization value is the internal
// token as a bearer token.
func (a *Authenticator) isInternalToken(authorization string) bool {
	token, ok := authheader.Bearer(authorization)
	return ok && a.internal(token)
}

// verifiedClientCertificate is the subject of the client certificate the
// TLS handshake of ctx's connection verified, if any.
func verifiedClientCertificate(ctx context.Context) (string, bool) {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return "", false
	}
	info, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok || len(info.State.VerifiedChains) == 0 || len(info.State.VerifiedChains[0]) == 0 {
		return "", false
	}
	return info.State.VerifiedChains[0][0].Subject.String(), true
}
