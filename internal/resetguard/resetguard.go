// Package resetguard closes an HTTP/2 server connection whose client
// resets streams faster than it lets them complete ("rapid reset",
// CVE-2023-44487). grpc-go bounds the handlers such a client can keep
// running (MaxConcurrentStreams) but serves every stream it opens, so one
// connection could make the server start, refuse and log hundreds of
// thousands of calls a second. The guard reads the frame headers passing
// on the connection, counts the client's RST_STREAM frames, and when they
// pass the limit in one second it sends GOAWAY (ENHANCE_YOUR_CALM) and
// closes the connection (docs/api.md 7).
//
// It wraps a connection after its TLS handshake, whose bytes are HTTP/2
// frames: the ones grpc-go serves (Credentials), and REST's HTTP/2
// connections (ServeHTTP2), for which net/http's own defence closes a
// connection only once 400 handlers wait to start, which fast refusals
// never make them do.
package resetguard

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// Frame types and flags read here (RFC 9113 §6).
const (
	frameHeaders   = 0x1
	frameRSTStream = 0x3
	frameGoAway    = 0x7
	errEnhanceCalm = 0xb
	headerLen      = 9
)

// clientPreface starts every HTTP/2 connection a client opens.
const clientPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// Settings says when a connection is closed.
type Settings struct {
	// MaxResetsPerSecond is how many streams a client may reset in one
	// second; past it, if it also reset more than half the streams it
	// opened in that second, the connection is closed.
	MaxResetsPerSecond int
	// Closed, when set, is told of each connection closed (to log and
	// count it); resets is how many streams it had reset in the second.
	Closed func(remote net.Addr, resets, opened int)
}

// Wrap guards conn. A TLS connection stays one: what is served over it
// can still read its state (net/http's HTTP/2 server fills in
// Request.TLS from it).
func Wrap(conn net.Conn, s Settings) net.Conn {
	c := &Conn{Conn: conn, settings: s, in: scanner{preface: len(clientPreface)}}
	if tc, ok := conn.(connectionStater); ok {
		return &tlsConn{Conn: c, state: tc}
	}
	return c
}

// connectionStater is a TLS connection, as HTTP/2 servers look for it.
type connectionStater interface {
	ConnectionState() tls.ConnectionState
}

// tlsConn is a guarded TLS connection.
type tlsConn struct {
	*Conn
	state connectionStater
}

func (c *tlsConn) ConnectionState() tls.ConnectionState { return c.state.ConnectionState() }

// Conn is a guarded server connection.
type Conn struct {
	net.Conn
	settings Settings

	// Read side, on grpc-go's reader goroutine alone.
	in         scanner
	second     time.Time // start of the second being counted
	opened     int       // streams the client opened in it
	resets     int       // streams the client reset in it
	lastStream uint32    // the highest stream the client opened
	tripped    bool

	// Write side: the server's writes, and the GOAWAY put between two of
	// its frames.
	mu      sync.Mutex
	out     scanner
	closing atomic.Bool // GOAWAY is due at the next frame boundary
	closed  bool
	// lingering: GOAWAY is written, and what the client still sends is
	// read and dropped until the connection is closed (lingerClose).
	lingering atomic.Bool
}

func (c *Conn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if c.lingering.Load() {
		return 0, net.ErrClosed // the server is done with the client
	}
	if n > 0 && !c.tripped {
		c.in.scan(p[:n], c.clientFrame)
		if c.tripped {
			c.goAway()
		}
	}
	return n, err
}

// clientFrame counts a frame header the client sent.
func (c *Conn) clientFrame(kind byte, stream uint32) {
	switch kind {
	case frameHeaders:
		if stream > c.lastStream {
			c.lastStream = stream
			c.count(func() { c.opened++ })
		}
	case frameRSTStream:
		c.count(func() { c.resets++ })
		if c.resets > c.settings.MaxResetsPerSecond && 2*c.resets > c.opened {
			c.tripped = true
		}
	}
}

// count adds to the second being counted, starting a new one when it is over.
func (c *Conn) count(add func()) {
	if now := time.Now(); now.Sub(c.second) >= time.Second {
		c.second, c.opened, c.resets = now, 0, 0
	}
	add()
}

func (c *Conn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, net.ErrClosed
	}
	n, err := c.Conn.Write(p)
	c.out.scan(p[:n], func(byte, uint32) {})
	if c.closing.Load() && c.out.atBoundary() {
		c.closeLocked()
	}
	return n, err
}

// closeAfter bounds how long a GOAWAY waits for grpc-go to finish the
// frame it is writing; then the connection is closed without one.
const closeAfter = time.Second

// goAway sends GOAWAY and closes the connection as soon as no frame of
// the server's is half written. A write in progress may be blocked on a
// client that reads nothing: the GOAWAY then waits for the next write, and
// the connection is closed after closeAfter whatever happens, which also
// ends a blocked write.
func (c *Conn) goAway() {
	if c.settings.Closed != nil {
		c.settings.Closed(c.RemoteAddr(), c.resets, c.opened)
	}
	c.closing.Store(true)
	if c.mu.TryLock() {
		atBoundary := c.out.atBoundary()
		if atBoundary {
			c.closeLocked()
		}
		c.mu.Unlock()
		if atBoundary {
			return
		}
	}
	time.AfterFunc(closeAfter, func() { _ = c.Conn.Close() })
}

// closeLocked writes GOAWAY (ENHANCE_YOUR_CALM, naming the last stream
// the client opened) and closes the connection.
func (c *Conn) closeLocked() {
	if c.closed {
		return
	}
	c.closed = true
	const debug = "rapid reset"
	frame := make([]byte, headerLen+8+len(debug))
	putHeader(frame, 8+len(debug), frameGoAway, 0, 0)
	binary.BigEndian.PutUint32(frame[headerLen:], c.lastStream&0x7fffffff)
	binary.BigEndian.PutUint32(frame[headerLen+4:], errEnhanceCalm)
	copy(frame[headerLen+8:], debug)
	_ = c.Conn.SetWriteDeadline(time.Now().Add(closeAfter))
	_, _ = c.Conn.Write(frame)
	c.lingerClose()
}

// lingerClose closes the connection once the client has stopped sending,
// or after closeAfter, reading and dropping what it sends meanwhile. A
// socket closed with bytes unread is reset rather than ended, and the
// reset drops what is still queued to send: the GOAWAY, behind answers a
// client busy writing had not read yet (the client then saw "connection
// reset" and no GOAWAY).
func (c *Conn) lingerClose() {
	c.lingering.Store(true)
	go func() {
		_ = c.Conn.SetReadDeadline(time.Now().Add(closeAfter))
		_, _ = io.Copy(io.Discard, c.Conn)
		_ = c.Conn.Close()
	}()
}

// Close closes the connection, unless it is lingering after its GOAWAY:
// lingerClose closes it then.
func (c *Conn) Close() error {
	if c.lingering.Load() {
		return nil
	}
	return c.Conn.Close()
}

func putHeader(b []byte, length int, kind, flags byte, stream uint32) {
	b[0], b[1], b[2] = byte(length>>16), byte(length>>8), byte(length)
	b[3], b[4] = kind, flags
	binary.BigEndian.PutUint32(b[5:], stream&0x7fffffff)
}

// scanner follows the frames in a byte stream as it passes in pieces.
type scanner struct {
	preface int // bytes of the client preface still to skip
	header  [headerLen]byte
	have    int // bytes of header read
	payload int // bytes of the current frame's payload still to skip
}

// scan passes b, calling frame for each frame header completed in it.
func (s *scanner) scan(b []byte, frame func(kind byte, stream uint32)) {
	for len(b) > 0 {
		switch {
		case s.preface > 0:
			n := min(s.preface, len(b))
			s.preface -= n
			b = b[n:]
		case s.payload > 0:
			n := min(s.payload, len(b))
			s.payload -= n
			b = b[n:]
		default:
			n := copy(s.header[s.have:], b)
			s.have += n
			b = b[n:]
			if s.have == headerLen {
				s.have = 0
				s.payload = int(s.header[0])<<16 | int(s.header[1])<<8 | int(s.header[2])
				frame(s.header[3], binary.BigEndian.Uint32(s.header[5:])&0x7fffffff)
			}
		}
	}
}

// atBoundary says no frame is half passed.
func (s *scanner) atBoundary() bool { return s.have == 0 && s.payload == 0 }

// Credentials guards every connection creds hands over after its
// handshake (insecure ones when creds is nil).
func Credentials(creds credentials.TransportCredentials, s Settings) credentials.TransportCredentials {
	if creds == nil {
		creds = insecure.NewCredentials()
	}
	return &guardedCredentials{TransportCredentials: creds, settings: s}
}

type guardedCredentials struct {
	credentials.TransportCredentials
	settings Settings
}

func (g *guardedCredentials) ServerHandshake(raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, info, err := g.TransportCredentials.ServerHandshake(raw)
	if err != nil {
		return conn, info, err
	}
	return Wrap(conn, g.settings), info, nil
}

func (g *guardedCredentials) Clone() credentials.TransportCredentials {
	return &guardedCredentials{TransportCredentials: g.TransportCredentials.Clone(), settings: g.settings}
}

// ServeHTTP2 makes srv, served over TLS, serve HTTP/2 with golang.org/x/net's
// server on guarded connections, with at most maxStreams streams open on
// each. Call it before srv serves.
func ServeHTTP2(srv *http.Server, maxStreams uint32, s Settings) error {
	h2 := &http2.Server{MaxConcurrentStreams: maxStreams}
	if err := http2.ConfigureServer(srv, h2); err != nil {
		return err
	}
	srv.TLSNextProto[http2.NextProtoTLS] = func(hs *http.Server, c *tls.Conn, h http.Handler) {
		ctx := context.Background()
		if bc, ok := h.(interface{ BaseContext() context.Context }); ok {
			ctx = bc.BaseContext()
		}
		h2.ServeConn(Wrap(c, s), &http2.ServeConnOpts{Context: ctx, Handler: h, BaseConfig: hs})
	}
	return nil
}
