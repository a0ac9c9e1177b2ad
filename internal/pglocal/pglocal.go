// Package pglocal runs a private PostgreSQL server from the machine's
// PostgreSQL binaries, for development and tests. It listens on 127.0.0.1
// only and trusts local connections; it is never used in production.
//
// One process at a time owns a cluster folder (a lock in the folder says
// which), and the server it starts ends with it, however it ends.
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
	"sync"
	"syscall"
	"time"

	"github.com/lib/pq"
)

// Options tune a cluster.
type Options struct {
	// Port to listen on; 0 picks the one the folder's server used last
	// time when it is free, else any free one.
	Port int
	// Durable keeps fsync on. Tests turn it off: their data is thrown away.
	Durable bool
	// MaxConnections is PostgreSQL's max_connections; 0 means 200.
	MaxConnections int
}

// Cluster is a running server, owned by this process: it holds the
// folder's lock, and the server ends when the process does.
type Cluster struct {
	dir  string
	bin  string
	port int
	cred *syscall.Credential

	lock     *Lock
	server   *server
	stopOnce sync.Once
	stopErr  error
}

// superuser is the superuser role the cluster is created with.
const superuser = "jobboard"

// TestServerEnv names the variable holding the URL of a server the tests
// create their databases in: the test runner starts one cluster for a whole
// run and sets it.
const TestServerEnv = "JOBBOARD_TEST_DATABASE_URL"

// portFile keeps the port in the cluster folder, so that a restart
// listens where the last run did and URLs printed then still work.
const portFile = "port"

// startTimeout bounds how long a server may take to accept connections.
const startTimeout = 60 * time.Second

// binDir finds the PostgreSQL server binaries: $PG_BIN, else the newest
// /usr/lib/postgresql/*/bin (Debian keeps initdb off PATH), else PATH.
func binDir() (string, error) {
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

// Binary is the path of one of the PostgreSQL programs (psql, pg_dump) of
// the installation the clusters run on.
func Binary(name string) (string, error) {
	dir, err := binDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, name), nil
}

func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// newCluster finds the binaries and the user to run them as for dir.
func newCluster(dir string, port int) (*Cluster, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, bin: bin, port: port}
	// PostgreSQL refuses to run as root, so root runs it as an unprivileged user.
	if os.Geteuid() == 0 {
		if c.cred, err = Unprivileged(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Start initialises dir when it holds no cluster yet and starts the server
// as a child of this process. It refuses with an *InUseError, touching
// nothing, while another process owns dir.
func Start(ctx context.Context, dir string, opts Options) (*Cluster, error) {
	if err := checkReachable(dir); err != nil {
		return nil, err
	}
	lock, err := Acquire(dir)
	if err != nil {
		return nil, err
	}
	c, err := newCluster(lock.dir, opts.Port)
	if err != nil {
		lock.Release()
		return nil, err
	}
	c.lock = lock
	if err := c.start(ctx, opts); err != nil {
		lock.Release()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context, opts Options) error {
	if err := c.chown(c.dir); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(c.dataDir(), "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		if err := c.initdb(ctx); err != nil {
			return err
		}
	}
	// The lock is ours, so a server still running here has lost its owner:
	// it is stopped, and this start gets the options asked for.
	if err := c.lock.StopLeftover(ctx); err != nil {
		return fmt.Errorf("stop the server left running in %s: %w", c.dir, err)
	}
	if c.port == 0 {
		var err error
		if c.port, err = c.choosePort(); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(c.dir, portFile), []byte(strconv.Itoa(c.port)+"\n"), 0o644); err != nil {
			return err
		}
	}
	logPath := filepath.Join(c.dir, "postgres.log")
	logFile, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close() // the server has its own copy
	if c.server, err = c.launch(c.settings(opts), logFile); err != nil {
		return err
	}
	if err := c.waitReady(ctx, c.server, startTimeout); err != nil {
		_ = c.server.stop(10 * time.Second)
		log, _ := os.ReadFile(logPath)
		return fmt.Errorf("start postgres: %w\n%s", err, tail(log, 2000))
	}
	return nil
}

// initdb makes the cluster in a folder of its own and moves it into place
// when it is complete: an initdb stopped part-way (Ctrl-C during the first
// make run) leaves nothing the next start would take for a cluster.
func (c *Cluster) initdb(ctx context.Context) error {
	building := c.dataDir() + ".init"
	if err := os.RemoveAll(building); err != nil {
		return err
	}
	if err := c.run(ctx, "initdb", "-D", building, "-U", superuser, "--auth=trust",
		"--encoding=UTF8", "--locale=C", "--no-sync"); err != nil {
		return fmt.Errorf("initdb: %w", err)
	}
	// An empty data folder (made by hand, say) gives way; any other is an
	// error of Rename, and kept.
	_ = os.Remove(c.dataDir())
	return os.Rename(building, c.dataDir())
}

// settings are the server's command-line options.
func (c *Cluster) settings(opts Options) []string {
	maxConns := opts.MaxConnections
	if maxConns == 0 {
		maxConns = 200
	}
	// TCP on loopback only. No Unix socket: nothing here uses one, and its
	// path inside a deep checkout would pass the 107-byte limit.
	s := []string{"-p", strconv.Itoa(c.port), "-c", "unix_socket_directories=", "-c", "listen_addresses=127.0.0.1",
		"-c", "max_connections=" + strconv.Itoa(maxConns)}
	if !opts.Durable {
		s = append(s, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	return s
}

// choosePort is the port the folder's server used last time when it is
// still free, else a free one.
func (c *Cluster) choosePort() (int, error) {
	if b, err := os.ReadFile(filepath.Join(c.dir, portFile)); err == nil {
		if port, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && port > 0 && portFree(port) {
			return port, nil
		}
	}
	return FreePort()
}

// URL is a connection string for database name as the superuser.
func (c *Cluster) URL(name string) string { return urlFor(c.port, name) }

func urlFor(port int, name string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", superuser, port, name)
}

// Port is the port the server listens on.
func (c *Cluster) Port() int { return c.port }

// Stop shuts the server down, ending open connections, and gives the
// folder up. Calls after the first return the first one's result.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() {
		c.stopErr = c.server.stop(startTimeout)
		c.lock.Release()
	})
	return c.stopErr
}

// ErrNotRunning says no server is running and ready in a cluster folder.
var ErrNotRunning = errors.New("no PostgreSQL server is running there")

// RunningURL is the URL of database name on the server running in the
// cluster folder dir, whoever started it, found from the postmaster.pid
// PostgreSQL keeps there; ErrNotRunning when none is running and ready.
func RunningURL(dir, name string) (string, error) {
	pm, err := readPostmasterPID(filepath.Join(dir, "data"))
	if errors.Is(err, os.ErrNotExist) {
		return "", ErrNotRunning
	}
	if err != nil {
		return "", err
	}
	// A server killed outright leaves the file behind: its process must be
	// alive and its port answering.
	if !pm.ready || !alive(pm.pid) || !answers(pm.port) {
		return "", ErrNotRunning
	}
	return urlFor(pm.port, name), nil
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

// Unprivileged is the user a server that refuses root (PostgreSQL,
// PgBouncer) runs as when this process is root: postgres, else nobody.
func Unprivileged() (*syscall.Credential, error) {
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, errors.New("running as root needs a postgres or nobody user to run the server as")
}

// portFree says whether nothing listens on port on 127.0.0.1.
func portFree(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// answers says whether something accepts connections on port on 127.0.0.1.
func answers(port int) bool {
	conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// alive says whether process pid exists (signal 0 checks without sending).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// splitLines splits text into lines without their surrounding spaces.
func splitLines(text string) []string {
	lines := strings.Split(text, "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return lines
}

// FreePort is a port nothing listens on on 127.0.0.1 now; something may
// take it before the caller binds it.
func FreePort() (int, error) {
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
