package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/truckjobs/jobboard/server/store"
)

// TestVersionCommand: jobboard version prints the build and the schema
// version this build serves, as one JSON object, without a database.
func TestVersionCommand(t *testing.T) {
	out := runCommand(t, []string{"DATABASE_URL=postgres://nowhere.invalid/x"}, "version")
	var v struct {
		Revision      string `json:"revision"`
		GoVersion     string `json:"go_version"`
		SchemaVersion int    `json:"schema_version"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("jobboard version printed %q: %v", out, err)
	}
	if v.Revision == "" || !strings.HasPrefix(v.GoVersion, "go") || v.SchemaVersion != store.LatestVersion() {
		t.Errorf("jobboard version: %+v, want a revision, a Go version and schema version %d", v, store.LatestVersion())
	}
}
