package main

import (
	"flag"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/truckjobs/jobboard/internal/logtest"
	"github.com/truckjobs/jobboard/internal/testfix"
)

// clearServeEnv unsets the settings' variables for one test.
func clearServeEnv(t *testing.T) {
	for _, v := range []string{"DATABASE_URL", "JOBBOARD_HTTP_ADDR", "JOBBOARD_GRPC_ADDR", "JOBBOARD_METRICS_ADDR",
		"JOBBOARD_CALLBACK_ALLOW_PRIVATE", "JOBBOARD_INTERNAL_TOKEN"} {
		t.Setenv(v, "") // restored at the end of the test
		os.Unsetenv(v)
	}
}

// TestServeAndDevDefaults: dev listens on loopback and lets callbacks reach
// private addresses unless the environment or a flag says otherwise; serve
// keeps every interface and the guard on. The flag wins over the variable.
func TestServeAndDevDefaults(t *testing.T) {
	tests := []struct {
		name                              string
		defaults                          serveDefaults
		env                               map[string]string
		args                              []string
		http, grpc, metrics, allowPrivate string
	}{
		{"dev", devDefault, nil, nil, "127.0.0.1:8080", "127.0.0.1:9090", "127.0.0.1:9464", "true"},
		{"serve", serveDefault, nil, nil, ":8080", ":9090", ":9464", "false"},
		{"dev, addresses from the environment", devDefault,
			map[string]string{"JOBBOARD_HTTP_ADDR": ":8081", "JOBBOARD_GRPC_ADDR": ":9091", "JOBBOARD_METRICS_ADDR": "",
				"JOBBOARD_CALLBACK_ALLOW_PRIVATE": "false"}, nil, ":8081", ":9091", "", "false"},
		{"dev, addresses from flags over the environment", devDefault, map[string]string{"JOBBOARD_HTTP_ADDR": ":8081"},
			[]string{"--http-addr", "0.0.0.0:8082", "--metrics-addr", ":9465"}, "0.0.0.0:8082", "127.0.0.1:9090", ":9465", "true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearServeEnv(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			var cfg config
			fs := flag.NewFlagSet(tt.name, flag.ContinueOnError)
			cfg.serveFlags(fs, tt.defaults)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			got := []string{cfg.httpAddr, cfg.grpcAddr, cfg.metricsAddr, cfg.callbackAllowPrivate}
			if want := []string{tt.http, tt.grpc, tt.metrics, tt.allowPrivate}; strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("http, grpc, metrics, allow-private = %q, want %q", got, want)
			}
		})
	}
}

// helpDefaults reads "-name type\n\tusage (default X)" from flag help into
// name -> X ("" when no default is shown).
func helpDefaults(help string) map[string]string {
	out := map[string]string{}
	name := ""
	for _, line := range strings.Split(help, "\n") {
		if m := regexp.MustCompile(`^  -(\S+)`).FindStringSubmatch(line); m != nil {
			name = m[1]
			out[name] = ""
		} else if m := regexp.MustCompile(`\(default "([^"]*)"\)$`).FindStringSubmatch(line); m != nil && name != "" {
			out[name] = m[1]
		}
	}
	return out
}

// TestHelpShowsBuiltInDefaults: each command's help shows its own built-in
// defaults, whatever the environment holds: dev's say loopback and private
// callbacks allowed, which is what dev does.
func TestHelpShowsBuiltInDefaults(t *testing.T) {
	env := []string{"JOBBOARD_HTTP_ADDR=0.0.0.0:1234", "JOBBOARD_CALLBACK_ALLOW_PRIVATE=false", "JOBBOARD_METRICS_ADDR=:1"}
	tests := []struct {
		command string
		want    map[string]string
	}{
		{"dev", map[string]string{"http-addr": "127.0.0.1:8080", "grpc-addr": "127.0.0.1:9090", "metrics-addr": "127.0.0.1:9464",
			"callback-allow-private": "true", "database-url": "", "internal-token": "", "rate-limit": "50"}},
		{"serve", map[string]string{"http-addr": ":8080", "grpc-addr": ":9090", "metrics-addr": ":9464",
			"callback-allow-private": "false", "database-url": "", "internal-token": "", "rate-limit": "50"}},
	}
	for _, tt := range tests {
		t.Run(tt.command, func(t *testing.T) {
			help := runAny(t, env, tt.command, "--help")
			got := helpDefaults(help)
			for name, want := range tt.want {
				if def, ok := got[name]; !ok || def != want {
					t.Errorf("--%s: default %q (listed: %v), want %q\n%s", name, def, ok, want, help)
				}
			}
		})
	}
}

// TestDevBanner: dev prints where it serves, the demo account's API key and
// webhook secret (also kept in the data folder), the DATABASE_URL the admin
// commands need, and that grpcurl comes with make grpcurl. A second start
// shows the same account.
func TestDevBanner(t *testing.T) {
	dataDir := testfix.ReachableDir(t, "jobboard-dev-")
	first := startDev(t, dataDir)
	secret, err := os.ReadFile(filepath.Join(dataDir, "demo-webhook-secret"))
	if err != nil || strings.TrimSpace(string(secret)) != first.field("webhook secret") {
		t.Errorf("demo-webhook-secret file %q (%v), banner %q", secret, err, first.field("webhook secret"))
	}
	key, _ := os.ReadFile(filepath.Join(dataDir, "demo-api-key"))
	checks := []struct {
		name string
		ok   bool
	}{
		{"API key shown", regexp.MustCompile(`^jb_live_\w+$`).MatchString(first.field("API key")) &&
			first.field("API key") == strings.TrimSpace(string(key))},
		{"webhook secret shown", regexp.MustCompile(`^whsec_[A-Za-z0-9+/]{43}=$`).MatchString(first.field("webhook secret"))},
		{"DATABASE_URL shown, without a password", regexp.MustCompile(`^postgres://\w+@127\.0\.0\.1:\d+/jobboard\?`).MatchString(first.dbURL)},
		{"admin commands need no URL", strings.Contains(first.banner, "find this database by themselves when given --data "+dataDir+".")},
		{"grpcurl after make grpcurl", strings.Contains(first.banner, "make grpcurl") && strings.Contains(first.banner, ".bin/grpcurl -plaintext")},
		{"REST address", strings.Contains(first.banner, "REST     http://"+first.http+" ")},
		{"metrics address", strings.Contains(first.banner, "metrics  http://"+first.metrics+"/metrics")},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if !c.ok {
				t.Errorf("banner:\n%s", first.banner)
			}
		})
	}
	t.Run("the secret is the account's", func(t *testing.T) {
		db, err := sqlx.Open("postgres", first.dbURL)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var stored string
		if err := db.Get(&stored, `SELECT webhook_secret FROM accounts WHERE name = 'Demo Carrier'`); err != nil || stored != first.field("webhook secret") {
			t.Errorf("stored secret %q (%v), banner %q", stored, err, first.field("webhook secret"))
		}
	})
	t.Run("admin commands work with the URL shown", func(t *testing.T) {
		out := runCommand(t, []string{"DATABASE_URL=" + first.dbURL}, "accounts", "list")
		if !strings.Contains(out, `"Demo Carrier"`) {
			t.Errorf("accounts list: %s", out)
		}
	})
	t.Run("metrics served", func(t *testing.T) {
		resp, err := http.Get("http://" + first.metrics + "/metrics")
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("metrics: %v %v", resp, err)
		}
		resp.Body.Close()
	})
	first.stop()

	second := startDev(t, dataDir)
	defer second.stop()
	if second.dbURL != first.dbURL {
		t.Errorf("DATABASE_URL changed from %q to %q on restart", first.dbURL, second.dbURL)
	}
	for _, field := range []string{"API key", "webhook secret"} {
		if second.field(field) != first.field(field) {
			t.Errorf("%s changed from %q to %q on restart", field, first.field(field), second.field(field))
		}
	}
}

// devRun is a running `jobboard dev` and its banner.
type devRun struct {
	t                   *testing.T
	cmd                 *exec.Cmd
	done                chan error // the process's exit; nil once waited for
	banner, dbURL       string
	http, grpc, metrics string
	stderr              *logtest.Buffer // dev's log
}

// startDev starts dev with its own local PostgreSQL in dataDir and waits
// for its banner.
func startDev(t *testing.T, dataDir string) *devRun {
	t.Helper()
	return startDevAt(t, dataDir, freeAddr(t), freeAddr(t), freeAddr(t))
}

// startDevAt is startDev listening on the given REST, gRPC and metrics
// addresses, for a restart on the same ones.
func startDevAt(t *testing.T, dataDir, httpAddr, grpcAddr, metricsAddr string, flags ...string) *devRun {
	t.Helper()
	d := &devRun{t: t, http: httpAddr, grpc: grpcAddr, metrics: metricsAddr}
	d.cmd = exec.Command(jobboardBinary(t), append([]string{"dev", "--data", dataDir, "--http-addr", d.http, "--grpc-addr", d.grpc,
		"--metrics-addr", d.metrics}, flags...)...)
	d.cmd.Env = devEnv()
	var stdout, stderr logtest.Buffer
	d.cmd.Stdout, d.cmd.Stderr = &stdout, &stderr
	d.stderr = &stderr
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d.done = make(chan error, 1)
	go func() { d.done <- d.cmd.Wait() }()
	t.Cleanup(d.stop)
	deadline := time.Now().Add(90 * time.Second)
	for !strings.Contains(stdout.String(), "Press Ctrl-C") {
		select {
		case exit := <-d.done:
			d.done = nil
			t.Fatalf("dev ended (%v) before its banner:\n%s\n%s", exit, stdout.String(), stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no banner:\n%s\n%s", stdout.String(), stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	banner := &stdout
	d.banner = banner.String()
	if m := regexp.MustCompile(`export DATABASE_URL='([^']+)'`).FindStringSubmatch(d.banner); m != nil {
		d.dbURL = m[1]
	}
	return d
}

// devEnv is the test's environment without the settings' variables, as a
// user who ran nothing but make run has it.
func devEnv() []string {
	var env []string
	for _, v := range os.Environ() {
		if !strings.HasPrefix(v, "DATABASE_URL=") && !strings.HasPrefix(v, "JOBBOARD_") {
			env = append(env, v)
		}
	}
	return env
}

// field is the value after "  NAME  " on a line of the banner.
func (d *devRun) field(name string) string {
	m := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(name) + ` +(\S+)$`).FindStringSubmatch(d.banner)
	if m == nil {
		return ""
	}
	return m[1]
}

// stop interrupts dev, which stops its PostgreSQL, and waits for it.
func (d *devRun) stop() {
	if d.done == nil {
		return
	}
	_ = d.cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-d.done:
		if err != nil {
			d.t.Errorf("dev after SIGINT: %v", err)
		}
	case <-time.After(40 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.done
		d.t.Error("dev still running 40 s after SIGINT")
	}
	d.done = nil
}
