package topology

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
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
	nothingLost(t, top, l, recv, "new standby", made, s)
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

// backupAndRestore: make topology-backup takes a full backup; jobs are
// posted, the primary's clock read as the target, more jobs posted, the
// WAL archived; make topology-restore restores to the target into a
// cluster of its own, which holds the jobs posted before the target and
// none of those after, while the primary holds both.
func backupAndRestore(t *testing.T, top *Topology, acct account) {
	ctx := context.Background()
	backup, err := top.Backup(ctx, true)
	if err != nil {
		t.Fatalf("backup: %v", err)
	}
	// pgBackRest records a backup's stop time in whole seconds, and
	// restores to a time only from a backup that stopped before it.
	time.Sleep(1500 * time.Millisecond)
	const each = 20
	for i := range each {
		postJob(t, acct, fmt.Sprintf("PITRBEFORE%d", i))
	}
	var target string
	if err := queryOne(ctx, top.PrimaryNowURL(), `SELECT clock_timestamp()::text`, &target); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	for i := range each {
		postJob(t, acct, fmt.Sprintf("PITRAFTER%d", i))
	}
	if err := top.CheckArchive(ctx); err != nil {
		t.Fatalf("archive check: %v", err)
	}
	restored, err := top.RestoreTo(ctx, target)
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	defer func() {
		if err := top.stopCluster(restoreCluster, false); err != nil {
			t.Error(err)
		}
	}()
	count := func(dsn, pattern string) int {
		var n int
		if err := queryOne(ctx, dsn, `SELECT count(*) FROM jobs WHERE account_id = $1 AND reference_number LIKE $2`, &n, acct.ID, pattern); err != nil {
			t.Fatal(err)
		}
		return n
	}
	got := map[string]int{
		"restored before": count(restored.URL, "PITRBEFORE%"), "restored after": count(restored.URL, "PITRAFTER%"),
		"primary before": count(top.PrimaryNowURL(), "PITRBEFORE%"), "primary after": count(top.PrimaryNowURL(), "PITRAFTER%"),
	}
	t.Logf("figures: backup and point-in-time restore: %v; %v; jobs posted before the target and after it: %v", backup, restored, got)
	want := map[string]int{"restored before": each, "restored after": 0, "primary before": each, "primary after": each}
	if !maps.Equal(got, want) {
		t.Errorf("jobs %v, want %v", got, want)
	}
}

// postJob posts one job through HAProxy.
func postJob(t *testing.T, acct account, ref string) {
	t.Helper()
	body := `[{"referenceNumber":"` + ref + `","title":"Backed up","state":"OH","driverType":"Company Driver","freightType":"Dry Van","description":"<p>PITR.</p>"}]`
	req, err := http.NewRequest(http.MethodPost, RESTURL()+"/api/v2.0/jobs.json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(acct.APIKey, "")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 || !strings.Contains(string(answer), `"added":1`) {
		t.Fatalf("post %s: %s %s", ref, resp.Status, answer)
	}
}

// internalTokenRotated: make topology-rotate-internal-token, then make
// topology-retire-internal-token, under the load: job search answers the
// old token and the new one on every replica during the rotation, the new
// one alone after it; the rolling replacements fail no request of the
// load.
func internalTokenRotated(t *testing.T, top *Topology, l *load) {
	// answers calls job search with token on each replica (its own gRPC
	// port, not through HAProxy) and counts the codes.
	answers := func(token string) map[codes.Code]int {
		seen := map[codes.Code]int{}
		for i := 1; i <= Replicas; i++ {
			conn, err := grpc.NewClient(ReplicaGRPCAddr(i), grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Fatal(err)
			}
			ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+token)
			_, err = jobboardv2.NewJobSearchServiceClient(conn).SearchJobs(ctx, &jobboardv2.SearchJobsRequest{})
			seen[status.Code(err)]++
			conn.Close()
		}
		return seen
	}
	only := func(code codes.Code) map[codes.Code]int { return map[codes.Code]int{code: Replicas} }
	old := top.InternalToken()
	if got := answers(old); !maps.Equal(got, only(codes.OK)) {
		t.Fatalf("the topology's internal token before the rotation: %v", got)
	}
	var steps []TokenRotated
	var during map[string]map[codes.Code]int
	s := underLoad(t, l, 3*time.Minute, 5*time.Second, func() {
		rotated, err := top.RotateInternalToken(context.Background())
		if err != nil {
			t.Error(err)
			return
		}
		during = map[string]map[codes.Code]int{"old": answers(old), "new": answers(top.InternalToken())}
		retired, err := top.RetireInternalToken(context.Background())
		if err != nil {
			t.Error(err)
		}
		steps = append(steps, rotated, retired)
	})
	after := map[string]map[codes.Code]int{"old": answers(old), "new": answers(top.InternalToken())}
	failed, crashes := failedBesidesCrashes(t, top, l.rec.snapshot())
	t.Logf("figures: internal token rotated: %v; answers during the rotation %v, after it %v; under the load: %v; %s",
		steps, during, after, s, crashes)
	if !maps.Equal(during["old"], only(codes.OK)) || !maps.Equal(during["new"], only(codes.OK)) ||
		!maps.Equal(after["new"], only(codes.OK)) || !maps.Equal(after["old"], only(codes.Unauthenticated)) {
		t.Errorf("want both tokens answered during the rotation, the new one alone after it")
	}
	if failed > 0 {
		t.Errorf("want no failed request of the load")
	}
}

// upgrade: make topology-upgrade IMAGE=... under the load, from the
// topology of an earlier build whose schema is behind: the new build's
// migrations run while the old replicas serve, then each replica is
// replaced with the new image and reports its build; no request fails,
// every import is called back once.
func upgrade(t *testing.T, top *Topology, l *load, recv *receiver, image string) {
	var u Upgraded
	var err error
	s := underLoad(t, l, 3*time.Minute, 5*time.Second, func() { u, err = top.Upgrade(context.Background(), image) })
	if err != nil {
		t.Fatal(err)
	}
	nothingLost(t, top, l, recv, "upgrade", u, s)
}
