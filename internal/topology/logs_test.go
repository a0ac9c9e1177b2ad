package topology

import (
	"bytes"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// rotatedLogs: logrotate, forced, moves every replica's log and HAProxy's
// aside, and each keeps writing at the start of its emptied file (no
// hole of NUL bytes where the old content was): a request sent through
// HAProxy after the rotation is in HAProxy's new log and in the new log
// of the replica that answered it, and podman logs still reads it.
func rotatedLogs(t *testing.T, top *Topology, acct account) {
	if err := top.RotateLogs(true); err != nil {
		t.Fatalf("logrotate: %v", err)
	}
	logs := map[string]string{top.path(haproxyDir, "haproxy.log"): "HAProxy"}
	for i := 1; i <= Replicas; i++ {
		logs[top.ReplicaLogFile(i)] = ReplicaName(i)
	}
	rotated := 0
	for file, part := range logs {
		old, err := os.ReadFile(file + ".1")
		if err != nil || len(old) == 0 {
			t.Errorf("%s: no rotated log %s.1 (%v)", part, file, err)
		}
		rotated += len(old)
	}
	served := map[string]bool{}
	for range 2 * Replicas {
		req, err := http.NewRequest(http.MethodGet, RESTURL()+"/api/v2.0/jobs.json?max=1", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth(acct.APIKey, "")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		served[resp.Header.Get("X-Served-By")] = true
	}
	for file, part := range logs {
		if part != "HAProxy" && !served[part] {
			continue
		}
		checkWritten(t, part, file, "/api/v2.0/jobs.json")
	}
	for i := 1; i <= Replicas; i++ {
		if served[ReplicaName(i)] && !strings.Contains(top.ReplicaLogs(i), "/api/v2.0/jobs.json") {
			t.Errorf("podman logs %s does not show the request it served after the rotation", ReplicaName(i))
		}
	}
	t.Logf("figures: log rotation: HAProxy's log and %d replicas' rotated, %d bytes moved aside; %d requests after it, served by %d replicas, checked in the new files",
		Replicas, rotated, 2*Replicas, len(served))
}

// checkWritten: the log file starts with a line, not NUL bytes, and holds
// has (a line written after the rotation), which HAProxy and the replicas
// write as the answer leaves: polled for 5 s.
func checkWritten(t *testing.T, part, file, has string) {
	t.Helper()
	var got []byte
	for range 250 {
		var err error
		if got, err = os.ReadFile(file); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(got, []byte(has)) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	switch {
	case len(got) > 0 && got[0] == 0:
		t.Errorf("%s: %s starts with NUL bytes: its writer did not go back to the start after the truncation", part, file)
	case !bytes.Contains(got, []byte(has)):
		t.Errorf("%s: %s does not hold %q after the rotation:\n%s", part, file, has, tailString(string(got), 2000))
	}
}
