// Package topology runs the service the way it is deployed, on one machine:
// a PostgreSQL primary and a streaming hot standby, PgBouncer in transaction
// pooling mode, three replicas of the container image, and HAProxy in front.
// Everything listens on 127.0.0.1 and lives under one folder; the daemons
// outlive the command that starts them, and Down stops them all.
// docs/deploy.md draws the picture and lists the settings.
package topology

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// The topology's fixed addresses, all on 127.0.0.1.
const (
	Host          = "127.0.0.1"
	PrimaryPort   = 15432 // the first cluster: the primary, until a failover or switchover
	StandbyPort   = 15433 // the second: its standby, until then
	PgBouncerPort = 16432
	RESTPort      = 18080 // HAProxy: REST over HTTP/1.1 and h2c
	GRPCPort      = 19090 // HAProxy: gRPC over h2c
	StatsPort     = 18404 // HAProxy's stats page
	Replicas      = 3
	// Replica i (1-based) serves REST on RESTPort+i, gRPC on GRPCPort+i and
	// metrics on metricsBase+i.
	metricsBase = 19460
)

// Database is the service's database name; superuser the role that owns it
// (local connections are trusted, as in development).
const (
	Database  = "jobboard"
	superuser = "jobboard"
	// sessionDatabase is PgBouncer's session-mode alias of Database, which
	// JOBBOARD_DATABASE_DIRECT_URL uses: LISTEN and advisory locks need a
	// session, and going through PgBouncer lets a failover repoint it too.
	sessionDatabase = "jobboard_session"
)

// Topology is one topology's folder and how to run its parts.
type Topology struct {
	// Dir holds everything: clusters, configuration, logs and pid files.
	Dir string
	// Image is the service's container image (make image).
	Image string
	// ContainersConf is podman's containers.conf (CONTAINERS_CONF).
	ContainersConf string
	// PGBin holds the PostgreSQL 15 server binaries.
	PGBin string
	// Log receives progress lines.
	Log func(format string, args ...any)
}

// New is the topology in dir, with podman's settings in containersConf.
func New(dir, image, containersConf string) (*Topology, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	conf, err := filepath.Abs(containersConf)
	if err != nil {
		return nil, err
	}
	bin := os.Getenv("PG_BIN")
	if bin == "" {
		bin = "/usr/lib/postgresql/15/bin"
	}
	return &Topology{Dir: abs, Image: image, ContainersConf: conf, PGBin: bin,
		Log: func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }}, nil
}

func (t *Topology) path(parts ...string) string {
	return filepath.Join(append([]string{t.Dir}, parts...)...)
}

// URLs of the databases as the service reaches them.
func url(port int, db string) string {
	return fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", superuser, Host, port, db)
}

// PoolURL is DATABASE_URL: PgBouncer in transaction mode.
func PoolURL() string { return url(PgBouncerPort, Database) }

// SessionURL is JOBBOARD_DATABASE_DIRECT_URL: PgBouncer's session pool.
func SessionURL() string { return url(PgBouncerPort, sessionDatabase) }

// PrimaryURL and StandbyURL reach the clusters themselves: those on
// PrimaryPort and StandbyPort, the primary and its standby from Up until a
// failover or a switchover turns them around (Topology.PrimaryNowURL).
func PrimaryURL() string { return url(PrimaryPort, Database) }
func StandbyURL() string { return url(StandbyPort, Database) }

// RESTURL and GRPCAddr are HAProxy's front doors.
func RESTURL() string  { return fmt.Sprintf("http://%s:%d", Host, RESTPort) }
func GRPCAddr() string { return addr(GRPCPort) }

// ReplicaRESTURL, ReplicaGRPCAddr and ReplicaMetricsURL reach replica i
// (1-based) without HAProxy.
func ReplicaRESTURL(i int) string    { return fmt.Sprintf("http://%s:%d", Host, RESTPort+i) }
func ReplicaGRPCAddr(i int) string   { return addr(GRPCPort + i) }
func ReplicaMetricsURL(i int) string { return fmt.Sprintf("http://%s:%d/metrics", Host, metricsBase+i) }

// StatsURL is HAProxy's stats page.
func StatsURL() string { return fmt.Sprintf("http://%s:%d/", Host, StatsPort) }

func addr(port int) string { return Host + ":" + strconv.Itoa(port) }

// ReplicaName is replica i's container name and HAProxy server name.
func ReplicaName(i int) string { return "jobboard-topology-" + strconv.Itoa(i) }

// run runs a command to its end, its output in the error when it fails.
func run(cmd *exec.Cmd) error {
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", filepath.Base(cmd.Path), err, out)
	}
	return nil
}
