package topology

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// maxErrorLines bounds what a failed scenario prints of the replicas'
// errors: the first few say what went wrong, a flood would bury them.
const maxErrorLines = 20

// logReplicaErrors prints, once a scenario has failed, the replicas' log
// lines at level ERROR written since it began. A scenario's figures count
// a 500 but cannot say why, and the next scenario that replaces the
// replicas (a fresh topology, the upgrade) empties the logs that could.
func logReplicaErrors(t *testing.T, top *Topology, since time.Time) {
	t.Helper()
	printed := 0
	for i := 1; i <= Replicas; i++ {
		lines, err := replicaErrors(top.ReplicaLogFile(i), since)
		if err != nil {
			t.Logf("replica %d's log: %v", i, err)
			continue
		}
		for _, line := range lines {
			if printed == maxErrorLines {
				t.Logf("replica errors: more than %d, the rest left out", maxErrorLines)
				return
			}
			t.Logf("replica %d: %s", i, line)
			printed++
		}
	}
}

// replicaErrors reads a replica's log (podman's k8s-file lines: a time,
// the stream and a flag before each JSON record) for its ERROR records
// at or after since.
func replicaErrors(file string, since time.Time) ([]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var found []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if record, ok := errorRecord(sc.Text(), since); ok {
			found = append(found, record)
		}
	}
	return found, sc.Err()
}

// errorRecord returns the JSON record of a log line when it is an ERROR
// written at or after since.
func errorRecord(line string, since time.Time) (string, bool) {
	_, record, ok := strings.Cut(line, " F ")
	if !ok || !strings.Contains(record, `"level":"ERROR"`) {
		return "", false
	}
	var r struct {
		Time time.Time `json:"time"`
	}
	if json.Unmarshal([]byte(record), &r) != nil || r.Time.Before(since) {
		return "", false
	}
	return record, true
}

func TestErrorRecord(t *testing.T) {
	since := time.Date(2026, 12, 5, 21, 25, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, line string
		want       bool
	}{
		{"an error after", `2026-12-05T21:25:04.55+00:00 stderr F {"time":"2026-12-05T21:25:04.55Z","level":"ERROR","msg":"internal error","error":"x"}`, true},
		{"an error before", `2026-12-05T21:24:59.00+00:00 stderr F {"time":"2026-12-05T21:24:59Z","level":"ERROR","msg":"internal error"}`, false},
		{"a warning", `2026-12-05T21:25:04.55+00:00 stderr F {"time":"2026-12-05T21:25:04.55Z","level":"WARN","msg":"database unavailable"}`, false},
		{"not a record", `2026-12-05T21:25:04.55+00:00 stderr F panic: "level":"ERROR"`, false},
		{"no podman prefix", `{"time":"2026-12-05T21:25:04.55Z","level":"ERROR"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, got := errorRecord(tc.line, since); got != tc.want {
				t.Errorf("errorRecord(%q) = %v, want %v", tc.line, got, tc.want)
			}
		})
	}
}
