package pglocal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/truckjobs/jobboard/internal/testfix"
)

// TestStartInAFolderOnlyRootEnters: run as root, Start refuses in one line
// a cluster folder inside one the server's user cannot enter (what mktemp
// -d makes: mode 0700, owned by root), naming the folder in the way, its
// mode and owner and what to change, and touches nothing; once that user
// may pass through, the same folder works. It used to fail in initdb with "fork/exec
// .../initdb: permission denied".
func TestStartInAFolderOnlyRootEnters(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root runs the server as another user")
	}
	base := testfix.ReachableDir(t, "pglocal-reach-")
	tests := []struct {
		name    string
		mode    os.FileMode // of base/d
		cluster string      // the folder given to Start, under base/d
		blocked string      // the folder named in the refusal; "" when Start works
	}{
		{"mktemp -d as the cluster folder, handed to the server's user", 0o700, "", ""},
		{"a cluster folder inside mktemp -d (jobboard dev --data)", 0o700, "postgres", "d"},
		{"group only", 0o750, "postgres", "d"},
		{"search for others", 0o711, "postgres", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := filepath.Join(base, "d")
			if err := os.RemoveAll(d); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(d, tt.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(d, tt.mode); err != nil { // whatever the umask
				t.Fatal(err)
			}
			dir := filepath.Join(d, tt.cluster)
			c, err := Start(context.Background(), dir, Options{})
			if tt.blocked == "" {
				if err != nil {
					t.Fatal(err)
				}
				defer c.Stop()
				if err := ping(c.URL("postgres")); err != nil {
					t.Error(err)
				}
				return
			}
			if err == nil {
				c.Stop()
				t.Fatal("started")
			}
			blocked := filepath.Join(base, tt.blocked)
			for _, want := range []string{fmt.Sprintf("%s (mode %04o, owner root)", blocked, tt.mode), "chmod o+x " + blocked} {
				if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
					t.Errorf("%v\nwant one line with %q", err, want)
				}
			}
			if entries, _ := os.ReadDir(d); len(entries) != 0 {
				t.Errorf("refused, yet %s holds %d entries", d, len(entries))
			}
		})
	}
}
