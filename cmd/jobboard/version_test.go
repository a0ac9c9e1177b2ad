package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

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

// TestSchemaAheadServes: a database a newer build migrated further (a
// version this build does not know) is said to be ahead, by migrate and
// by serve at start, and the server is ready all the same: an upgrade
// migrates first and replaces the replicas after.
func TestSchemaAheadServes(t *testing.T) {
	env := migratedEnv(t)
	db, err := sqlx.Connect("postgres", strings.TrimPrefix(env[0], "DATABASE_URL="))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ahead := store.LatestVersion() + 1
	if _, err := db.Exec(`INSERT INTO schema_migrations (version, name) VALUES ($1, 'from_a_newer_build')`, ahead); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runCommandStatus(t, env, "migrate"); code != 0 || !strings.Contains(stderr, "database schema is ahead of this build") {
		t.Errorf("migrate: exit %d, %s", code, stderr)
	}
	svc := startService(t, env)
	resp, err := http.Get(svc.httpBase + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/readyz %d with the schema ahead, want 200", resp.StatusCode)
	}
	if !strings.Contains(svc.stderr.String(), "database schema is ahead of this build: serving") {
		t.Errorf("serve did not say the schema is ahead:\n%s", svc.stderr.String())
	}
}
