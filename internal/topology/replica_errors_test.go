package topology

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"slices"
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

// replicaErrors reads a replica's log for its ERROR records at or after
// since.
func replicaErrors(file string, since time.Time) ([]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return errorRecords(f, since)
}

// errorRecords reads podman's k8s-file log lines (a time, the stream, a
// flag, then a piece of the output) for the ERROR records written at or
// after since. conmon writes what it reads 8 KiB at a time, and a piece
// that ends mid-line is flagged P (partial): the line is the P pieces of
// its stream, in order, and the F (full) piece that ends it. A replica
// writes an error in one write with the access lines it held, and a
// panic's record with its stack is longer than 8 KiB, so errors are split
// too.
func errorRecords(r io.Reader, since time.Time) ([]string, error) {
	var found []string
	partial := map[string]*strings.Builder{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.SplitN(sc.Text(), " ", 4)
		if len(fields) < 4 || fields[2] != "P" && fields[2] != "F" {
			continue
		}
		stream, piece := fields[1], fields[3]
		b := partial[stream]
		if b == nil {
			b = &strings.Builder{}
			partial[stream] = b
		}
		b.WriteString(piece)
		if fields[2] == "P" {
			continue
		}
		if isErrorSince(b.String(), since) {
			found = append(found, b.String())
		}
		b.Reset()
	}
	return found, sc.Err()
}

// isErrorSince says whether record, a JSON log record, is an ERROR written
// at or after since.
func isErrorSince(record string, since time.Time) bool {
	if !strings.Contains(record, `"level":"ERROR"`) {
		return false
	}
	var r struct {
		Time time.Time `json:"time"`
	}
	return json.Unmarshal([]byte(record), &r) == nil && !r.Time.Before(since)
}

func TestErrorRecords(t *testing.T) {
	since := time.Date(2026, 12, 5, 21, 25, 0, 0, time.UTC)
	const (
		after  = `{"time":"2026-12-05T21:25:04.55Z","level":"ERROR","msg":"internal error","error":"x"}`
		before = `{"time":"2026-12-05T21:24:59Z","level":"ERROR","msg":"internal error"}`
		warn   = `{"time":"2026-12-05T21:25:04.55Z","level":"WARN","msg":"database unavailable"}`
		access = `{"time":"2026-12-05T21:25:04.55Z","level":"INFO","msg":"request"}`
	)
	line := func(stream, flag, piece string) string {
		return "2026-12-05T21:25:04.551666315+00:00 " + stream + " " + flag + " " + piece
	}
	for _, tt := range []struct {
		name  string
		lines []string
		want  []string
	}{
		{"an error after", []string{line("stderr", "F", after)}, []string{after}},
		{"an error before", []string{line("stderr", "F", before)}, nil},
		{"a warning", []string{line("stderr", "F", warn)}, nil},
		{"not a record", []string{line("stderr", "F", `panic: "level":"ERROR"`)}, nil},
		{"no podman prefix", []string{after}, nil},
		{"an error split in three pieces", []string{
			line("stderr", "P", after[:20]), line("stderr", "P", after[20:50]), line("stderr", "F", after[50:]),
		}, []string{after}},
		{"split, with the other stream between its pieces", []string{
			line("stderr", "P", after[:30]), line("stdout", "F", access), line("stderr", "F", after[30:]),
		}, []string{after}},
		{"an access line split, then an error", []string{
			line("stderr", "P", access[:10]), line("stderr", "F", access[10:]), line("stderr", "F", after),
		}, []string{after}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := errorRecords(strings.NewReader(strings.Join(tt.lines, "\n")), since)
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("errorRecords = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
