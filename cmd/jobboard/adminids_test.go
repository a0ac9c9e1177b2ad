package main

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/truckjobs/jobboard/server/store/storetest"
)

// TestAdminCommandsRefuseMalformedIDs: an admin command given an id that
// cannot be one answers one line naming the id and the form an id has,
// before the database is asked (docs/api.md, Limits against abuse).
// imports show nope used to print PostgreSQL's own error (22P02), and a
// malformed --account the flag package's whole help.
func TestAdminCommandsRefuseMalformedIDs(t *testing.T) {
	t.Setenv("DATABASE_URL", storetest.URL(t))
	ctx := context.Background()
	tests := []struct {
		name string
		run  func() error
		want string
	}{
		{"imports show nope", func() error { return importsCommand(ctx, []string{"show", "nope"}, io.Discard) },
			`imports show: "nope" is not an import id; an import id is a UUID such as`},
		{"imports show almost a UUID", func() error {
			return importsCommand(ctx, []string{"show", "0b6a7f0e-8d0c-4d7e-9a1b-2c3d4e5f6a7"}, io.Discard)
		}, `"0b6a7f0e-8d0c-4d7e-9a1b-2c3d4e5f6a7" is not an import id`},
		{"imports show unknown UUID", func() error {
			return importsCommand(ctx, []string{"show", "0b6a7f0e-8d0c-4d7e-9a1b-2c3d4e5f6a7b"}, io.Discard)
		}, `job import "0b6a7f0e-8d0c-4d7e-9a1b-2c3d4e5f6a7b" not found`},
		{"keys list --account nope", func() error { return keysCommand(ctx, []string{"list", "--account", "nope"}, io.Discard) },
			`keys list: invalid value "nope" for flag -account: not an account id: an account id is a positive whole number`},
		{"keys create --account -3", func() error { return keysCommand(ctx, []string{"create", "--account", "-3"}, io.Discard) },
			`invalid value "-3" for flag -account: not an account id`},
		{"webhooks list --account x", func() error { return webhooksCommand(ctx, []string{"list", "--account", "x"}, io.Discard) },
			`webhooks list: invalid value "x" for flag -account: not an account id`},
		{"keys revoke --account 1 abc", func() error { return keysCommand(ctx, []string{"revoke", "--account", "1", "abc"}, io.Discard) },
			`"abc" must be a key id (a positive whole number)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") ||
				strings.Contains(err.Error(), "pq:") || strings.Contains(err.Error(), "22P02") {
				t.Errorf("got %v\nwant one line with %s", err, tt.want)
			}
		})
	}
}

// TestDevDataFromMktemp: run as root, jobboard dev --data with a folder
// made by mktemp -d (mode 0700, owned by root) is refused in one line that
// names the folder, its mode and owner and what to change; the local
// PostgreSQL, which refuses to run as root, could not enter it. It used to
// end in "initdb: fork/exec .../initdb: permission denied".
func TestDevDataFromMktemp(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("as another user, the local PostgreSQL runs as that user, whose folder it is")
	}
	dir, err := os.MkdirTemp("", "jobboard-dev-mktemp-") // mode 0700, as mktemp -d
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	out, errOut, code := runCommandStatus(t, nil, "dev", "--data", dir, "--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0")
	want := "jobboard: " + dir + " (mode 0700, owner root) cannot be entered by the user"
	if code == 0 || out != "" || !strings.HasPrefix(errOut, want) || strings.Count(errOut, "\n") != 1 ||
		!strings.Contains(errOut, "chmod o+x "+dir) {
		t.Errorf("exit %d, stdout %q, stderr %q; want one line starting %q", code, out, errOut, want)
	}
}
