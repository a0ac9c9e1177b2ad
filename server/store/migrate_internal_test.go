package store

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
)

// TestMigrationNumbering: the embedded migrations load, and a folder whose
// numbers repeat or skip one without a reason in unusedMigrationNumbers is
// refused, naming the file.
func TestMigrationNumbering(t *testing.T) {
	if _, err := loadMigrations(); err != nil {
		t.Fatalf("the embedded migrations: %v", err)
	}
	// numbered is a migrations folder with one file per number, and the
	// extra names.
	numbered := func(from, to int, extra ...string) fstest.MapFS {
		fsys := fstest.MapFS{}
		for v := from; v <= to; v++ {
			fsys[fmt.Sprintf("migrations/%04d_m.sql", v)] = &fstest.MapFile{Data: []byte("SELECT 1;")}
		}
		for _, n := range extra {
			fsys["migrations/"+n] = &fstest.MapFile{Data: []byte("SELECT 1;")}
		}
		return fsys
	}
	tests := []struct {
		name  string
		fsys  fstest.MapFS
		error string // empty: loads
	}{
		{"in order", numbered(1, 3), ""},
		{"the unused number skipped", numbered(1, 15, "0017_m.sql"), ""},
		{"the first number missing", numbered(2, 3), `migration 0001 is missing before "0002_m.sql"`},
		{"a number skipped", numbered(1, 2, "0004_m.sql"), `migration 0003 is missing before "0004_m.sql"`},
		{"a number twice", numbered(1, 2, "0002_n.sql"), `migrations "0002_m.sql" and "0002_n.sql" have the same number`},
		{"no number", numbered(1, 1, "b.sql"), `migration "b.sql": name must start with a number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readMigrations(tt.fsys)
			switch {
			case tt.error == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.error != "" && (err == nil || !strings.Contains(err.Error(), tt.error)):
				t.Errorf("error %v, want one saying %s", err, tt.error)
			}
		})
	}
}
