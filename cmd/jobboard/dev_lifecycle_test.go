package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/internal/apikey"
	"github.com/truckjobs/jobboard/internal/testfix"
)

// runDevTool runs the binary in dir as a user who only ran make run (no
// DATABASE_URL) and returns what it printed and its exit status. It fails
// the test when the command has not ended within 30 s.
func runDevTool(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, jobboardBinary(t), args...)
	cmd.Dir, cmd.Env = dir, devEnv()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("jobboard %v still running after 30 s:\n%s%s", args, out.String(), errOut.String())
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("jobboard %v: %v", args, err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

// checkRefusal: the command failed with one line on stderr naming the
// folder and the process using it, and saying what to do.
func checkRefusal(t *testing.T, stderr string, code int, dataDir string, owner int, advice string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	want := fmt.Sprintf("%s is in use by a running jobboard dev (pid %d): ", dataDir, owner)
	if code == 0 || len(lines) != 1 || !strings.Contains(lines[0], want) || !strings.Contains(lines[0], advice) {
		t.Errorf("exit %d, stderr:\n%s\nwant one line with %q and %q", code, stderr, want, advice)
	}
}

// TestDevOneServerPerFolder: a second dev on the folder of a running one
// (on other ports, so only the folder collides) and a reset of that folder
// are refused at once, and the first dev serves on as before. Once it has
// stopped, the reset removes the folder.
func TestDevOneServerPerFolder(t *testing.T) {
	dataDir := testfix.ReachableDir(t, "jobboard-dev-")
	first := startDev(t, dataDir)
	owner := first.cmd.Process.Pid

	t.Run("a second dev is refused", func(t *testing.T) {
		started := time.Now()
		stdout, stderr, code := runDevTool(t, "", "dev", "--data", dataDir,
			"--http-addr", freeAddr(t), "--grpc-addr", freeAddr(t), "--metrics-addr", freeAddr(t))
		checkRefusal(t, stderr, code, dataDir, owner, "stop that one, or start this one with --data DIR")
		if stdout != "" {
			t.Errorf("stdout: %s", stdout)
		}
		if took := time.Since(started); took > 5*time.Second {
			t.Errorf("refused after %s", took)
		}
	})
	t.Run("a reset is refused", func(t *testing.T) {
		_, stderr, code := runDevTool(t, "", "dev", "--reset", "--data", dataDir)
		checkRefusal(t, stderr, code, dataDir, owner, "stop it before resetting")
		if _, err := os.Stat(filepath.Join(dataDir, demoKeyFile)); err != nil {
			t.Errorf("the refused reset removed files: %v", err)
		}
	})
	t.Run("a reset is refused as in use whatever the folder holds", func(t *testing.T) {
		stranger := filepath.Join(dataDir, "notes.txt")
		writeFile(t, stranger)
		defer os.Remove(stranger)
		_, stderr, code := runDevTool(t, "", "dev", "--reset", "--data", dataDir)
		checkRefusal(t, stderr, code, dataDir, owner, "stop it before resetting")
	})
	t.Run("the first still serves", func(t *testing.T) {
		checkServing(t, first)
	})

	first.stop()
	stdout, stderr, code := runDevTool(t, "", "dev", "--reset", "--data", dataDir)
	if _, err := os.Stat(dataDir); code != 0 || !errors.Is(err, os.ErrNotExist) || !strings.Contains(stdout, "removed "+dataDir) {
		t.Errorf("reset after the stop: exit %d, folder %v\n%s%s", code, err, stdout, stderr)
	}
}

// TestDevResetOnlyDevFolders: a reset removes only what dev made, so a
// mistyped --data cannot remove another folder (one that merely holds a
// postgres/ or a file dev also makes, or a link); a missing one is no error.
func TestDevResetOnlyDevFolders(t *testing.T) {
	tests := []struct {
		name  string
		make  func(t *testing.T, dir string) string // returns the --data to reset
		error string
	}{
		{"a file dev does not make", func(t *testing.T, dir string) string {
			writeFile(t, filepath.Join(dir, "notes.txt"))
			return dir
		}, "it holds notes.txt, which dev does not make"},
		{"a postgres/ dev did not make", func(t *testing.T, dir string) string {
			writeFile(t, filepath.Join(dir, "postgres", "PG_VERSION"))
			return dir
		}, "its postgres/ was not made by dev"},
		{"dev's files beside others", func(t *testing.T, dir string) string {
			writeFile(t, filepath.Join(dir, "internal-token"))
			writeFile(t, filepath.Join(dir, "src", "main.go"))
			return dir
		}, "it holds src, which dev does not make"},
		{"a link to a data folder", func(t *testing.T, dir string) string {
			writeFile(t, filepath.Join(dir, "real", "internal-token"))
			link := filepath.Join(t.TempDir(), "data")
			if err := os.Symlink(filepath.Join(dir, "real"), link); err != nil {
				t.Fatal(err)
			}
			return link
		}, "is a symbolic link: not removed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			data := tt.make(t, dir)
			before := treeFiles(t, dir)
			_, stderr, code := runDevTool(t, "", "dev", "--reset", "--data", data)
			if code == 0 || !strings.Contains(stderr, tt.error) {
				t.Errorf("exit %d, want a refusal saying %q:\n%s", code, tt.error, stderr)
			}
			if after := treeFiles(t, dir); after != before {
				t.Errorf("files changed: %s -> %s", before, after)
			}
		})
	}
	stdout, _, code := runDevTool(t, "", "dev", "--reset", "--data", filepath.Join(t.TempDir(), "missing"))
	if code != 0 || !strings.Contains(stdout, "nothing to reset") {
		t.Errorf("reset of a missing folder: exit %d\n%s", code, stdout)
	}
}

func writeFile(t *testing.T, name string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// treeFiles lists the files below dir, one string.
func treeFiles(t *testing.T, dir string) string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, strings.TrimPrefix(path, dir))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(files, ",")
}

// checkServing: dev says it is ready and lists the demo account's jobs.
func checkServing(t *testing.T, d *devRun) {
	t.Helper()
	resp, err := http.Get("http://" + d.http + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/readyz: %s", resp.Status)
	}
	req, _ := http.NewRequest("GET", "http://"+d.http+"/api/v2.0/jobs.json", nil)
	req.SetBasicAuth(d.field("API key"), "")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "DEMO1001") {
		t.Errorf("jobs list: %s\n%s", resp.Status, body)
	}
}

// TestDevEndsItsDatabase: however dev ends, its PostgreSQL ends too: on
// SIGHUP (the terminal closed) and SIGTERM dev stops it and exits 0; on
// SIGKILL, when dev can do nothing, the server gets its parent-death
// signal. Each run restarts on the folder the last one left.
func TestDevEndsItsDatabase(t *testing.T) {
	dataDir := testfix.ReachableDir(t, "jobboard-dev-")
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			d := startDev(t, dataDir)
			pid, port := devPostmaster(t, dataDir)
			t.Cleanup(func() { testfix.KillLeftoverServer(pid) })
			if err := d.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-d.done:
				d.done = nil
				if sig != syscall.SIGKILL && err != nil {
					t.Errorf("dev after %s: %v", sig, err)
				}
			case <-time.After(40 * time.Second):
				t.Fatalf("dev still running 40 s after %s", sig)
			}
			if !testfix.Gone(pid, 30*time.Second) {
				t.Fatalf("PostgreSQL (pid %d) still running 30 s after dev ended on %s", pid, sig)
			}
			if conn, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err == nil {
				conn.Close()
				t.Errorf("port %d still answers", port)
			}
		})
	}
}

// devPostmaster reads the process id and port of dev's PostgreSQL from
// the postmaster.pid in its data folder (lines 1 and 4).
func devPostmaster(t *testing.T, dataDir string) (pid, port int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(clusterDir(dataDir), "data", "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) < 4 {
		t.Fatalf("postmaster.pid: %q", b)
	}
	pid, err1 := strconv.Atoi(strings.TrimSpace(lines[0]))
	port, err2 := strconv.Atoi(strings.TrimSpace(lines[3]))
	if err1 != nil || err2 != nil {
		t.Fatalf("postmaster.pid: %q", b)
	}
	return pid, port
}

// TestAdminCommandsFindDevDatabase: with no DATABASE_URL, the admin
// commands use the database of the dev running in the data folder (.data
// in the working directory unless --data says otherwise), and say clearly
// when none runs there; serve still insists on a URL.
func TestAdminCommandsFindDevDatabase(t *testing.T) {
	workDir := testfix.ReachableDir(t, "jobboard-dev-")
	dataDir := filepath.Join(workDir, ".data")
	notRunning := "accounts list: no DATABASE_URL and no database running in "
	t.Run("nothing running", func(t *testing.T) {
		_, stderr, code := runDevTool(t, workDir, "accounts", "list")
		if code == 0 || !strings.Contains(stderr, notRunning+".data: start make run") {
			t.Errorf("exit %d, stderr:\n%s", code, stderr)
		}
	})

	d := startDev(t, dataDir)
	t.Run("accounts list in the working directory", func(t *testing.T) {
		stdout, stderr, code := runDevTool(t, workDir, "accounts", "list")
		if code != 0 || !strings.Contains(stdout, `"Demo Carrier"`) {
			t.Errorf("exit %d:\n%s%s", code, stdout, stderr)
		}
	})
	t.Run("keys list with --data", func(t *testing.T) {
		id := regexp.MustCompile(`Demo account (\d+):`).FindStringSubmatch(d.banner)
		if id == nil {
			t.Fatalf("no account id in the banner:\n%s", d.banner)
		}
		stdout, stderr, code := runDevTool(t, "", "keys", "list", "--account", id[1], "--data", dataDir)
		if prefix := apikey.Prefix(d.field("API key")); code != 0 || !strings.Contains(stdout, `"`+prefix+`"`) {
			t.Errorf("exit %d, want the demo key %s:\n%s%s", code, prefix, stdout, stderr)
		}
	})
	t.Run("serve needs a URL", func(t *testing.T) {
		_, stderr, code := runDevTool(t, workDir, "serve")
		if code != 2 || !strings.Contains(stderr, "serve: DATABASE_URL (or --database-url) is required") {
			t.Errorf("exit %d, stderr:\n%s", code, stderr)
		}
	})

	d.stop()
	t.Run("after dev stopped", func(t *testing.T) {
		_, stderr, code := runDevTool(t, "", "accounts", "list", "--data", dataDir)
		if code == 0 || !strings.Contains(stderr, notRunning+dataDir+": start make run") {
			t.Errorf("exit %d, stderr:\n%s", code, stderr)
		}
	})
}
