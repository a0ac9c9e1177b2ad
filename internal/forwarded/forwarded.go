// Package forwarded decides whose X-Forwarded-Host and X-Forwarded-Proto
// the service believes. Links the service hands out (an import's
// links.self and Location, the drivers list's Link) are built from the host
// and scheme a request arrived on; a proxy in front rewrites both and says
// what they were in those headers. Anybody else could send the headers too,
// so they count only from the peers an operator lists in
// JOBBOARD_TRUSTED_PROXIES.
package forwarded

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// Proxies are the trusted peers. The zero value trusts nobody.
type Proxies struct {
	prefixes []netip.Prefix
}

// Parse reads a comma-separated list of IP addresses and CIDR prefixes,
// such as "10.0.0.0/8, 127.0.0.1". An empty list trusts nobody.
func Parse(list string) (Proxies, error) {
	var p Proxies
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if prefix, err := netip.ParsePrefix(item); err == nil {
			p.prefixes = append(p.prefixes, prefix.Masked())
			continue
		}
		addr, err := netip.ParseAddr(item)
		if err != nil {
			return Proxies{}, fmt.Errorf("%q is not an IP address or a CIDR prefix such as 10.0.0.0/8", item)
		}
		addr = addr.Unmap()
		p.prefixes = append(p.prefixes, netip.PrefixFrom(addr, addr.BitLen()))
	}
	return p, nil
}

// Trusts reports whether the peer at addr (host:port or a bare address,
// as net/http and gRPC give it) is a trusted proxy.
func (p Proxies) Trusts(addr string) bool {
	if len(p.prefixes) == 0 {
		return false
	}
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	for _, prefix := range p.prefixes {
		if prefix.Contains(ip) {
			return true
		}
	}
	return false
}

// Host is the first host of an X-Forwarded-Host value (a chain of proxies
// lists one per hop, the client's first), or "" when it is not a plain
// host[:port] that can stand in a URL.
func Host(header string) string {
	first, _, _ := strings.Cut(header, ",")
	first = strings.TrimSpace(first)
	if !validHost(first) {
		return ""
	}
	return first
}

// Proto is an X-Forwarded-Proto value the service can link with: http or
// https, the first of a chain; "" otherwise.
func Proto(header string) string {
	first, _, _ := strings.Cut(header, ",")
	switch p := strings.ToLower(strings.TrimSpace(first)); p {
	case "http", "https":
		return p
	}
	return ""
}

// validHost reports whether h is a host or host:port and nothing more, so
// that a link built on it points where it says.
func validHost(h string) bool {
	if h == "" || strings.ContainsAny(h, "/?#@\\ \t") {
		return false
	}
	u, err := url.Parse("http://" + h)
	return err == nil && u.Host == h && u.Path == "" && u.User == nil
}

// Client is the address of the client a request is from, as limits per
// client address count it: the peer's address, or, when the peer is a
// trusted proxy, the nearest address in X-Forwarded-For (each proxy
// appends the address it was called from) that is not a trusted proxy.
// Addresses further left were written by the client and prove nothing.
func (p Proxies) Client(peer, xff string) string {
	if xff == "" || !p.Trusts(peer) {
		return peer
	}
	hops := strings.Split(xff, ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop := strings.TrimSpace(hops[i])
		if _, err := netip.ParseAddr(hop); err != nil {
			return peer // not an address: the chain cannot be read further
		}
		if !p.Trusts(hop) {
			return hop
		}
	}
	return peer
}
