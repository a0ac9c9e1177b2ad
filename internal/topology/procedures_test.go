package topology

import (
	"context"
	"testing"
	"time"
)

// newStandby: after the primary was lost and the standby promoted, make
// topology-new-standby makes the old primary's cluster a standby of the
// new primary from a fresh copy, and replaces the replicas one at a time
// so that they read from it; under the load, no request fails, and the
// replicas then read from a standby in recovery whose slot is in use.
func newStandby(t *testing.T, top *Topology, l *load, recv *receiver) {
	var made NewStandbyMade
	var err error
	s := underLoad(t, l, 2*time.Minute, 5*time.Second, func() { made, err = top.NewStandby(context.Background()) })
	if err != nil {
		t.Fatal(err)
	}
	lost, twice := recv.awaitCallbacks(l.importIDs(), time.Minute)
	t.Logf("figures: new standby: %v; under the load: %v; %d imports, %d lost, %d called back twice",
		made, s, len(l.importIDs()), lost, twice)
	if s.failed > 0 || lost > 0 || twice > 0 {
		t.Errorf("want no failed request and no lost or doubled import")
	}
	checkReadsFromStandby(t)
}

// switchoverAndBack: make topology-switchover, twice, under the load and
// the marker's writes: the primary's role goes to the standby and comes
// back (the failback) to the cluster that had it. Every write the old primary acknowledged is on
// the new one (no write lost: the clean stop sent all of its WAL, and the
// standby is checked to have replayed it before it is promoted); the
// requests that fail are fast 503s between each stop and repoint; each
// old primary becomes the new standby, and the replicas read from it.
func switchoverAndBack(t *testing.T, top *Topology, l *load, acct account) {
	m := &marker{}
	mctx, stopMarker := context.WithCancel(context.Background())
	markerDone := make(chan struct{})
	go func() { m.run(mctx, l, acct); close(markerDone) }()
	var switches []SwitchedOver
	start, before := time.Now(), top.primary()
	s := underLoad(t, l, 4*time.Minute, 5*time.Second, func() {
		for range 2 {
			sw, err := top.Switchover(context.Background())
			if err != nil {
				t.Error(err)
				return
			}
			switches = append(switches, sw)
		}
	})
	stopMarker()
	<-markerDone
	acked := m.ackedBefore(time.Now())
	lost, err := missingMarkers(top.PrimaryNowURL(), acct, acked)
	if err != nil {
		t.Fatal(err)
	}
	kinds := failuresAfter(l.rec.snapshot(), start)
	t.Logf("figures: switchover and failback: %v; %d writes acknowledged, %d lost; under the load: %v; slowest failure %v, %d failures neither 503/Unavailable nor a list cut mid-answer",
		switches, len(acked), len(lost), s, kinds.slowest, kinds.other)
	if len(switches) != 2 || top.primary() != before {
		t.Errorf("after two switchovers the primary is %v, want %v again", top.primary(), before)
	}
	if len(lost) > 0 || kinds.other > 0 {
		t.Errorf("want no acknowledged write lost and only fast 503s")
	}
	checkReadsFromStandby(t)
}
