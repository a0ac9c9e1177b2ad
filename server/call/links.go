package call

import (
	"context"
	"net"
	"net/url"
	"strings"
	"time"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/truckjobs/jobboard/internal/callmeta"
	"github.com/truckjobs/jobboard/internal/forwarded"
)

// Links makes the absolute links answers carry (links.self, links.next).
type Links struct {
	// PublicURL is JOBBOARD_PUBLIC_URL; empty means the host called.
	PublicURL string
	// RESTPort is where REST listens, for links answered to gRPC calls.
	RESTPort string
}

// Base is the absolute base of links: JOBBOARD_PUBLIC_URL, or else the
// host the REST request came to (the gateway passes it as x-forwarded-host),
// or the host a trusted proxy says a gRPC client called, or the host of the
// gRPC authority on the REST port. Untrusted peers' forwarding metadata
// never gets here (the gRPC server drops it first).
func (l Links) Base(ctx context.Context) string {
	if l.PublicURL != "" {
		return strings.TrimRight(l.PublicURL, "/")
	}
	md := Metadata(ctx)
	scheme := "http"
	if p := forwarded.Proto(FirstValue(md, callmeta.ForwardedProto)); p != "" {
		scheme = p
	} else if OverTLS(ctx) {
		// A gRPC call over TLS: the REST port serves TLS as well.
		scheme = "https"
	}
	host := forwarded.Host(FirstValue(md, callmeta.ForwardedHost))
	if host == "" {
		host = FirstValue(md, ":authority")
		if h, _, err := net.SplitHostPort(host); err == nil && l.RESTPort != "" {
			host = net.JoinHostPort(h, l.RESTPort)
		}
	}
	return (&url.URL{Scheme: scheme, Host: host}).String()
}

// OverTLS reports whether ctx's call came over a TLS connection.
func OverTLS(ctx context.Context) bool {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return false
	}
	_, ok = p.AuthInfo.(credentials.TLSInfo)
	return ok
}

// FirstValue is the first value of key in md, or "".
func FirstValue(md metadata.MD, key string) string {
	if v := md.Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}

// TimeFormat is how answers write a time (an import's requestedAt, an
// event's createdAt): UTC, six fractional digits, Z.
const TimeFormat = "2006-01-02T15:04:05.000000Z"

// Time writes t in TimeFormat.
func Time(t time.Time) string { return t.UTC().Format(TimeFormat) }
