// Command testprogress runs `go test -json` and says how it is going: a line
// when a package's tests start, a line when they end with their time, each
// failing test's output in full as soon as it fails, a line on what is
// still running after 30 quiet seconds, and a summary. go test alone prints
// a package only when it is done, and the slowest takes minutes.
//
//	go run ./internal/cmd/testprogress go test -json -count=1 ./...
//
// Its exit code is the command's.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// quiet is how long the report may stay silent before it says what runs.
const quiet = 30 * time.Second

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: testprogress go test -json [FLAGS] [PACKAGES]")
		os.Exit(2)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, quiet))
}

func run(args []string, stdout, stderr io.Writer, quiet time.Duration) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stderr = os.Stdin, stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(stderr, "testprogress:", err)
		return 1
	}
	stopForwarding := forwardSignals(cmd)
	defer stopForwarding()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(stderr, "testprogress:", err)
		return 1
	}
	lines := make(chan []byte)
	go readLines(pipe, lines)

	r := newReport(stdout, modulePath("go.mod"), time.Now())
	tick := time.NewTicker(quiet / 6)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case line, ok := <-lines:
			if !ok {
				done = true
				break
			}
			var e event
			if bytes.HasPrefix(line, []byte("{")) && json.Unmarshal(line, &e) == nil && e.Action != "" {
				r.handle(e, time.Now())
			} else {
				r.printf(time.Now(), "%s", line)
			}
		case now := <-tick.C:
			r.heartbeat(now, quiet)
		}
	}
	code := exitCode(cmd.Wait(), stderr)
	if r.passed+len(r.failed) > 0 {
		r.summary(time.Now())
	}
	if code == 0 && r.anyFailed {
		code = 1
	}
	return code
}

// readLines sends each line of rd, its newline kept, and closes lines at
// the end.
func readLines(rd io.Reader, lines chan<- []byte) {
	defer close(lines)
	br := bufio.NewReader(rd)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if line[len(line)-1] != '\n' {
				line = append(line, '\n')
			}
			lines <- line
		}
		if err != nil {
			return
		}
	}
}

// forwardSignals leaves Ctrl-C to the command, which gets it from the
// terminal too, and passes it SIGTERM and SIGHUP, so that the report goes
// on until the command ends.
func forwardSignals(cmd *exec.Cmd) (stop func()) {
	signal.Ignore(syscall.SIGINT)
	forward := make(chan os.Signal, 1)
	signal.Notify(forward, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-forward:
				if cmd.Process != nil {
					_ = cmd.Process.Signal(s)
				}
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(forward)
		signal.Reset(syscall.SIGINT)
		close(done)
	}
}

func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	if exit, ok := err.(*exec.ExitError); ok {
		if status, ok := exit.Sys().(syscall.WaitStatus); ok && status.Signaled() {
			return 128 + int(status.Signal())
		}
		return exit.ExitCode()
	}
	fmt.Fprintln(stderr, "testprogress:", err)
	return 1
}

// modulePath is the module named in the go.mod at path, or "" without one.
func modulePath(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}
