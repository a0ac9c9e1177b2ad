package topology

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPgBouncerCrashes: the supervisor's log reads as crashes and their
// restarts, and a crash counts as pgbouncer#801's only with PgBouncer's
// assertion failure logged just before it.
func TestPgBouncerCrashes(t *testing.T) {
	top := &Topology{Dir: t.TempDir()}
	dir := top.path(pgbouncerDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 5, 13, 51, 3, 900_000_000, time.UTC)
	supervisor := fmtNanos(at.Add(-time.Hour)) + " started\n" + fmtNanos(at) + " exited 1\n" + fmtNanos(at.Add(time.Second)) + " started\n"
	pgbouncer := "2026-12-05 13:51:03.739 UTC [6106] LOG started sending cancel request\n" +
		"2026-12-05 13:51:03.838 UTC [6106] FATAL @src/objects.c:1060 in function disconnect_client(): bad client state: 0\n"
	for file, text := range map[string]string{"pgbouncer.supervisor.log": supervisor, "pgbouncer.log": pgbouncer} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	crashes, err := top.PgBouncerCrashes()
	if err != nil {
		t.Fatal(err)
	}
	if len(crashes) != 1 || !crashes[0].At.Equal(at) || !crashes[0].Restarted.Equal(at.Add(time.Second)) || crashes[0].Exit != "1" {
		t.Fatalf("crashes %+v, want one at %v restarted a second later", crashes, at)
	}
	for _, tt := range []struct {
		at   time.Time
		want bool
	}{
		{at, true},                       // 62 ms after the FATAL line
		{at.Add(5 * time.Second), false}, // too long after it
		{at.Add(-time.Second), false},    // before it
	} {
		if got := top.pgbouncerAsserted(tt.at); got != tt.want {
			t.Errorf("asserted at %v: %v, want %v", tt.at, got, tt.want)
		}
	}
}

func fmtNanos(t time.Time) string { return fmt.Sprint(t.UnixNano()) }
