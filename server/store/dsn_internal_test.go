package store

import (
	"testing"

	"github.com/lib/pq"
)

// TestWithSetting: a setting is added to, or replaces one in, a
// connection string of either form, and lib/pq reads the value given;
// withDefaultSetting leaves a setting the string already has.
func TestWithSetting(t *testing.T) {
	for _, tt := range []struct {
		name, dsn string
		override  bool // withSetting; else withDefaultSetting
		want      string
	}{
		{"URL, added", "postgres://u:p@127.0.0.1:5432/db?sslmode=disable", true, "yes"},
		{"URL, replaced", "postgres://u:p@127.0.0.1:5432/db?binary_parameters=no", true, "yes"},
		{"key=value, added", "host=127.0.0.1 dbname=db", true, "yes"},
		{"key=value, replaced", "host=127.0.0.1 binary_parameters=no dbname=db", true, "yes"},
		{"URL, default kept", "postgresql://u@127.0.0.1/db?binary_parameters=no", false, "no"},
		{"key=value, default kept", "host=127.0.0.1 binary_parameters=no", false, "no"},
		{"key=value, default added", "host=127.0.0.1", false, "yes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			set := withDefaultSetting
			if tt.override {
				set = withSetting
			}
			dsn, err := set(tt.dsn, "binary_parameters", "yes")
			if err != nil {
				t.Fatal(err)
			}
			c, err := pq.NewConfig(dsn)
			if err != nil {
				t.Fatalf("%q: %v", dsn, err)
			}
			if got := map[bool]string{true: "yes", false: "no"}[c.BinaryParameters]; got != tt.want {
				t.Errorf("%q: binary_parameters %s, want %s", dsn, got, tt.want)
			}
		})
	}
}
