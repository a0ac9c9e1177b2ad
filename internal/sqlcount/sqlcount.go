// Package sqlcount counts the statements a database/sql pool sends to its
// server: a test's measure of how many round trips a call costs, which
// stays the same on any machine where its time does not.
package sqlcount

import (
	"context"
	"database/sql/driver"
	"errors"
	"sync/atomic"
)

// Counter counts the statements of the connections of the connectors it
// wraps. Beginning and ending a transaction are not statements here.
type Counter struct {
	// Skip, when set, leaves out the statements it is true of.
	Skip func(query string) bool
	n    atomic.Int64
}

// Count is the number of statements sent so far.
func (c *Counter) Count() int64 { return c.n.Load() }

// Wrap returns a connector whose connections count on c.
func (c *Counter) Wrap(inner driver.Connector) driver.Connector {
	return connector{inner: inner, counter: c}
}

type connector struct {
	inner   driver.Connector
	counter *Counter
}

func (k connector) Connect(ctx context.Context) (driver.Conn, error) {
	inner, err := k.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &conn{Conn: inner, counter: k.counter}, nil
}

func (k connector) Driver() driver.Driver { return k.inner.Driver() }

// conn passes every call to the driver's connection; the optional
// interfaces it lacks answer driver.ErrSkip or nothing, as database/sql
// expects of a driver without them.
type conn struct {
	driver.Conn
	counter *Counter
}

// counted adds one for a statement the driver sent: ErrSkip means it sent
// nothing and database/sql will send the statement another way.
func (c *conn) counted(query string, err error) {
	if !errors.Is(err, driver.ErrSkip) && (c.counter.Skip == nil || !c.counter.Skip(query)) {
		c.counter.n.Add(1)
	}
}

func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	e, ok := c.Conn.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	r, err := e.ExecContext(ctx, query, args)
	c.counted(query, err)
	return r, err
}

func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := c.Conn.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	rows, err := q.QueryContext(ctx, query, args)
	c.counted(query, err)
	return rows, err
}

func (c *conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	var s driver.Stmt
	var err error
	if p, ok := c.Conn.(driver.ConnPrepareContext); ok {
		s, err = p.PrepareContext(ctx, query)
	} else {
		s, err = c.Conn.Prepare(query)
	}
	if err != nil {
		return nil, err
	}
	if c.counter.Skip != nil && c.counter.Skip(query) {
		return s, nil
	}
	return &stmt{Stmt: s, counter: c.counter}, nil
}

func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if b, ok := c.Conn.(driver.ConnBeginTx); ok {
		return b.BeginTx(ctx, opts)
	}
	return c.Conn.Begin() //nolint:staticcheck // the fallback for a driver without BeginTx
}

func (c *conn) Ping(ctx context.Context) error {
	if p, ok := c.Conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (c *conn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

// CheckNamedValue lets the driver convert arguments its own way, as it
// would unwrapped (lib/pq passes []byte and arrays through).
func (c *conn) CheckNamedValue(v *driver.NamedValue) error {
	if n, ok := c.Conn.(driver.NamedValueChecker); ok {
		return n.CheckNamedValue(v)
	}
	return driver.ErrSkip
}

func (c *conn) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

// stmt counts each run of a prepared statement.
type stmt struct {
	driver.Stmt
	counter *Counter
}

func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	s.counter.n.Add(1)
	if e, ok := s.Stmt.(driver.StmtExecContext); ok {
		return e.ExecContext(ctx, args)
	}
	return s.Stmt.Exec(namedToValues(args)) //nolint:staticcheck // the fallback for a driver without ExecContext
}

func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	s.counter.n.Add(1)
	if q, ok := s.Stmt.(driver.StmtQueryContext); ok {
		return q.QueryContext(ctx, args)
	}
	return s.Stmt.Query(namedToValues(args)) //nolint:staticcheck // the fallback for a driver without QueryContext
}

func namedToValues(args []driver.NamedValue) []driver.Value {
	out := make([]driver.Value, len(args))
	for i, a := range args {
		out[i] = a.Value
	}
	return out
}
