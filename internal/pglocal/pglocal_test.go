package pglocal

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/internal/testfix"
)

func ping(url string) error {
	db, err := sql.Open("postgres", url)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return db.PingContext(ctx)
}

// TestPglocalOneOwner: a second Start on a folder in use is refused with
// the owner's process id and leaves the first server serving; admin tools
// find the running server from the folder; a restart keeps the port.
func TestPglocalOneOwner(t *testing.T) {
	dir := testfix.ReachableDir(t, "pglocal-test-")
	first, err := Start(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { first.Stop() })

	_, err = Start(context.Background(), dir, Options{})
	var busy *InUseError
	if !errors.As(err, &busy) || busy.PID != os.Getpid() || busy.Dir != dir {
		t.Fatalf("second Start: %v, want in use by process %d", err, os.Getpid())
	}
	if err := ping(first.URL("postgres")); err != nil {
		t.Fatalf("the first server after the refused start: %v", err)
	}
	if url, err := RunningURL(dir, "postgres"); err != nil || url != first.URL("postgres") {
		t.Errorf("RunningURL = %q, %v; want %q", url, err, first.URL("postgres"))
	}

	if err := first.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if url, err := RunningURL(dir, "postgres"); !errors.Is(err, ErrNotRunning) {
		t.Errorf("RunningURL after stop = %q, %v; want ErrNotRunning", url, err)
	}
	again, err := Start(context.Background(), dir, Options{})
	if err != nil {
		t.Fatalf("start after stop: %v", err)
	}
	defer again.Stop()
	if again.Port() != first.Port() {
		t.Errorf("restart listens on %d, the first run on %d", again.Port(), first.Port())
	}
}

// helperDirEnv makes the test binary run TestPglocalHelperProcess as an
// owner of a cluster in that folder, ending as helperEndEnv says.
const (
	helperDirEnv = "PGLOCAL_TEST_HELPER_DIR"
	helperEndEnv = "PGLOCAL_TEST_HELPER_END"
)

// TestPglocalHelperProcess is not a test: it is the process the tests
// below start, kill and watch.
func TestPglocalHelperProcess(t *testing.T) {
	dir := os.Getenv(helperDirEnv)
	if dir == "" {
		t.Skip("run by TestPglocalServerEndsWithOwner")
	}
	started := make(chan error)
	// Start's caller sits on a thread that ends with it, as a caller that
	// locked its thread does: the server must outlive the thread.
	onEndingThread(func() {
		_, err := Start(context.Background(), dir, Options{})
		started <- err
	})
	if err := <-started; err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("ready")
	if os.Getenv(helperEndEnv) == "panic" {
		time.Sleep(time.Second)
		panic("the owner crashes")
	}
	time.Sleep(time.Minute)
	os.Exit(3)
}

// onEndingThread runs f in a goroutine locked to its thread, which ends
// with it. Go never ends the main thread, so a goroutine that lands there
// keeps it, blocked, and another is tried.
func onEndingThread(f func()) {
	for {
		onOther := make(chan bool)
		go func() {
			runtime.LockOSThread()
			if syscall.Gettid() == syscall.Getpid() {
				onOther <- false
				select {}
			}
			onOther <- true
			f()
		}()
		if <-onOther {
			return
		}
	}
}

// TestPglocalServerEndsWithOwner: the server outlives the thread that
// called Start but not its owner, which ends without stopping it.
func TestPglocalServerEndsWithOwner(t *testing.T) {
	for _, end := range []string{"SIGKILL", "panic"} {
		t.Run(end, func(t *testing.T) {
			dir := testfix.ReachableDir(t, "pglocal-test-")
			cmd := exec.Command(os.Args[0], "-test.run=^TestPglocalHelperProcess$", "-test.v")
			cmd.Env = append(os.Environ(), helperDirEnv+"="+dir, helperEndEnv+"="+end)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			if line := readUntil(out, "ready", "error:"); line != "ready" {
				t.Fatalf("helper: %s", line)
			}
			pm, err := readPostmasterPID(filepath.Join(dir, "data"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { testfix.KillLeftoverServer(pm.pid) })
			time.Sleep(300 * time.Millisecond) // the thread that called Start has ended by now
			if !testfix.Running(pm.pid) {
				t.Fatal("the server ended with the thread that called Start")
			}
			if end == "SIGKILL" {
				_ = cmd.Process.Kill()
			}
			_ = cmd.Wait()
			if !testfix.Gone(pm.pid, 30*time.Second) {
				t.Fatalf("server %d still running 30 s after its owner ended (%s)", pm.pid, end)
			}
			if answers(pm.port) {
				t.Errorf("port %d still answers", pm.port)
			}
		})
	}
}

// readUntil returns the first line of r that starts with one of prefixes.
func readUntil(r io.Reader, prefixes ...string) string {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		for _, p := range prefixes {
			if strings.HasPrefix(sc.Text(), p) {
				return sc.Text()
			}
		}
	}
	return "no line starting with " + strings.Join(prefixes, " or ")
}

// TestPglocalInitdbInterrupted: a first start stopped during initdb leaves
// nothing that the next start takes for a cluster; it starts cleanly.
func TestPglocalInitdbInterrupted(t *testing.T) {
	dir := testfix.ReachableDir(t, "pglocal-test-")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if c, err := Start(ctx, dir, Options{}); err == nil {
		c.Stop()
		t.Skip("initdb finished within 100 ms: nothing was interrupted")
	}
	c, err := Start(context.Background(), dir, Options{})
	if err != nil {
		t.Fatalf("start after an interrupted initdb: %v", err)
	}
	defer c.Stop()
	if err := ping(c.URL("postgres")); err != nil {
		t.Fatal(err)
	}
}

// TestPglocalDeepFolder: a cluster folder whose path is longer than a Unix
// socket path may be starts: the server listens on TCP only.
func TestPglocalDeepFolder(t *testing.T) {
	dir := filepath.Join(testfix.ReachableDir(t, "pglocal-test-"), strings.Repeat("a-long-checkout-name/", 6))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for d := dir; len(d) > len(os.TempDir()); d = filepath.Dir(d) {
		_ = os.Chmod(d, 0o755)
	}
	c, err := Start(context.Background(), dir, Options{})
	if err != nil {
		t.Fatalf("start in a %d-character folder: %v", len(dir), err)
	}
	defer c.Stop()
	if err := ping(c.URL("postgres")); err != nil {
		t.Fatal(err)
	}
}
