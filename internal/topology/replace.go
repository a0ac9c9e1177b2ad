package topology

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Replaced is what ReplaceReplica did.
type Replaced struct {
	// WasRunning: the replica ran and was drained first (SIGTERM); its
	// exit code and how long it took to drain and exit follow.
	WasRunning bool
	ExitCode   int
	Drained    time.Duration
	// Back is the time from the start to the replica's return in
	// HAProxy's both pools.
	Back time.Duration
}

func (r Replaced) String() string {
	back := fmt.Sprintf("back in HAProxy %.1f s after the start", r.Back.Seconds())
	if !r.WasRunning {
		return "created; " + back
	}
	return fmt.Sprintf("drained and exited %d in %.1f s, replaced; %s", r.ExitCode, r.Drained.Seconds(), back)
}

// ReplaceReplica creates replica i, or replaces it, with its whole
// configuration and the topology's image (ReplicaImage): a running replica is drained first (SIGTERM:
// it fails /readyz, HAProxy stops sending to it, it finishes what it was
// doing and exits), its container removed and run again, and the call
// returns once HAProxy counts every replica healthy. One replica after
// the other, it is the rolling restart, and with a new image the upgrade
// (docs/deploy.md). The log file stays (ReplicaLogFile).
func (t *Topology) ReplaceReplica(ctx context.Context, i int) (Replaced, error) {
	if i < 1 || i > Replicas {
		return Replaced{}, fmt.Errorf("replica %d: the topology has replicas 1 to %d", i, Replicas)
	}
	var r Replaced
	start := time.Now()
	running, err := t.replicaExistsRunning(i)
	if err != nil {
		return r, err
	}
	if running {
		if err := t.StopReplica(i); err != nil {
			return r, err
		}
		r.WasRunning, r.Drained = true, time.Since(start)
		code, err := t.ReplicaExitCode(i)
		if err != nil {
			return r, err
		}
		r.ExitCode = code
	}
	if err := t.StartReplica(i); err != nil {
		return r, err
	}
	if err := t.WaitReplicaReady(i, 2*time.Minute); err != nil {
		return r, err
	}
	if err := t.WaitHealthy(ctx, time.Minute); err != nil {
		return r, err
	}
	r.Back = time.Since(start)
	return r, nil
}

// backTimes says when each replaced replica was back in HAProxy.
func backTimes(replaced []Replaced) string {
	var back []string
	for i, r := range replaced {
		back = append(back, fmt.Sprintf("%s back in %.1f s", ReplicaName(i+1), r.Back.Seconds()))
	}
	return strings.Join(back, ", ")
}

// ReplaceAll replaces every replica, one after the other (ReplaceReplica):
// the rolling restart, which takes a changed configuration or image.
func (t *Topology) ReplaceAll(ctx context.Context) ([]Replaced, error) {
	var all []Replaced
	for i := 1; i <= Replicas; i++ {
		r, err := t.ReplaceReplica(ctx, i)
		if err != nil {
			return all, err
		}
		all = append(all, r)
	}
	return all, nil
}
