package store

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/rivermigrate"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLockID is the advisory lock that keeps replicas starting at the
// same time from applying the same migration twice.
const migrationLockID = 7_310_245_001

// unusedMigrationNumbers are the numbers no migration has, each with why,
// which the start log repeats where the list skips it: any other gap in
// the numbering is refused, so that a migration file lost in a merge
// stops the start instead of leaving a schema without it.
var unusedMigrationNumbers = map[int]string{
	16: "no migration ever had it: the one after 0015 was numbered 0017 on a branch merged beside other work, and databases record 0017 and later by those numbers, so nothing is missing and nothing is renumbered",
}

type migration struct {
	version int
	name    string
	sql     string
}

func loadMigrations() ([]migration, error) { return readMigrations(migrationFiles) }

// readMigrations reads the migrations in fsys's folder migrations/, in
// order of their numbers, refusing a number used twice or skipped without
// a reason in unusedMigrationNumbers.
func readMigrations(fsys fs.FS) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, "migrations")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		prefix, _, ok := strings.Cut(e.Name(), "_")
		version, err := strconv.Atoi(prefix)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %q: name must start with a number and an underscore", e.Name())
		}
		body, err := fs.ReadFile(fsys, "migrations/"+e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: version, name: e.Name(), sql: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	prev := migration{}
	for _, m := range out {
		if m.version == prev.version {
			return nil, fmt.Errorf("migrations %q and %q have the same number", prev.name, m.name)
		}
		for v := prev.version + 1; v < m.version; v++ {
			if _, ok := unusedMigrationNumbers[v]; !ok {
				return nil, fmt.Errorf("migration %04d is missing before %q (a number left out on purpose goes in unusedMigrationNumbers, with why)", v, m.name)
			}
		}
		prev = m
	}
	return out, nil
}

// LatestVersion is the version of the newest embedded migration.
func LatestVersion() int {
	ms, err := loadMigrations()
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

// Migrate applies every embedded migration the database does not have yet,
// each in its own transaction, and returns the names it applied.
func (s *Store) Migrate(ctx context.Context) ([]string, error) {
	return s.migrate(ctx, math.MaxInt)
}

// migrate is Migrate up to and including version upTo, so that a test can
// fill a schema as an earlier release left it before the next migration.
func (s *Store) migrate(ctx context.Context, upTo int) ([]string, error) {
	ms, err := loadMigrations()
	if err != nil {
		return nil, fmt.Errorf("load migrations: %w", err)
	}
	// The advisory lock belongs to a session: through a pooler in
	// transaction mode the unlock could run on another server connection
	// and leave the lock held, stopping every later start.
	db, _, err := openPool(s.sessionURL, nil)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	conn, err := db.Connx(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, migrationLockID); err != nil {
		return nil, fmt.Errorf("migrate: take lock: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrationLockID)

	applied, err := appliedVersions(ctx, conn)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, m := range ms {
		if applied[m.version] || m.version > upTo {
			continue
		}
		if why, ok := unusedMigrationNumbers[m.version-1]; ok {
			slog.InfoContext(ctx, "migration number not used", "version", fmt.Sprintf("%04d", m.version-1), "why", why)
		}
		if err := applyMigration(ctx, conn, m); err != nil {
			return names, err
		}
		names = append(names, m.name)
	}
	if err := backfillCounts(ctx, db); err != nil {
		return names, err
	}
	if err := loadZipCentroids(ctx, db); err != nil {
		return names, err
	}
	if len(names) > 0 {
		// A migration may rewrite applications (0022) or add indexes: the
		// statistics and the pages' visibility are those of the new
		// tables before the first request, not after autovacuum's turn.
		if err := vacuumIntakeTables(ctx, db); err != nil {
			return names, err
		}
	}
	queue, err := migrateQueue(ctx, db)
	return append(names, queue...), err
}

// appliedVersions returns the versions schema_migrations records, making
// the table in a new database.
func appliedVersions(ctx context.Context, conn *sqlx.Conn) (map[int]bool, error) {
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    integer PRIMARY KEY,
		name       text        NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return nil, fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	var versions []int
	if err := conn.SelectContext(ctx, &versions, `SELECT version FROM schema_migrations`); err != nil {
		return nil, fmt.Errorf("migrate: read applied versions: %w", err)
	}
	applied := map[int]bool{}
	for _, v := range versions {
		applied[v] = true
	}
	return applied, nil
}

// applyMigration runs m and records it, in one transaction.
func applyMigration(ctx context.Context, conn *sqlx.Conn, m migration) error {
	tx, err := conn.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate %s: %w", m.name, err)
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("migrate %s: %w", m.name, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.version, m.name); err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("migrate %s: record: %w", m.name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate %s: commit: %w", m.name, err)
	}
	return nil
}

// migrateQueue brings the job queue's tables up to date: they are River's,
// versioned by River's migrator. It returns the versions applied.
func migrateQueue(ctx context.Context, db *sqlx.DB) ([]string, error) {
	migrator, err := rivermigrate.New(riverdatabasesql.New(db.DB), nil)
	if err != nil {
		return nil, fmt.Errorf("queue migrations: %w", err)
	}
	res, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if err != nil {
		return nil, fmt.Errorf("queue migrations: %w", err)
	}
	var names []string
	for _, v := range res.Versions {
		names = append(names, fmt.Sprintf("river %03d", v.Version))
	}
	return names, nil
}

// SchemaVersion returns the newest applied migration version, 0 when none.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.db.GetContext(ctx, &v, `SELECT coalesce(max(version), 0) FROM schema_migrations`)
	if err != nil {
		return 0, fmt.Errorf("schema version: %w", err)
	}
	return v, nil
}
