package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/lib/pq"
)

// Route is how a pool's connections reach PostgreSQL, which decides
// whether the hottest reads may run as named prepared statements.
type Route struct {
	// Direct: the server sees the very TCP connection the client opened,
	// so nothing (PgBouncer, a TCP relay) sits between them.
	Direct bool
	// Reason says why, with addresses only (never the URL).
	Reason string
}

// A named prepared statement is only safe on a connection that reaches
// PostgreSQL itself. lib/pq names them "1", "2", … on each connection;
// behind a pooler in transaction mode a Bind may reach a server connection
// where "1" is another client's query, and return its rows.
//
// The check runs on every new connection, not once per pool: a host name
// may resolve elsewhere later, a URL may list several hosts, and PgBouncer
// may be put in front while the service runs. Each connection that is not
// direct refuses named statements itself (noNamedStatements), so a pool
// that decided at Open that it could prepare stays correct connection by
// connection. The check costs one round trip per new connection.
//
// Direct means the server's view of the TCP connection, both ends, equals
// the client's socket: inet_server_addr/port is what the client's socket is
// connected to, and inet_client_addr/port is the client's own address and
// port. A relay or pooler answers from its own connection to PostgreSQL,
// whose server end is PostgreSQL's address, not the relay's listening one,
// and whose client end is the relay's own port. Comparing the server end
// alone is not enough: across network namespaces or hosts (an SSH tunnel,
// a forwarded container port) a relay listening on 127.0.0.1:5432 may reach
// a PostgreSQL that listens on 127.0.0.1:5432 too. Both ends matching needs
// the relay's outgoing port to equal the client's too, in such a setup
// only. A Unix socket (no addresses), a failed check or any address that
// does not parse counts as not direct.
const routeQuery = `SELECT host(inet_server_addr()), inet_server_port(), host(inet_client_addr()), inet_client_port()`

// checkedConnector opens lib/pq connections, checks how each reaches the
// server, and keeps the first verdict as the pool's.
type checkedConnector struct {
	dsn string

	mu    sync.Mutex
	first *Route
}

func newCheckedConnector(dsn string) (*checkedConnector, error) {
	// Parsed once here so that a bad URL fails at open, as sqlx.Open did.
	if _, err := pq.NewConnector(dsn); err != nil {
		return nil, err
	}
	return &checkedConnector{dsn: dsn}, nil
}

func (c *checkedConnector) Driver() driver.Driver { return &pq.Driver{} }

// Connect opens a connection with a dialer of its own, which keeps the
// socket it dialed for the check.
func (c *checkedConnector) Connect(ctx context.Context) (driver.Conn, error) {
	pc, err := pq.NewConnector(c.dsn)
	if err != nil {
		return nil, err
	}
	d := &recordingDialer{}
	pc.Dialer(d)
	conn, err := pc.Connect(ctx)
	if err != nil {
		return nil, err
	}
	route, err := checkRoute(ctx, conn, d.last())
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("check database connection: %w", err)
	}
	c.mu.Lock()
	if c.first == nil {
		c.first = &route
	}
	c.mu.Unlock()
	if route.Direct {
		return conn, nil
	}
	full, ok := conn.(pqConn)
	if !ok {
		_ = conn.Close()
		return nil, fmt.Errorf("database driver connection %T lacks an interface of lib/pq's", conn)
	}
	return noNamedStatements{full}, nil
}

// Route is the verdict on the pool's first connection; false before any.
func (c *checkedConnector) Route() (Route, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.first == nil {
		return Route{}, false
	}
	return *c.first, true
}

// recordingDialer dials as lib/pq does and keeps the last socket: lib/pq
// may dial several hosts, or one twice (sslmode=prefer), and keeps the last.
type recordingDialer struct {
	d    net.Dialer
	mu   sync.Mutex
	conn net.Conn
}

func (r *recordingDialer) Dial(network, address string) (net.Conn, error) {
	return r.DialContext(context.Background(), network, address)
}

func (r *recordingDialer) DialTimeout(network, address string, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return r.DialContext(ctx, network, address)
}

func (r *recordingDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	conn, err := r.d.DialContext(ctx, network, address)
	if err == nil {
		r.mu.Lock()
		r.conn = conn
		r.mu.Unlock()
	}
	return conn, err
}

func (r *recordingDialer) last() net.Conn {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.conn
}

// checkRoute asks the server how it sees the connection and compares that
// with the socket. Only a connection that cannot answer is an error.
func checkRoute(ctx context.Context, conn driver.Conn, sock net.Conn) (Route, error) {
	if sock == nil {
		return Route{Reason: "no socket was dialed"}, nil
	}
	if _, ok := sock.RemoteAddr().(*net.TCPAddr); !ok {
		return Route{Reason: "not a TCP connection (" + sock.RemoteAddr().Network() + "); the server's address cannot be compared"}, nil
	}
	seen, err := serverView(ctx, conn)
	if err != nil {
		if IsUnavailable(err) || ctx.Err() != nil {
			return Route{}, err
		}
		return Route{Reason: "the server did not say its address: " + err.Error()}, nil
	}
	return compareRoute(addrPort(sock.LocalAddr()), addrPort(sock.RemoteAddr()), seen), nil
}

// serverSide is the server's view of a connection; a zero value stands
// for NULL (a Unix socket).
type serverSide struct{ server, client netip.AddrPort }

func serverView(ctx context.Context, conn driver.Conn) (serverSide, error) {
	q, ok := conn.(driver.QueryerContext)
	if !ok {
		return serverSide{}, errors.New("the driver's connection cannot query")
	}
	rows, err := q.QueryContext(ctx, routeQuery, nil)
	if err != nil {
		return serverSide{}, err
	}
	defer rows.Close()
	vals := make([]driver.Value, 4)
	if err := rows.Next(vals); err != nil {
		if err == io.EOF {
			return serverSide{}, errors.New("no row")
		}
		return serverSide{}, err
	}
	return serverSide{server: parseAddrPort(vals[0], vals[1]), client: parseAddrPort(vals[2], vals[3])}, nil
}

// compareRoute is the verdict: direct only when both ends match exactly.
func compareRoute(local, remote netip.AddrPort, seen serverSide) Route {
	switch {
	case !seen.server.IsValid() || !seen.client.IsValid():
		return Route{Reason: "the server reports no TCP addresses for the connection"}
	case seen.server != remote:
		return Route{Reason: fmt.Sprintf("connected to %s but the server listens at %s: a pooler or proxy relays the connection", remote, seen.server)}
	case seen.client != local:
		return Route{Reason: fmt.Sprintf("connected from %s but the server sees %s: a pooler or proxy relays the connection", local, seen.client)}
	}
	return Route{Direct: true, Reason: fmt.Sprintf("the server sees this very connection (%s to %s)", local, remote)}
}

func addrPort(a net.Addr) netip.AddrPort {
	t, ok := a.(*net.TCPAddr)
	if !ok {
		return netip.AddrPort{}
	}
	ap := t.AddrPort()
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}

// parseAddrPort reads host() text and a port column; anything else,
// NULL included, is the zero value.
func parseAddrPort(host, port driver.Value) netip.AddrPort {
	var h string
	switch v := host.(type) {
	case string:
		h = v
	case []byte:
		h = string(v)
	}
	p, ok := port.(int64)
	if !ok || p <= 0 || p > 65535 {
		return netip.AddrPort{}
	}
	a, err := netip.ParseAddr(h)
	if err != nil {
		return netip.AddrPort{}
	}
	return netip.AddrPortFrom(a.Unmap(), uint16(p))
}
