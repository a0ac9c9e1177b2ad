// Command topology starts, describes and stops the deployment topology of
// internal/topology on this machine, and runs its procedures: a replica
// created or replaced, an upgrade to -image, a failover, a new standby, a
// switchover, a backup,
// a point-in-time restore, the internal token rotated, the logs rotated,
// an account created, a trace printed. The make targets
// topology-* run it (docs/operations.md, "Procedures").
//
//	topology [-dir .topology] [-image localhost/jobboard:latest] [-containers-conf FILE] COMMAND
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/truckjobs/jobboard/internal/topology"
)

// command is one of the commands: the name of its argument, if it takes
// one, and what it does.
type command struct {
	arg string
	run func(ctx context.Context, top *topology.Topology, arg string) error
}

var commands = map[string]command{
	"up":      {run: up},
	"status":  {run: status},
	"down":    {run: down},
	"replica": {arg: "N", run: replica},
	"failover": {run: func(ctx context.Context, top *topology.Topology, _ string) error {
		return report(top.Failover(ctx))
	}},
	"new-standby": {run: func(ctx context.Context, top *topology.Topology, _ string) error {
		return report(top.NewStandby(ctx))
	}},
	"switchover": {run: func(ctx context.Context, top *topology.Topology, _ string) error {
		return report(top.Switchover(ctx))
	}},
	"rotate-internal-token": {run: func(ctx context.Context, top *topology.Topology, _ string) error {
		return report(top.RotateInternalToken(ctx))
	}},
	"retire-internal-token": {run: func(ctx context.Context, top *topology.Topology, _ string) error {
		return report(top.RetireInternalToken(ctx))
	}},
	"upgrade": {run: func(ctx context.Context, top *topology.Topology, _ string) error {
		return report(top.Upgrade(ctx, top.Image))
	}},
	"backup": {arg: "full|incremental", run: func(ctx context.Context, top *topology.Topology, kind string) error {
		if kind != "full" && kind != "incremental" {
			return fmt.Errorf("backup %q: want full or incremental", kind)
		}
		return report(top.Backup(ctx, kind == "full"))
	}},
	"restore": {arg: "TARGET_TIME", run: func(ctx context.Context, top *topology.Topology, target string) error {
		return report(top.RestoreTo(ctx, target))
	}},
	"rotate-logs": {run: func(_ context.Context, top *topology.Topology, _ string) error {
		return top.RotateLogs(false)
	}},
	"account": {arg: "NAME", run: account},
	"trace":   {arg: "TRACE_ID", run: trace},
}

func main() {
	dir := flag.String("dir", ".topology", "folder of the topology's clusters, configuration and logs")
	image := flag.String("image", "localhost/jobboard:latest", "the service's container image (make image)")
	conf := flag.String("containers-conf", "deploy/image/containers.conf", "podman's containers.conf (CONTAINERS_CONF)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: topology [flags] up|status|down|replica N|failover|new-standby|switchover|upgrade|backup full|incremental|restore TARGET_TIME|rotate-internal-token|retire-internal-token|rotate-logs|account NAME|trace TRACE_ID")
		flag.PrintDefaults()
	}
	flag.Parse()
	cmd, ok := commands[flag.Arg(0)]
	args := 1
	if cmd.arg != "" {
		args = 2
	}
	if !ok || flag.NArg() != args {
		flag.Usage()
		os.Exit(2)
	}
	top, err := topology.New(*dir, *image, *conf)
	if err != nil {
		fail(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := cmd.run(ctx, top, flag.Arg(1)); err != nil {
		fail(err)
	}
}

func up(ctx context.Context, top *topology.Topology, _ string) error {
	if err := top.Up(ctx); err != nil {
		return fmt.Errorf("%w\n(make topology-down stops what did start)", err)
	}
	fmt.Println("the topology is up (make topology-status describes it, make topology-down stops it):")
	for _, l := range topology.Addresses() {
		fmt.Println("  " + l)
	}
	return nil
}

func status(ctx context.Context, top *topology.Topology, _ string) error {
	for _, l := range top.Status(ctx) {
		fmt.Println(l)
	}
	return nil
}

func down(_ context.Context, top *topology.Topology, _ string) error {
	if err := top.Down(); err != nil {
		return err
	}
	fmt.Println("the topology is down: nothing of it runs; its logs stay in " + top.Dir + " until the next make topology-up")
	return nil
}

// replica creates or replaces replica N with the image of -image.
func replica(ctx context.Context, top *topology.Topology, arg string) error {
	i, err := strconv.Atoi(arg)
	if err != nil {
		return fmt.Errorf("replica %q: want its number, 1 to %d", arg, topology.Replicas)
	}
	r, err := top.ReplaceReplica(ctx, i)
	if err != nil {
		return err
	}
	fmt.Printf("%s (%s): %v\n", topology.ReplicaName(i), top.ReplicaImage(), r)
	return nil
}

// report prints what a procedure did, or fails with what it did up to its
// error.
func report[T fmt.Stringer](did T, err error) error {
	if err != nil {
		return fmt.Errorf("%w\n(done so far: %v)", err, did)
	}
	fmt.Println(did)
	return nil
}

func account(_ context.Context, top *topology.Topology, name string) error {
	out, err := top.CreateAccount(name)
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(out)
	return err
}

func trace(ctx context.Context, _ *topology.Topology, id string) error {
	tr, err := topology.FindTrace(ctx, id)
	if err != nil {
		return err
	}
	if len(tr.Spans) == 0 {
		return fmt.Errorf("jaeger (%s) has no trace %s: not sampled, not exported yet, or from before its last start", topology.JaegerURL(), id)
	}
	fmt.Printf("%12s  %-22s %s\n", "time", "replica", "span")
	for _, l := range tr.Tree() {
		fmt.Println(l)
	}
	return nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "topology:", err)
	os.Exit(1)
}
