// Package pgbouncertest runs PgBouncer in transaction pooling mode in front
// of a test's PostgreSQL database, the way a deployment may put it in front
// of the service (docs/deploy.md 3), so tests see what the service sees there:
// consecutive transactions of one client connection land on different
// server connections, and session state does not follow the client.
package pgbouncertest

import (
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/lib/pq" // the readiness check connects through PgBouncer

	"github.com/truckjobs/jobboard/internal/logtest"
	"github.com/truckjobs/jobboard/internal/pglocal"
	"github.com/truckjobs/jobboard/internal/testfix"
)

// Options tune a PgBouncer.
type Options struct {
	// PoolSize is the number of server connections per database and user;
	// 0 means 4. Few server connections for many clients make PgBouncer
	// hand each transaction to whichever is free, as under real load.
	PoolSize int
	// Processes is how many PgBouncer processes listen on the port, each
	// with pools of its own (so_reuseport: the kernel spreads the
	// connections among them); 0 means one. PgBouncer uses one core, and
	// more processes are how a deployment gives it more.
	Processes int
}

// Bouncer is a running PgBouncer, stopped when the test ends.
type Bouncer struct {
	url  string
	port int
	log  *logtest.Buffer
	pids []int
}

// PIDs are the PgBouncer processes' ids.
func (b *Bouncer) PIDs() []int { return b.pids }

// URL is the database URL given to Start, reaching the same database
// through PgBouncer.
func (b *Bouncer) URL() string { return b.url }

// Port is the port PgBouncer listens on, on 127.0.0.1.
func (b *Bouncer) Port() int { return b.port }

// Log is what PgBouncer has logged so far.
func (b *Bouncer) Log() string { return b.log.String() }

// Binary finds the pgbouncer program: $JOBBOARD_PGBOUNCER, Debian's
// /usr/sbin/pgbouncer, or PATH.
func Binary() (string, error) {
	if p := os.Getenv("JOBBOARD_PGBOUNCER"); p != "" {
		return p, nil
	}
	if _, err := os.Stat("/usr/sbin/pgbouncer"); err == nil {
		return "/usr/sbin/pgbouncer", nil
	}
	if p, err := exec.LookPath("pgbouncer"); err == nil {
		return p, nil
	}
	return "", errors.New("no pgbouncer: run scripts/ensure-pgbouncer.sh (make pgbouncer), or set JOBBOARD_PGBOUNCER")
}

// Start runs PgBouncer in transaction pooling mode in front of the
// PostgreSQL server of databaseURL (a postgres:// URL on 127.0.0.1 whose
// user needs no password, as storetest's are), on a free port. It is stopped,
// and its folder removed, when the test ends.
func Start(t testing.TB, databaseURL string, opts Options) *Bouncer {
	t.Helper()
	b, stop, err := Run(testfix.ReachableDir(t, "jobboard-pgbouncer-"), databaseURL, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return b
}

// Run is Start outside a test (the bench): its files go in dir, which the
// user PostgreSQL runs as must reach, and stop ends it.
func Run(dir, databaseURL string, opts Options) (b *Bouncer, stop func(), err error) {
	bin, err := Binary()
	if err != nil {
		return nil, nil, err
	}
	backend, err := url.Parse(databaseURL)
	if err != nil || backend.User == nil {
		return nil, nil, errors.New("pgbouncertest: the database URL is not a postgres:// URL with a user")
	}
	// The port is free when chosen and may be taken before PgBouncer binds
	// it; another try picks another one.
	var lastErr error
	for range 3 {
		b, stop, err := launch(bin, dir, backend, opts)
		if err == nil {
			return b, stop, nil
		}
		lastErr = err
	}
	return nil, nil, fmt.Errorf("start pgbouncer: %w", lastErr)
}

// launch starts PgBouncer once and waits until it answers.
func launch(bin, dir string, backend *url.URL, opts Options) (*Bouncer, func(), error) {
	port, err := pglocal.FreePort()
	if err != nil {
		return nil, nil, err
	}
	conf, err := writeConfig(dir, backend, port, opts)
	if err != nil {
		return nil, nil, err
	}
	b := &Bouncer{port: port, log: &logtest.Buffer{}}
	through := *backend
	through.Host = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	b.url = through.String()

	var stops []func()
	stop := func() {
		for _, s := range stops {
			s()
		}
	}
	// exited closes when any of the processes ends: before it answers,
	// that is a failure to start.
	exited := make(chan struct{})
	var exitOnce sync.Once
	for range max(1, opts.Processes) {
		cmd := exec.Command(bin, conf)
		cmd.Stdout, cmd.Stderr = b.log, b.log
		// PgBouncer refuses to run as root; it then runs as the user PostgreSQL
		// runs as. It ends with the test process however that ends.
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
		if os.Geteuid() == 0 {
			cred, err := pglocal.Unprivileged()
			if err != nil {
				stop()
				return nil, nil, err
			}
			cmd.SysProcAttr.Credential = cred
		}
		if err := cmd.Start(); err != nil {
			stop()
			return nil, nil, err
		}
		b.pids = append(b.pids, cmd.Process.Pid)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done); exitOnce.Do(func() { close(exited) }) }()
		stops = append(stops, func() {
			_ = cmd.Process.Signal(syscall.SIGTERM) // immediate shutdown
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
		})
	}
	if err := waitReady(b.url, exited); err != nil {
		stop()
		return nil, nil, fmt.Errorf("%w\n%s", err, b.Log())
	}
	return b, stop, nil
}

// writeConfig writes the configuration and the user list into dir and
// returns the configuration's path. Nothing in them is secret: the test
// cluster trusts local connections.
func writeConfig(dir string, backend *url.URL, port int, opts Options) (string, error) {
	pool := opts.PoolSize
	if pool == 0 {
		pool = 4
	}
	host, backendPort, err := net.SplitHostPort(backend.Host)
	if err != nil {
		return "", fmt.Errorf("pgbouncertest: database URL host %q: %w", backend.Host, err)
	}
	users := filepath.Join(dir, "users.txt")
	if err := os.WriteFile(users, []byte(fmt.Sprintf("%q \"\"\n", backend.User.Username())), 0o644); err != nil {
		return "", err
	}
	conf := strings.Join([]string{
		"[databases]",
		fmt.Sprintf("* = host=%s port=%s", host, backendPort),
		"[pgbouncer]",
		"listen_addr = 127.0.0.1",
		"listen_port = " + strconv.Itoa(port),
		// No Unix socket: it would be left in /tmp.
		"unix_socket_dir =",
		"auth_type = trust",
		"auth_file = " + users,
		"pool_mode = transaction",
		"default_pool_size = " + strconv.Itoa(pool),
		"max_client_conn = 1000",
		// A client waiting this long for a server connection is a test
		// failure to see, not a hang.
		"query_wait_timeout = 30",
		"log_connections = 0",
		"log_disconnections = 0",
	}, "\n") + "\n"
	if opts.Processes > 1 {
		conf += "so_reuseport = 1\n"
	}
	path := filepath.Join(dir, "pgbouncer.ini")
	return path, os.WriteFile(path, []byte(conf), 0o644)
}

// waitReady waits until a query through PgBouncer is answered.
func waitReady(dbURL string, exited <-chan struct{}) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := query(dbURL)
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return errors.New("pgbouncer ended while starting")
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgbouncer not answering: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func query(dbURL string) error {
	db, err := sql.Open("postgres", dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	var one int
	return db.QueryRow(`SELECT 1`).Scan(&one)
}
