// Command topology starts, describes and stops the deployment topology of
// internal/topology on this machine, creates accounts on it and prints a
// trace its Jaeger holds: make topology-up, topology-status,
// topology-down, topology-account and topology-trace run it.
//
//	topology [-dir .topology] [-image localhost/jobboard:latest] [-containers-conf FILE] up|status|down|account NAME|trace TRACE_ID
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/truckjobs/jobboard/internal/topology"
)

func main() {
	dir := flag.String("dir", ".topology", "folder of the topology's clusters, configuration and logs")
	image := flag.String("image", "localhost/jobboard:latest", "the service's container image (make image)")
	conf := flag.String("containers-conf", "deploy/image/containers.conf", "podman's containers.conf (CONTAINERS_CONF)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: topology [flags] up|status|down|account NAME|trace TRACE_ID")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 && (flag.NArg() != 2 || (flag.Arg(0) != "trace" && flag.Arg(0) != "account")) {
		flag.Usage()
		os.Exit(2)
	}
	top, err := topology.New(*dir, *image, *conf)
	if err != nil {
		fail(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch flag.Arg(0) {
	case "up":
		if err := top.Up(ctx); err != nil {
			fail(fmt.Errorf("%w\n(make topology-down stops what did start)", err))
		}
		fmt.Println("the topology is up (make topology-status describes it, make topology-down stops it):")
		for _, l := range topology.Addresses() {
			fmt.Println("  " + l)
		}
	case "status":
		for _, l := range top.Status(ctx) {
			fmt.Println(l)
		}
	case "down":
		if err := top.Down(); err != nil {
			fail(err)
		}
		fmt.Println("the topology is down: nothing of it runs; its logs stay in " + top.Dir + " until the next make topology-up")
	case "account":
		out, err := top.CreateAccount(flag.Arg(1))
		if err != nil {
			fail(err)
		}
		os.Stdout.Write(out)
	case "trace":
		tr, err := topology.FindTrace(ctx, flag.Arg(1))
		if err != nil {
			fail(err)
		}
		if len(tr.Spans) == 0 {
			fail(fmt.Errorf("Jaeger (%s) has no trace %s: not sampled, not exported yet, or from before its last start", topology.JaegerURL(), flag.Arg(1)))
		}
		fmt.Printf("%12s  %-22s %s\n", "time", "replica", "span")
		for _, l := range tr.Tree() {
			fmt.Println(l)
		}
	default:
		flag.Usage()
		os.Exit(2)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "topology:", err)
	os.Exit(1)
}
