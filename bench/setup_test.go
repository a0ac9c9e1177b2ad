package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExitedEarly: a server that could not listen is told apart from one
// that failed otherwise, so that only the first is started again, and
// either failure carries the end of the server's log.
func TestExitedEarly(t *testing.T) {
	for _, tt := range []struct {
		name, log string
		taken     bool
	}{
		{"address in use", "jobboard: listen 127.0.0.1:50779: listen tcp 127.0.0.1:50779: bind: address already in use\n", true},
		{"database down", "jobboard: connect to database: dial tcp 127.0.0.1:1: connect: connection refused\n", false},
		{"no log", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "server.log")
			if err := os.WriteFile(path, []byte(strings.Repeat("x", 3000)+"\n"+tt.log), 0o644); err != nil {
				t.Fatal(err)
			}
			err := exitedEarly(errors.New("not ready"), path)
			if got := errors.Is(err, errAddressTaken); got != tt.taken {
				t.Errorf("address taken: %v, want %v (%v)", got, tt.taken, err)
			}
			if !strings.Contains(err.Error(), "not ready") || !strings.HasSuffix(err.Error(), tt.log) {
				t.Errorf("the error does not end with the log's last lines: %q", err)
			}
			if len(err.Error()) > 2100 {
				t.Errorf("the error holds %d bytes of log, want the last 2,000 at most", len(err.Error()))
			}
		})
	}
}
