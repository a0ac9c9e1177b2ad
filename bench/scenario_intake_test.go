package main

import "testing"

// TestDriversImportPhases: the large import's note gives the phases the
// command logged, with ANALYZE when it ran, and says so when none were.
func TestDriversImportPhases(t *testing.T) {
	imported := `{"time":"t","level":"INFO","msg":"drivers imported","applications":100000,"read_seconds":0.74,"store_seconds":26.2,"fold_seconds":1.31}`
	analyzed := `{"time":"t","level":"INFO","msg":"statistics refreshed","tables":"applications","seconds":0.44}`
	tests := []struct {
		name, logged, want string
	}{
		{"phases and ANALYZE", analyzed + "\n" + imported + "\n",
			"The import's own account of its time: reading the file 0.7 s, checking and storing the applications with " +
				"their events 26.2 s, folding the counts 1.3 s (of which ANALYZE of the intake's tables 0.4 s); " +
				"the rest is the process's start and its migration check."},
		{"phases without ANALYZE", "not JSON\n" + imported,
			"The import's own account of its time: reading the file 0.7 s, checking and storing the applications with " +
				"their events 26.2 s, folding the counts 1.3 s; the rest is the process's start and its migration check."},
		{"nothing logged", "", "The import logged no account of its phases."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := driversImportPhases([]byte(tt.logged)); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
