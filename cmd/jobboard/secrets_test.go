package main

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/server/store/storetest"
)

// The secrets of these tests: a token and a database password with
// characters that a URL percent-encodes, so both of its forms are looked for.
const (
	secretToken    = "tok-9d1b7e5f0a3c"
	secretPassword = "Pw0rd@s3cr:et/9"
)

// secretForms are the texts whose appearance in any output is a leak.
var secretForms = map[string]string{
	"internal token":           secretToken,
	"password":                 secretPassword,
	"password, URL-encoded":    url.QueryEscape(secretPassword),
	"password, path-escaped":   url.PathEscape(secretPassword),
	"password's distinct part": "s3cr:et",
}

// closedURL is a database URL with the password at an address where
// nothing listens, so every connection fails.
func closedURL(t *testing.T) string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword("jobboard", secretPassword),
		Host: freeAddr(t), Path: "/jobboard", RawQuery: "sslmode=disable"}
	return u.String()
}

// runAny runs the binary to its end, whatever its exit status, and returns
// what it wrote to stdout and stderr together.
func runAny(t *testing.T, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, jobboardBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	_ = cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("jobboard %v did not end:\n%s", args, out.String())
	}
	return out.String()
}

func checkNoSecret(t *testing.T, out string) {
	t.Helper()
	for name, v := range secretForms {
		if strings.Contains(out, v) {
			t.Errorf("the output holds the %s:\n%s", name, out)
		}
	}
}

// TestNoCommandPrintsSecrets: with the internal token and a DATABASE_URL
// holding a password in the environment, no command prints either in its
// help, a flag mistake or a failed connection (README, Operating). Help used to
// show the environment's values as defaults.
func TestNoCommandPrintsSecrets(t *testing.T) {
	env := []string{"JOBBOARD_INTERNAL_TOKEN=" + secretToken, "DATABASE_URL=" + closedURL(t)}
	commands := [][]string{{"serve"}, {"migrate"}, {"dev"}, {"accounts", "create"}, {"accounts", "list"},
		{"accounts", "rotate-webhook-secret"}, {"keys", "create"}, {"keys", "revoke"}, {"imports", "show"}, {"webhooks", "list"},
		{"drivers", "import"}, {"demo", "seed"}}
	type tc struct {
		name string
		env  []string
		args []string
	}
	tests := []tc{
		{"top-level help", nil, []string{"--help"}},
		{"no command", nil, nil},
		{"unknown command", nil, []string{"srve"}},
	}
	for _, c := range commands {
		name := strings.Join(c, " ")
		tests = append(tests,
			tc{name + " --help", nil, append(slices.Clone(c), "--help")},
			tc{name + " with a mistyped flag", nil, append(slices.Clone(c), "--databse-url", "x")})
	}
	tests = append(tests,
		tc{"migrate, nothing listening", nil, []string{"migrate"}},
		tc{"serve, nothing listening", nil, []string{"serve"}},
		tc{"accounts list, nothing listening", nil, []string{"accounts", "list"}},
		tc{"dev, nothing listening", nil, []string{"dev", "--data", t.TempDir()}},
		tc{"the URL given as a flag", nil, []string{"migrate", "--database-url", closedURL(t)}},
		// The driver's parse error quotes the whole URL.
		tc{"a URL with a bad escape in the password", []string{"DATABASE_URL=postgres://jobboard:s3cr:et%zz@127.0.0.1:1/jobboard"},
			[]string{"migrate"}},
		tc{"a URL with an unescaped @ in the password", []string{"DATABASE_URL=postgres://jobboard:" + secretPassword + "@127.0.0.1:1/jobboard"},
			[]string{"migrate"}},
		tc{"a key=value string the driver refuses", []string{"DATABASE_URL=host=127.0.0.1 port=1 password='" + secretPassword + "' sslmode=bogus"},
			[]string{"migrate"}},
		tc{"a key=value string, nothing listening", []string{"DATABASE_URL=host=127.0.0.1 port=1 password=" + url.QueryEscape(secretPassword) + " sslmode=disable"},
			[]string{"serve"}},
		// With a database that answers, so that the other URLs are used.
		tc{"a direct URL with a bad escape in the password", []string{"DATABASE_URL=" + storetest.URL(t),
			"JOBBOARD_DATABASE_DIRECT_URL=postgres://jobboard:s3cr:et%zz@127.0.0.1:1/jobboard"}, []string{"migrate"}},
		tc{"a read URL with a bad escape in the password", []string{"DATABASE_URL=" + storetest.URL(t),
			"JOBBOARD_READ_DATABASE_URL=postgres://jobboard:s3cr:et%zz@127.0.0.1:1/jobboard"}, []string{"serve"}},
		tc{"a direct URL given as a flag, nothing listening", []string{"DATABASE_URL=" + storetest.URL(t)},
			[]string{"migrate", "--database-direct-url", closedURL(t)}},
	)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkNoSecret(t, runAny(t, append(slices.Clone(env), tt.env...), tt.args...))
		})
	}
}

// TestServeLogsNoSecrets: a server whose DATABASE_URL holds a password
// (the test cluster trusts local connections, so it is not checked) logs
// neither it nor the internal token (startService's) from start to stop.
func TestServeLogsNoSecrets(t *testing.T) {
	u, err := url.Parse(storetest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), secretPassword)
	svc := startService(t, []string{"DATABASE_URL=" + u.String()})
	svc.request("", "", "GET", "/api/v2.0/jobs.json", "")
	if err := svc.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = svc.cmd.Wait()
	if !strings.Contains(svc.stderr.String(), `"msg":"serving"`) {
		t.Fatalf("no serving line in:\n%s", svc.stderr.String())
	}
	checkNoSecret(t, svc.stderr.String())
	if strings.Contains(svc.stderr.String(), internalToken) {
		t.Errorf("the logs hold the internal token:\n%s", svc.stderr.String())
	}
}
