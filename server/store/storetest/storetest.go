// Package storetest gives tests real PostgreSQL databases (one server per
// test run and a fresh, migrated database per test, dropped when the test
// ends) and the stored things several packages' tests start from.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq" // the driver tests connect with

	"github.com/truckjobs/jobboard/internal/pglocal"
	"github.com/truckjobs/jobboard/server/store"
)

// EnvURL names the variable holding the URL of a server to create test
// databases in. `make test` starts one cluster for the whole run and sets it;
// without it, each test binary starts a throwaway cluster of its own.
const EnvURL = pglocal.TestServerEnv

var (
	adminURL string
	template string
	setup    sync.Once
	setupErr error
)

// Main runs a package's tests and then stops the cluster it started, if any.
// Use it from TestMain: func TestMain(m *testing.M) { storetest.Main(m) }.
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run is Main for a TestMain that has more to clean up after the tests: it
// returns the exit code instead of exiting, which would skip the caller's
// own cleanup.
func Run(m *testing.M) int {
	code := m.Run()
	teardown()
	return code
}

var (
	cluster    *pglocal.Cluster
	clusterDir string
)

func start() error {
	adminURL = os.Getenv(EnvURL)
	if adminURL == "" {
		dir, err := os.MkdirTemp("", "jobboard-pg-")
		if err != nil {
			return err
		}
		clusterDir = dir
		c, err := pglocal.Start(context.Background(), dir, pglocal.Options{})
		if err != nil {
			return err
		}
		cluster = c
		adminURL = c.URL("postgres")
	}
	// One migrated template per test binary; each test copies it, which is
	// much faster than migrating a new database.
	template = "jobboard_tmpl_" + randomSuffix()
	if err := exec(adminURL, `CREATE DATABASE `+template); err != nil {
		return err
	}
	s, err := store.Open(context.Background(), withDatabase(adminURL, template))
	if err != nil {
		return err
	}
	defer s.Close()
	if _, err := s.Migrate(context.Background()); err != nil {
		return fmt.Errorf("migrate template: %w", err)
	}
	return nil
}

func teardown() {
	if template != "" {
		_ = exec(adminURL, `DROP DATABASE IF EXISTS `+template+` WITH (FORCE)`)
	}
	if cluster != nil {
		_ = cluster.Stop()
		_ = os.RemoveAll(clusterDir)
	}
}

// URL returns the URL of a new migrated database for t, dropped at cleanup.
func URL(t testing.TB) string {
	t.Helper()
	return newDatabase(t, func() string { return template })
}

// EmptyURL returns the URL of a new database for t without any table,
// dropped at cleanup: for restoring a dump into.
func EmptyURL(t testing.TB) string {
	t.Helper()
	return newDatabase(t, func() string { return "template0" })
}

// newDatabase creates a database for t as a copy of a template (asked
// for once the server is set up) and drops it when t ends.
func newDatabase(t testing.TB, templateName func() string) string {
	t.Helper()
	setup.Do(func() { setupErr = start() })
	if setupErr != nil {
		t.Fatalf("test database server: %v", setupErr)
	}
	name := "jobboard_test_" + randomSuffix()
	if err := exec(adminURL, `CREATE DATABASE `+name+` TEMPLATE `+templateName()); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		if err := exec(adminURL, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`); err != nil {
			t.Errorf("drop test database: %v", err)
		}
	})
	return withDatabase(adminURL, name)
}

// Store opens a store on a new migrated database for t.
func Store(t testing.TB) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), URL(t))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func exec(dbURL, sql string) error {
	db, err := sqlx.Open("postgres", dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.Exec(sql)
	return err
}

func withDatabase(dbURL, name string) string {
	u, err := url.Parse(dbURL)
	if err != nil {
		panic(fmt.Sprintf("storetest: bad %s: %v", EnvURL, err))
	}
	u.Path = "/" + name
	return u.String()
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
