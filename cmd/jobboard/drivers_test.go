package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// TestDriversImportSentInFuture: drivers import refuses a file with an
// application sent more than 5 minutes ahead of the clock, naming the
// entry's index even in a file of one, and imports nothing of it; 4 minutes
// ahead (a sender's clock running fast) is imported.
func TestDriversImportSentInFuture(t *testing.T) {
	url := storetest.URL(t)
	env := []string{"DATABASE_URL=" + url}
	runCommand(t, env, "migrate")
	a := createAccount(t, env, "Alpha")
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	entry := func(email string, ahead time.Duration) (string, string) {
		sent := time.Now().Add(ahead).UTC().Format(time.RFC3339)
		return fmt.Sprintf(`{"first_name":"Al","last_name":"Pha","address":"1 A St","city":"Omaha","state":"NE",
			"zip":"68102","email":%q,"phone":"4025550100","driver_type":"Student","experience":"1","sent":%q}`, email, sent), sent
	}
	now1, _ := entry("now@example.com", 0)
	late1, lateSent1 := entry("late1@example.com", 6*time.Minute)
	late2, lateSent2 := entry("late2@example.com", 365*24*time.Hour)
	fast, _ := entry("fast@example.com", 4*time.Minute)
	tests := []struct {
		name    string
		entries []string
		want    string // in the error; "" for an import
	}{
		{"one entry 6 minutes ahead", []string{late1}, `[0] sent: "` + lateSent1 + `" is more than 5 minutes after the server's time`},
		{"the second of two a year ahead", []string{now1, late2}, `[1] sent: "` + lateSent2 + `" is more than 5 minutes after the server's time`},
		{"4 minutes ahead", []string{now1, fast}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "drivers.json")
			if err := os.WriteFile(file, []byte("["+strings.Join(tt.entries, ",")+"]"), 0o644); err != nil {
				t.Fatal(err)
			}
			var before, after int
			if err := st.DB().Get(&before, `SELECT count(*) FROM applications`); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(jobboardBinary(t), "drivers", "import", "--account", fmt.Sprint(a.ID), file)
			cmd.Env = append(os.Environ(), env...)
			out, err := cmd.CombinedOutput()
			if err := st.DB().Get(&after, `SELECT count(*) FROM applications`); err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.want == "" && (err != nil || after != before+len(tt.entries)):
				t.Errorf("import: %v %s; %d applications stored of %d", err, out, after-before, len(tt.entries))
			case tt.want != "" && (err == nil || !strings.Contains(string(out), tt.want)):
				t.Errorf("got %v %s, want %q", err, out, tt.want)
			case tt.want != "" && after != before:
				t.Errorf("a refused file stored %d applications", after-before)
			}
		})
	}
}
