package topology

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// replicaEnv is replica i's configuration. The replicas sit behind
// HAProxy on this machine, so import callbacks may reach 127.0.0.1 (the
// tests' receivers), the proxy's X-Forwarded-For is believed, and the
// per-account rate limit is off (the load tests measure the service, not
// the limiter). An import is taken over 15 s after its replica died.
func (t *Topology) replicaEnv(i int) []string {
	env := []string{
		"DATABASE_URL=" + PoolURL(),
		"JOBBOARD_DATABASE_DIRECT_URL=" + SessionURL(),
		// The cluster that is not the primary now: a replica created after
		// a failover reads from the standby made since (NewStandby).
		"JOBBOARD_READ_DATABASE_URL=" + t.StandbyNowURL(),
		"JOBBOARD_HTTP_ADDR=" + addr(RESTPort+i),
		"JOBBOARD_GRPC_ADDR=" + addr(GRPCPort+i),
		"JOBBOARD_METRICS_ADDR=" + addr(metricsBase+i),
		"JOBBOARD_PUBLIC_URL=" + RESTURL(),
		"JOBBOARD_TRUSTED_PROXIES=" + Host,
		"JOBBOARD_CALLBACK_ALLOW_PRIVATE=true",
		"JOBBOARD_CALLBACK_RETRY_SCHEDULE=1s,2s,5s,10s,30s",
		"JOBBOARD_IMPORT_RESCUE_AFTER=15s",
		"JOBBOARD_RATE_LIMIT=0",
	}
	return append(env, replicaTracing(i)...)
}

// replicaTracing sends replica i's spans to the topology's Jaeger, named
// by replica (service.instance.id), so a trace shows which replica did
// what. One request in a hundred starts a trace, and a request whose
// traceparent says sampled continues its caller's: tracing every request
// of the load scenarios would cost the two cores more than the service
// does. Following the caller's flag lets a client ask for a trace (and
// decline one); the load balancer is the place to strip the header in
// front of untrusted callers. OTEL_* variables in the caller's
// environment come last, and so win: OTEL_TRACES_SAMPLER=always_on make
// topology-up traces everything.
func replicaTracing(i int) []string {
	env := []string{
		"OTEL_SERVICE_NAME=jobboard",
		"OTEL_RESOURCE_ATTRIBUTES=service.instance.id=" + ReplicaName(i),
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + JaegerOTLPURL(),
		"OTEL_TRACES_SAMPLER=parentbased_traceidratio",
		"OTEL_TRACES_SAMPLER_ARG=0.01",
	}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "OTEL_") {
			env = append(env, kv)
		}
	}
	return env
}

// podman runs podman with the runtime and settings this machine kind
// needs (docs/deploy.md: runc, no default ulimits).
func (t *Topology) podman(args ...string) *exec.Cmd {
	cmd := exec.Command("podman", append([]string{"--runtime", "runc"}, args...)...)
	cmd.Env = append(os.Environ(), "CONTAINERS_CONF="+t.ContainersConf)
	return cmd
}

// containerLabel marks the topology's containers, so Down finds them all.
const containerLabel = "jobboard-topology=1"

// logsDir holds the replicas' logs, a file each: outside the containers,
// so a log outlives the container that wrote it.
const logsDir = "logs"

// ReplicaLogFile is where replica i's output goes (podman's k8s-file
// driver: a time, the stream and a flag before each line). A container
// replaced by StartReplica appends to its predecessor's file.
func (t *Topology) ReplicaLogFile(i int) string { return t.path(logsDir, ReplicaName(i)+".log") }

// imageFile records the image the replicas run: the one Up started them
// with, then the one the last Upgrade moved them to.
const imageFile = "image"

// ReplicaImage is the image the replicas run (imageFile), t.Image before
// Up recorded one.
func (t *Topology) ReplicaImage() string {
	if b, err := os.ReadFile(t.path(imageFile)); err == nil && strings.TrimSpace(string(b)) != "" {
		return strings.TrimSpace(string(b))
	}
	return t.Image
}

func (t *Topology) setReplicaImage(image string) error {
	return os.WriteFile(t.path(imageFile), []byte(image+"\n"), 0o644)
}

// StartReplica starts replica i's container, with its whole
// configuration and the topology's image (ReplicaImage), replacing a
// stopped one, and its supervisor. The host's network: the replicas
// listen on 127.0.0.1 like the rest.
func (t *Topology) StartReplica(i int) error {
	if err := os.MkdirAll(t.path(logsDir), 0o755); err != nil {
		return err
	}
	if err := endSupervisor(t.path(replicasDir), ReplicaName(i)); err != nil {
		return err
	}
	_ = run(t.podman("rm", "--force", "--ignore", ReplicaName(i)))
	args := []string{"run", "--detach", "--name", ReplicaName(i), "--label", containerLabel,
		"--network", "host", "--stop-timeout", "40",
		"--log-driver", "k8s-file", "--log-opt", "path=" + t.ReplicaLogFile(i)}
	for _, e := range t.replicaEnv(i) {
		args = append(args, "--env", e)
	}
	// The tokens by name alone, their values in podman's environment: an
	// argument is readable by every user in /proc while podman runs.
	tokens := t.tokenEnv()
	for _, e := range tokens {
		name, _, _ := strings.Cut(e, "=")
		args = append(args, "--env", name)
	}
	cmd := t.podman(append(args, t.ReplicaImage())...)
	cmd.Env = append(cmd.Env, tokens...)
	if err := run(cmd); err != nil {
		return err
	}
	return t.superviseReplica(i)
}

// replicasDir holds the replicas' supervisors' files.
const replicasDir = "replicas"

// replicaLoop is a replica's supervisor (supervise.go), the part of
// systemd's Restart=on-failure for a podman container: it waits until the
// container exits, and unless NAME.stopped says the exit was asked for,
// or the container exited 0 (it was told to stop), starts it again a
// second later. Podman's own restart policy is not used: Debian 12's
// podman (4.3) may start a container with one again after a podman stop
// (podman#17069, fixed in 4.4), which would undo a drain. podman wait runs
// in the background, so that a stop's SIGTERM ends the loop at once; one
// that lands during a podman start waits for it (the trap runs after it),
// so the stop that follows finds the container started, not starting.
const replicaLoop = `name=$1 dir=$2; shift 2
trap 'kill $! 2>/dev/null; rm -f "$dir/$name.supervisor.pid"; exit 0' TERM
echo $$ >"$dir/$name.supervisor.tmp" && mv "$dir/$name.supervisor.tmp" "$dir/$name.supervisor.pid"
echo "$(date +%s%N) started" >>"$dir/$name.supervisor.log"
while [ ! -e "$dir/$name.stopped" ]; do
  "$@" wait --interval 500ms "$name" >"$dir/$name.exit" 2>>"$dir/$name.supervisor.log" &
  if ! wait $!; then
    echo "$(date +%s%N) gave up: podman wait failed" >>"$dir/$name.supervisor.log"
    break
  fi
  code=$(cat "$dir/$name.exit")
  [ -e "$dir/$name.stopped" ] || [ "$code" = 0 ] && break
  echo "$(date +%s%N) exited $code" >>"$dir/$name.supervisor.log"
  sleep 1
  [ -e "$dir/$name.stopped" ] && break
  "$@" start "$name" >/dev/null 2>&1 && echo "$(date +%s%N) started" >>"$dir/$name.supervisor.log"
done
rm -f "$dir/$name.supervisor.pid"`

// superviseReplica starts replica i's supervisor.
func (t *Topology) superviseReplica(i int) error {
	dir := t.path(replicasDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(dir, ReplicaName(i)+".stopped")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	podman := t.podman()
	return detach(replicaLoop, []string{"CONTAINERS_CONF=" + t.ContainersConf}, false,
		append([]string{ReplicaName(i), dir}, podman.Args...)...)
}

// StopReplica ends replica i's supervisor, then sends SIGTERM to the
// replica and waits until it has drained and exited (the service's grace
// is 30 s).
func (t *Topology) StopReplica(i int) error {
	if err := endSupervisor(t.path(replicasDir), ReplicaName(i)); err != nil {
		return err
	}
	return run(t.podman("stop", "--time", "40", ReplicaName(i)))
}

// RestartReplica starts replica i's stopped container again, and its
// supervisor.
func (t *Topology) RestartReplica(i int) error {
	if err := endSupervisor(t.path(replicasDir), ReplicaName(i)); err != nil {
		return err
	}
	if err := run(t.podman("start", ReplicaName(i))); err != nil {
		return err
	}
	return t.superviseReplica(i)
}

// LoseReplicaHost ends replica i's supervisor with SIGKILL, as the loss of
// the replica's host would, so nothing starts the replica again when it
// is killed.
func (t *Topology) LoseReplicaHost(i int) error {
	pid, err := livePid(t.path(replicasDir, ReplicaName(i)+".supervisor.pid"))
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// ReplicaCrashes lists replica i's exits that its supervisor did not
// expect, and when it started the replica again.
func (t *Topology) ReplicaCrashes(i int) ([]Crash, error) {
	return crashes(t.path(replicasDir), ReplicaName(i))
}

// KillReplica ends replica i with SIGKILL, as a crash would, and returns
// the time just before the signal was sent. The signal goes to the
// container's process itself rather than through podman kill, which takes
// a few hundred milliseconds to start: the kill lands when the caller says.
func (t *Topology) KillReplica(i int) (sent time.Time, err error) {
	out, err := t.podman("inspect", "--format", "{{.State.Pid}}", ReplicaName(i)).Output()
	if err != nil {
		return sent, fmt.Errorf("podman inspect %s: %w", ReplicaName(i), err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil || pid <= 0 {
		return sent, fmt.Errorf("%s is not running (pid %q)", ReplicaName(i), out)
	}
	sent = time.Now()
	return sent, syscall.Kill(pid, syscall.SIGKILL)
}

// CreateAccount runs the image's jobboard accounts create in a container
// of its own, against the primary through PgBouncer's session pool (as
// the replicas' migrations do), and returns what it prints: the account's
// id, name, API key and webhook secret, as JSON.
func (t *Topology) CreateAccount(name string) ([]byte, error) {
	cmd := t.podman(accountArgs(t.ReplicaImage(), name)...)
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return nil, fmt.Errorf("accounts create: %w: %s", err, exit.Stderr)
		}
		return nil, fmt.Errorf("accounts create: %w", err)
	}
	return out, nil
}

// accountArgs are podman's arguments that create an account named name on
// the topology with image's jobboard (docs/deploy.md shows them).
func accountArgs(image, name string) []string {
	return []string{"run", "--rm", "--label", containerLabel, "--network", "host", "--env", "DATABASE_URL=" + SessionURL(),
		"--entrypoint", "/usr/local/bin/jobboard", image, "accounts", "create", "--name", name}
}

// ReplicaExitCode is the exit code of replica i's stopped container.
func (t *Topology) ReplicaExitCode(i int) (int, error) {
	out, err := t.podman("inspect", "--format", "{{.State.ExitCode}}", ReplicaName(i)).Output()
	if err != nil {
		return 0, fmt.Errorf("podman inspect %s: %w", ReplicaName(i), err)
	}
	return strconv.Atoi(strings.TrimSpace(string(out)))
}

// replicaExistsRunning says whether replica i's container runs: false
// when there is none, an error when podman cannot say (so a live replica
// is never taken for a missing one and removed undrained).
func (t *Topology) replicaExistsRunning(i int) (bool, error) {
	err := run(t.podman("container", "exists", ReplicaName(i)))
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("podman container exists %s: %w", ReplicaName(i), err)
	}
	return t.replicaRunning(i)
}

// replicaRunning says whether replica i's container is running.
func (t *Topology) replicaRunning(i int) (bool, error) {
	out, err := t.podman("inspect", "--format", "{{.State.Running}}", ReplicaName(i)).Output()
	if err != nil {
		return false, fmt.Errorf("podman inspect %s: %w", ReplicaName(i), err)
	}
	return strings.TrimSpace(string(out)) == "true", nil
}

// ReplicaLogs is replica i's output so far.
func (t *Topology) ReplicaLogs(i int) string {
	out, _ := t.podman("logs", ReplicaName(i)).CombinedOutput()
	return string(out)
}

// removeReplicas stops and removes every container of the topology, its
// supervisor ended first.
func (t *Topology) removeReplicas() error {
	for i := 1; i <= Replicas; i++ {
		if err := endSupervisor(t.path(replicasDir), ReplicaName(i)); err != nil {
			return err
		}
	}
	out, err := t.podman("ps", "--all", "--quiet", "--filter", "label="+containerLabel).Output()
	if err != nil {
		return fmt.Errorf("podman ps: %w", err)
	}
	ids := strings.Fields(string(out))
	if len(ids) == 0 {
		return nil
	}
	return run(t.podman(append([]string{"rm", "--force", "--time", "40"}, ids...)...))
}
