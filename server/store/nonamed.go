package store

import (
	"context"
	"database/sql/driver"
	"strings"
)

// pqConn is what a lib/pq connection offers database/sql.
type pqConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.QueryerContext
	driver.ExecerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
	driver.NamedValueChecker
}

// noNamedStatements is a connection that does not reach PostgreSQL
// directly. It prepares no named statement: a prepared statement on it
// runs each time as an unnamed one, parsed, bound and executed in one batch
// like any other query, which a pooler in transaction mode carries intact.
type noNamedStatements struct{ pqConn }

func (c noNamedStatements) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c noNamedStatements) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if isCopy(query) {
		// lib/pq runs COPY as a simple query, with no statement name.
		return c.pqConn.PrepareContext(ctx, query)
	}
	return unnamedStmt{conn: c.pqConn, query: query}, nil
}

func isCopy(query string) bool {
	q := strings.TrimSpace(query)
	return len(q) >= 4 && strings.EqualFold(q[:4], "COPY")
}

// unnamedStmt is a statement that is sent afresh on each use.
type unnamedStmt struct {
	conn  pqConn
	query string
}

func (s unnamedStmt) Close() error  { return nil }
func (s unnamedStmt) NumInput() int { return -1 }

func (s unnamedStmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), named(args))
}

func (s unnamedStmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), named(args))
}

func (s unnamedStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.conn.ExecContext(ctx, s.query, args)
}

func (s unnamedStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.conn.QueryContext(ctx, s.query, args)
}

func named(args []driver.Value) []driver.NamedValue {
	nv := make([]driver.NamedValue, len(args))
	for i, v := range args {
		nv[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return nv
}
