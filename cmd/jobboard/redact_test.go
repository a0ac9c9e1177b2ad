package main

import (
	"bytes"
	"errors"
	"flag"
	"log/slog"
	"strings"
	"testing"
)

// TestRedact: the passwords of URLs and key=value connection strings, and
// the secrets a command noted, are hidden wherever they appear in a text.
func TestRedact(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.String("internal-token", "", "")
	fs.String("internal-token-previous", "", "")
	fs.String("database-url", "", "")
	if err := fs.Parse([]string{"--internal-token", "noted-token-31f", "--internal-token-previous", "retiring-token-9c2",
		"--database-url", "postgres://u:noted%2Fpass@h/db"}); err != nil {
		t.Fatal(err)
	}
	noteSecrets(fs)
	tests := []struct {
		name, in, want string
	}{
		{"URL password", `connect postgres://bob:hunter2@db:5432/x failed`, `connect postgres://bob:xxxxx@db:5432/x failed`},
		{"quoted URL with a bad escape", `parse "postgresql://bob:pa%zz@db/x": invalid`, `parse "postgresql://bob:xxxxx@db/x": invalid`},
		{"URL password holding @", `postgres://bob:p@ss@db/x`, `postgres://bob:xxxxx@db/x`},
		{"URL without a password", `postgres://bob@db/x`, `postgres://bob@db/x`},
		{"URL without user info", `http://127.0.0.1:8080/api`, `http://127.0.0.1:8080/api`},
		{"URL with a port and an @ in its path", `http://h:8080/a@b`, `http://h:8080/a@b`},
		{"key=value password", `host=db password=hunter2 sslmode=disable`, `host=db password=xxxxx sslmode=disable`},
		{"quoted key=value password", `host=db password='hun ter\'2' user=bob`, `host=db password=xxxxx user=bob`},
		{"spaced, upper-case keyword", `PASSWORD = hunter2`, `PASSWORD = xxxxx`},
		{"noted token anywhere", `bad token noted-token-31f here`, `bad token xxxxx here`},
		{"noted previous token", `old token retiring-token-9c2 here`, `old token xxxxx here`},
		{"noted password, decoded", `auth noted/pass refused`, `auth xxxxx refused`},
		{"noted password, encoded", `auth noted%2Fpass refused`, `auth xxxxx refused`},
		{"ordinary text", `listen :8080: address already in use`, `listen :8080: address already in use`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := redact(tt.in); got != tt.want {
				t.Errorf("redact(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestLogRedaction: the log handler hides secrets in the message, string
// attributes, errors and attributes given to With.
func TestLogRedaction(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{ReplaceAttr: redactAttr}))
	log.With("dsn", "postgres://u:with-secret@h/db").Info("connect postgres://u:msg-secret@h/db",
		"error", errors.New("dial postgres://u:err-secret@h/db"), "url", "postgres://u:attr-secret@h/db",
		slog.Group("g", "dsn", "password=group-secret"))
	for _, secret := range []string{"with-secret", "msg-secret", "err-secret", "attr-secret", "group-secret"} {
		if strings.Contains(buf.String(), secret) {
			t.Errorf("the log line holds %s: %s", secret, buf.String())
		}
	}
	if strings.Count(buf.String(), redacted) != 5 {
		t.Errorf("want 5 redactions in %s", buf.String())
	}
}

// TestLogLevelText: a line's level reads as it does without redactAttr,
// for the named levels and those between them; a level-typed attribute
// other than the line's own keeps the handler's way of writing it.
func TestLogLevelText(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn + 2, slog.LevelError, slog.LevelError + 4} {
		var plain, redacting bytes.Buffer
		opts := &slog.HandlerOptions{Level: slog.LevelDebug - 4}
		slog.New(slog.NewJSONHandler(&plain, opts)).Log(t.Context(), level, "m", "lvl", level, slog.Group("g", "level", level))
		opts.ReplaceAttr = redactAttr
		slog.New(slog.NewJSONHandler(&redacting, opts)).Log(t.Context(), level, "m", "lvl", level, slog.Group("g", "level", level))
		_, got, _ := strings.Cut(redacting.String(), `"level"`)
		_, want, _ := strings.Cut(plain.String(), `"level"`)
		if got != want {
			t.Errorf("level %v: got %s, want %s", level, got, want)
		}
	}
}

// TestContainsFold: the word is found in any case and at any place, and
// not in a text that holds only part of it.
func TestContainsFold(t *testing.T) {
	tests := []struct {
		s    string
		want bool
	}{
		{"password", true}, {"PASSWORD", true}, {"pAsSwOrD=x", true}, {"the Password", true},
		{"xxpassworD", true}, {"passwor", false}, {"pass word", false}, {"", false}, {"ℙassword", false},
	}
	for _, tt := range tests {
		if got := containsFold(tt.s, "password"); got != tt.want {
			t.Errorf("containsFold(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
}

// TestInternalTokenSettings: a previous internal token is taken beside a
// current one, and refused, naming both settings, alone or equal to it.
func TestInternalTokenSettings(t *testing.T) {
	for _, tt := range []struct {
		current, previous, want string
	}{
		{"new", "", ""},
		{"new", "old", ""},
		{"", "old", "JOBBOARD_INTERNAL_TOKEN_PREVIOUS is set without JOBBOARD_INTERNAL_TOKEN"},
		{"same", "same", "JOBBOARD_INTERNAL_TOKEN_PREVIOUS is the same as JOBBOARD_INTERNAL_TOKEN"},
	} {
		c := config{internalToken: tt.current, internalTokenPrev: tt.previous}
		err := c.checkInternalTokens()
		if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("current %q, previous %q: error %v, want %q", tt.current, tt.previous, err, tt.want)
		}
	}
}
