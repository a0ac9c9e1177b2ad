// Package tcprelay relays TCP connections to a server, for tests that
// need the server to vanish and come back the way a host or a database
// does on the network: cutting the relay closes its port (new connections
// are refused) and every connection it carries.
package tcprelay

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Relay forwards connections on its address to a target while up.
type Relay struct {
	t      testing.TB
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns []net.Conn
}

// Start relays a free port of 127.0.0.1 to target (host:port); it is cut
// when the test ends.
func Start(t testing.TB, target string) *Relay {
	r := &Relay{t: t, target: target, addr: "127.0.0.1:0"}
	r.Restore()
	t.Cleanup(r.Cut)
	return r
}

// Addr is the relay's host:port, the same after a Restore.
func (r *Relay) Addr() string { return r.addr }

// Restore opens the relay's port again after a Cut.
func (r *Relay) Restore() {
	ln, err := net.Listen("tcp", r.addr)
	if err != nil {
		r.t.Fatal(err)
	}
	r.mu.Lock()
	r.addr = ln.Addr().String()
	r.ln = ln
	r.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go r.relay(c)
		}
	}()
}

func (r *Relay) relay(c net.Conn) {
	s, err := net.Dial("tcp", r.target)
	if err != nil {
		c.Close()
		return
	}
	r.mu.Lock()
	r.conns = append(r.conns, c, s)
	r.mu.Unlock()
	go func() { _, _ = io.Copy(s, c); s.Close() }()
	_, _ = io.Copy(c, s)
	c.Close()
}

// Cut closes the port and every relayed connection.
func (r *Relay) Cut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ln != nil {
		r.ln.Close()
		r.ln = nil
	}
	for _, c := range r.conns {
		c.Close()
	}
	r.conns = nil
}
