// Package pglocal runs a private PostgreSQL server from the machine's
// PostgreSQL binaries, for development and tests. It listens on 127.0.0.1
// only and trusts local connections; it is never used in production.
package pglocal

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/lib/pq"
)

// Options tune a cluster.
type Options struct {
	// Port to listen on; 0 picks a free one.
	Port int
	// Durable keeps fsync on. Tests turn it off: their data is thrown away.
	Durable bool
	// MaxConnections is PostgreSQL's max_connections; 0 means 200.
	MaxConnections int
}

// Cluster is a running server.
type Cluster struct {
	dir  string
	bin  string
	port int
	cred *syscall.Credential
}

// User is the superuser the cluster is created with.
const User = "jobboard"

// BinDir finds the PostgreSQL server binaries: $PG_BIN, else the newest
// /usr/lib/postgresql/*/bin (Debian keeps initdb off PATH), else PATH.
func BinDir() (string, error) {
	if d := os.Getenv("PG_BIN"); d != "" {
		return d, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("PostgreSQL server binaries not found: install them (Debian: apt-get install postgresql) or set PG_BIN")
}

func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// Start initialises dir when it holds no cluster yet and starts the server.
func Start(ctx context.Context, dir string, opts Options) (*Cluster, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, bin: bin, port: opts.Port}
	// PostgreSQL refuses to run as root, so root runs it as an unprivileged user.
	if os.Geteuid() == 0 {
		if c.cred, err = unprivileged(); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := c.chown(dir); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(c.dataDir(), "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		if err := c.run(ctx, "initdb", "-D", c.dataDir(), "-U", User, "--auth=trust",
			"--encoding=UTF8", "--locale=C", "--no-sync"); err != nil {
			return nil, fmt.Errorf("initdb: %w", err)
		}
	}
	// A server left running in dir by a process that was killed is stopped
	// first, so a restart always gets the options asked for.
	if c.run(ctx, "pg_ctl", "-D", c.dataDir(), "status") == nil {
		_ = c.Stop()
	}
	if c.port == 0 {
		if c.port, err = freePort(); err != nil {
			return nil, err
		}
	}
	maxConns := opts.MaxConnections
	if maxConns == 0 {
		maxConns = 200
	}
	settings := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c max_connections=%d", c.port, dir, maxConns)
	if !opts.Durable {
		settings += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
	}
	if err := c.run(ctx, "pg_ctl", "-D", c.dataDir(), "-l", filepath.Join(dir, "postgres.log"),
		"-o", settings, "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "postgres.log"))
		return nil, fmt.Errorf("start postgres: %w\n%s", err, tail(log, 2000))
	}
	return c, nil
}

// URL is a connection string for database name as the superuser.
func (c *Cluster) URL(name string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", User, c.port, name)
}

// Port is the port the server listens on.
func (c *Cluster) Port() int { return c.port }

// Stop shuts the server down, ending open connections.
func (c *Cluster) Stop() error {
	return c.run(context.Background(), "pg_ctl", "-D", c.dataDir(), "-m", "fast", "-w", "stop")
}

func (c *Cluster) dataDir() string { return filepath.Join(c.dir, "data") }

func (c *Cluster) run(ctx context.Context, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, name), args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Dir = c.dir
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w: %s", name, err, strings.TrimSpace(out.String()))
	}
	return nil
}

// chown hands dir to the user the server runs as.
func (c *Cluster) chown(dir string) error {
	if c.cred == nil {
		return nil
	}
	return os.Chown(dir, int(c.cred.Uid), int(c.cred.Gid))
}

func unprivileged() (*syscall.Credential, error) {
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, errors.New("running as root needs a postgres or nobody user to run PostgreSQL as")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// CreateDatabase creates the database name unless it exists already.
func (c *Cluster) CreateDatabase(ctx context.Context, name string) error {
	db, err := sql.Open("postgres", c.URL("postgres"))
	if err != nil {
		return err
	}
	defer db.Close()
	var exists bool
	if err := db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return fmt.Errorf("look for database %s: %w", name, err)
	}
	if exists {
		return nil
	}
	if _, err := db.ExecContext(ctx, `CREATE DATABASE `+pq.QuoteIdentifier(name)); err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return nil
}
