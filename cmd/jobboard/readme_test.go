package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/internal/logtest"
	"github.com/truckjobs/jobboard/internal/testfix"
)

// readmeBlock is one ```sh block of the README.
type readmeBlock struct {
	line int    // of the opening fence, for messages
	text string // the commands
	// background: the README says to run it in another terminal (the line
	// before the fence is anotherTerminal); it serves until the run ends.
	background bool
}

// anotherTerminal marks a README block that keeps running, such as the
// callback receiver: an HTML comment, which the rendered README hides.
const anotherTerminal = "<!-- another terminal -->"

// readmeBlocks returns the ```sh blocks of the README's "## section".
func readmeBlocks(t *testing.T, readme, section string) []readmeBlock {
	t.Helper()
	f, err := os.Open(readme)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var blocks []readmeBlock
	var cur *readmeBlock
	in, prev := false, ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			in = line == "## "+section
		case !in:
		case cur == nil && line == "```sh":
			cur = &readmeBlock{line: n, background: prev == anotherTerminal}
		case cur != nil && line == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.text += line + "\n"
		}
		prev = line
	}
	if err := sc.Err(); err != nil || len(blocks) == 0 {
		t.Fatalf("no sh blocks in README section %q (%v)", section, err)
	}
	return blocks
}

// readmeCheck is what a block's output must show, beyond its success: the
// block is the one whose README text contains in.
type readmeCheck struct {
	in, want string // want: a regular expression over the block's stdout
	why      string
}

var readmeChecks = []readmeCheck{
	{"jobs.xml/2", `<employmentType>Full-Time</employmentType>\s*<routeType>`,
		"REST shows only the first employmentType of job 2"},
	{"-X DELETE http://localhost:8080/api/v2.0/jobs.json/4", `^\{[^{]*"deleted":1,(?s:.*)"deleted":1,"errors":2,`,
		"jobs 4, then 3, are there to delete (the demo jobs come back at each start)"},
	{"Idempotency-Key: feed-", `(?s)^HTTP/1.1 202 .*"status":"complete"`, "the import is accepted, then complete"},
	{`"callbackUrl"`, `"callbackUrl": "http://127\.0\.0\.1:\d+/\.\.\."`, "imports show finds the import, its callback URL cut to scheme and host"},
	{"JobService/GetJob", `"employmentType": \[\s*"EMPLOYMENT_TYPE_FULL_TIME",\s*"EMPLOYMENT_TYPE_PERMANENT"\s*\]`,
		"gRPC returns every employmentType, as enum values"},
	{"DriverIntakeService/SubmitApplication <<JSON", `"driverId": "\d+"`, "the intake takes Ana"},
	{"DriverIntakeService/SubmitApplications", `"driverIds": \[\s*"\d+",\s*"\d+"\s*\]`, "the batch intake takes both drivers"},
	{"examples/intake-client", `(?m)^SubmitApplications: 3 applications stored(?s:.*)^ListDrivers: 3 drivers named Intake$`,
		"the Go client example stores and lists its batch"},
	{`"certification": "CERTIFICATION_HAZMAT"`, `"lastName": "Ruiz",(?s:.*)"driverType": "DRIVER_TYPE_OWNER_OPERATOR"`, "Ana is listed, her type an enum value"},
	{"JobSearchService/SearchJobs", `(?s)"referenceNumber": "DEMO1005",.*"accountName": .*"distanceMiles": 21\.9,.*"facet": "JOB_FACET_FREIGHT_TYPE",`,
		"the driver's search finds the demo's tanker job in Baytown, with its distance and the freight facet"},
	{`{"state": "ZZ"}`, `(?s)Code: InvalidArgument\n.*"field": "state",\s*"description": "\\"ZZ\\" is not valid; allowed: .*\ngrpcurl exited with 67\n$`,
		"an invalid filter comes back with a BadRequest naming it"},
	{"examples/grpc-client", `ListJobs: \d+ active jobs\n(?s:.*)\nadded \d+, updated \d+, unchanged \d+, errors 0\n$`,
		"both examples report success"},
	{"/api/v2.0/webhooks | tee", `^\{"data":\{"id":"we_[0-9a-f]{32}",(?s:.*)"secret":"whsec_`, "the endpoint is created with its secret"},
	{"/webhooks/$HOOK/deliveries", `(?s)"eventType":"webhook\.test".*"statusCode":204`, "the test event reached the lead receiver"},
	{"drivers import --account 1 .data/try/lead-driver.json", `^\{"imported":\s*1\}\n$`, "Dana's application is stored"},
	{"api/v2.0/events?limit=2", `(?s)"links":\{"next":"http://[^"]+/api/v2\.0/events\?[^"]*after=evt_[0-9a-f]{32}.*"links":\{"next":"http://`,
		"the feed pages by links.next"},
	{"-X DELETE -w", `(?m)^204$`, "the endpoint is deleted"},
}

// readmeLeadChecks are what examples/lead-receiver, started by a block of
// the "Lead events" section, must print after the block containing in.
var readmeLeadChecks = []readmeCheck{
	{"/webhooks/$HOOK/test", `(?m)^evt_[0-9a-f]{32} webhook\.test: endpoint we_[0-9a-f]{32}$`, "the receiver prints the test event"},
	{"drivers import --account 1 .data/try/lead-driver.json", `(?m)^evt_[0-9a-f]{32} driver\.application\.received: driver \d+, Dana Lead$`,
		"the receiver prints Dana's application"},
}

// TestReadmeExamples runs every ```sh block of the README's "Calling the
// API" section against `jobboard dev`, as a reader would in a second
// terminal, twice, restarting dev in between: the examples must hold on a
// second run too. Each block runs in bash -euo pipefail after the section's
// first block (which takes the key), and curl fails on an HTTP error.
func TestReadmeExamples(t *testing.T) {
	blocks := readmeBlocks(t, filepath.Join(repoRoot(t), "README.md"), "Calling the API")
	for _, c := range append(readmeChecks, readmeLeadChecks...) {
		if !containsBlock(blocks, c.in) {
			t.Errorf("no README block contains %q, which a check expects (%s)", c.in, c.why)
		}
	}
	r := newReadmeRun(t)
	// The same ports in both runs, as make run's: an import keeps the
	// address it was created at for its links.
	httpAddr, grpcAddr, metricsAddr, receiverAddr := freeAddr(t), freeAddr(t), freeAddr(t), freeAddr(t)
	leadReceiverAddr := freeAddr(t)
	for run := 1; run <= 2; run++ {
		t.Run(fmt.Sprintf("run %d", run), func(t *testing.T) {
			r.dev = startDevAt(t, r.dataDir, httpAddr, grpcAddr, metricsAddr)
			defer r.dev.stop()
			r.receiver, r.receiverOut = receiverAddr, nil
			r.leadReceiver, r.leadReceiverOut = leadReceiverAddr, nil
			for i, b := range blocks {
				if b.background {
					r.startBackground(t, b)
					continue
				}
				prelude := ""
				if i > 0 {
					prelude = blocks[0].text
				}
				r.runBlock(t, prelude, b)
			}
		})
	}
	// What the examples wrote into .data/ is dev's, so make reset, run
	// after them, removes the folder.
	stdout, stderr, code := runDevTool(t, "", "dev", "--reset", "--data", r.dataDir)
	if code != 0 || !strings.Contains(stdout, "removed "+r.dataDir) {
		t.Errorf("make reset after the examples: exit %d\n%s%s", code, stdout, stderr)
	}
}

// readmeTLSChecks are readmeChecks for the README's "TLS" section.
var readmeTLSChecks = []readmeCheck{
	{"https://localhost:8080/api/v2.0/jobs.json", `"referenceNumber":"DEMO1001"`, "REST answers over HTTPS"},
	{"-cert .data/tls/client.pem", `"referenceNumber": "DEMO1001"`, "the client certificate acts for the demo account"},
	{`-cert "$PWD/.data/tls/client.pem"`, `(?m)^SubmitApplications: 3 applications stored(?s:.*)^ListDrivers: 3 drivers named Intake$`,
		"the Go client example authenticates by certificate"},
}

// TestReadmeTLSExamples runs the ```sh blocks of the README's "TLS" section
// against `jobboard dev --tls` (make run-tls), which makes the certificates
// the blocks use, and checks that the call by certificate is logged with
// its subject as the caller.
func TestReadmeTLSExamples(t *testing.T) {
	blocks := readmeBlocks(t, filepath.Join(repoRoot(t), "README.md"), "TLS")
	for _, c := range readmeTLSChecks {
		if !containsBlock(blocks, c.in) {
			t.Errorf("no README block contains %q, which a check expects (%s)", c.in, c.why)
		}
	}
	r := newReadmeRun(t)
	r.dev = startDevAt(t, r.dataDir, freeAddr(t), freeAddr(t), freeAddr(t), "--tls")
	defer r.dev.stop()
	for _, want := range []string{"REST     https://", "-cacert " + r.dataDir + "/tls/ca.pem -cert " + r.dataDir + "/tls/client.pem"} {
		if !strings.Contains(r.dev.banner, want) {
			t.Errorf("the banner of dev --tls has no %q:\n%s", want, r.dev.banner)
		}
	}
	for i, b := range blocks {
		prelude := ""
		if i > 0 {
			prelude = blocks[0].text
		}
		r.runBlockChecked(t, prelude, b, readmeTLSChecks)
	}
	const caller = `"account_id":1,"caller":"CN=example-internal-service,O=jobboard dev"`
	if !strings.Contains(r.dev.stderr.String(), caller) {
		t.Errorf("no access line with %s:\n%s", caller, r.dev.stderr.String())
	}
}

func containsBlock(blocks []readmeBlock, s string) bool {
	for _, b := range blocks {
		if strings.Contains(b.text, s) {
			return true
		}
	}
	return false
}

// readmeRun is where the README's blocks run: a folder standing for the
// checkout, whose .data/ is dev's data folder.
type readmeRun struct {
	root, work, dataDir string
	jobboard, grpcurl   string
	receiverBinary      string
	leadReceiverBinary  string
	env                 []string
	dev                 *devRun
	receiver            string          // the callback receiver's address in this run
	receiverOut         *logtest.Buffer // what the receiver printed in this run
	leadReceiver        string          // examples/lead-receiver's address in this run
	leadReceiverOut     *logtest.Buffer // what it printed in this run
}

func newReadmeRun(t *testing.T) *readmeRun {
	r := &readmeRun{root: repoRoot(t), jobboard: jobboardBinary(t), grpcurl: grpcurlBinary(t)}
	r.work = testfix.ReachableDir(t, "jobboard-readme-")
	r.dataDir = filepath.Join(r.work, ".data")
	if err := os.Mkdir(r.dataDir, 0o755); err != nil {
		t.Fatal(err)
	}
	// The receiver is built once rather than started with go run, so that
	// stopping it stops the receiver itself.
	r.receiverBinary = filepath.Join(t.TempDir(), "webhook-receiver")
	build := exec.Command("go", "build", "-o", r.receiverBinary, "./examples/webhook-receiver")
	build.Dir = r.root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the receiver: %v\n%s", err, out)
	}
	// examples/lead-receiver is a module of its own.
	r.leadReceiverBinary = filepath.Join(t.TempDir(), "lead-receiver")
	build = exec.Command("go", "-C", "examples/lead-receiver", "build", "-o", r.leadReceiverBinary, ".")
	build.Dir = r.root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the lead receiver: %v\n%s", err, out)
	}
	// curl reads $CURL_HOME/.curlrc: with fail-with-body, an HTTP error
	// fails the block, as the README says every call succeeds.
	curlHome := t.TempDir()
	if err := os.WriteFile(filepath.Join(curlHome, ".curlrc"), []byte("fail-with-body\nshow-error\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, v := range os.Environ() {
		if !strings.HasPrefix(v, "DATABASE_URL=") && !strings.HasPrefix(v, "JOBBOARD_") && !strings.HasPrefix(v, "CURL_HOME=") {
			r.env = append(r.env, v)
		}
	}
	r.env = append(r.env, "CURL_HOME="+curlHome)
	return r
}

// script is a block as the test runs it. What must differ from a reader's
// terminal is substituted, and nothing else:
//   - `make grpcurl` is left out: grpcurl comes from grpcurlBinary;
//   - .bin/grpcurl is that grpcurl, bin/jobboard the binary the tests built
//     from this checkout (what make run builds), and examples/ the
//     checkout's, since blocks run in a folder of their own whose .data/ is
//     the test's data folder (so .data/ stays as written);
//   - the receivers are those built from examples/webhook-receiver and
//     examples/lead-receiver;
//   - localhost:8080, localhost:9090, 127.0.0.1:9999 and 127.0.0.1:9998
//     are this run's ports of dev and of the two receivers.
func (r *readmeRun) script(prelude, block string) string {
	var lines []string
	for _, l := range strings.Split(prelude+block, "\n") {
		if strings.TrimSpace(l) != "make grpcurl" {
			lines = append(lines, l)
		}
	}
	return strings.NewReplacer(
		"go -C examples/webhook-receiver run .", r.receiverBinary+" -addr "+r.receiver,
		"go -C examples/lead-receiver run .", r.leadReceiverBinary+" -addr "+r.leadReceiver,
		".bin/grpcurl", r.grpcurl,
		"bin/jobboard", r.jobboard,
		"examples/", r.root+"/examples/",
		"localhost:8080", r.dev.http,
		"localhost:9090", r.dev.grpc,
		"127.0.0.1:9999", r.receiver,
		"127.0.0.1:9998", r.leadReceiver,
	).Replace(strings.Join(lines, "\n"))
}

// command is bash -euo pipefail running a block's script in the work folder.
func (r *readmeRun) command(ctx context.Context, prelude string, b readmeBlock) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", r.script(prelude, b.text))
	cmd.Dir = r.work
	cmd.Env = r.env
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// runBlock runs a block to its end and checks its exit and its output.
func (r *readmeRun) runBlock(t *testing.T, prelude string, b readmeBlock) {
	t.Helper()
	r.runBlockChecked(t, prelude, b, readmeChecks)
}

// runBlockChecked is runBlock with the checks of the block's section.
func (r *readmeRun) runBlockChecked(t *testing.T, prelude string, b readmeBlock, checks []readmeCheck) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := r.command(ctx, prelude, b)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Errorf("README line %d: %v\n%s\nstdout:\n%s\nstderr:\n%s", b.line, err, b.text, stdout.String(), stderr.String())
		return
	}
	for _, c := range checks {
		if strings.Contains(b.text, c.in) && !regexp.MustCompile(c.want).MatchString(stdout.String()) {
			t.Errorf("README line %d: %s: no %q in\n%s", b.line, c.why, c.want, stdout.String())
		}
	}
	if strings.Contains(b.text, `"callbackUrl"`) {
		r.checkDelivered(t, b, stdout.String())
	}
	r.checkLeadReceiver(t, b)
}

// checkLeadReceiver: after a block that makes an event, the lead receiver
// printed it as verified.
func (r *readmeRun) checkLeadReceiver(t *testing.T, b readmeBlock) {
	t.Helper()
	for _, c := range readmeLeadChecks {
		if !strings.Contains(b.text, c.in) {
			continue
		}
		want := regexp.MustCompile(c.want)
		if r.leadReceiverOut == nil {
			t.Errorf("README line %d: %s: the lead receiver is not running", b.line, c.why)
			continue
		}
		testfix.Eventually(20*time.Second, func() bool { return want.MatchString(r.leadReceiverOut.String()) })
		if !want.MatchString(r.leadReceiverOut.String()) {
			t.Errorf("README line %d: %s: no %q in\n%s", b.line, c.why, c.want, r.leadReceiverOut.String())
		}
	}
}

// checkDelivered: the receiver printed, as verified, the callback of the
// import the block created.
func (r *readmeRun) checkDelivered(t *testing.T, b readmeBlock, out string) {
	t.Helper()
	m := regexp.MustCompile(`"id":"([^"]+)"`).FindStringSubmatch(out)
	if m == nil || r.receiverOut == nil {
		t.Errorf("README line %d: no import id in the output, or no receiver running:\n%s", b.line, out)
		return
	}
	want := regexp.MustCompile(`(?m)^import ` + regexp.QuoteMeta(m[1]) +
		` complete: (added 1, updated 0, unchanged 0|added 0, updated 0, unchanged 1), deleted 0, failed 0 \(webhook-id msg_\w+\)$`)
	testfix.Eventually(20*time.Second, func() bool { return want.MatchString(r.receiverOut.String()) })
	if !want.MatchString(r.receiverOut.String()) {
		t.Errorf("README line %d: the receiver printed no verified callback of import %s:\n%s", b.line, m[1], r.receiverOut.String())
	}
}

// startBackground starts a block that serves until the run ends (the
// receiver) and waits for it to listen.
func (r *readmeRun) startBackground(t *testing.T, b readmeBlock) {
	t.Helper()
	cmd := r.command(context.Background(), "", b)
	// Its own process group, so that stopping it reaches what bash started.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out := &logtest.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		<-done
	})
	if strings.Contains(b.text, "examples/lead-receiver") {
		r.leadReceiverOut = out
	} else {
		r.receiverOut = out
	}
	testfix.Eventually(30*time.Second, func() bool {
		select {
		case <-done:
			return true
		default:
			return strings.Contains(out.String(), "listening on")
		}
	})
	if !strings.Contains(out.String(), "listening on") {
		t.Fatalf("README line %d: not listening:\n%s\n%s", b.line, b.text, out.String())
	}
}

// TestReadmeListsMakeTargets: the README names every target make help
// lists.
func TestReadmeListsMakeTargets(t *testing.T) {
	root := repoRoot(t)
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The sentence that lists them, up to the next blank line.
	list := regexp.MustCompile("(?s)`make help` lists the other targets:.*?\n\n").Find(readme)
	if list == nil {
		t.Fatal("README: no \"`make help` lists the other targets:\"")
	}
	named := regexp.MustCompile("`([a-z-]+)`").FindAllStringSubmatch(string(list), -1)
	listed := map[string]bool{"help": true, "run": true, "test": true} // shown beside make help
	for _, m := range named {
		listed[m[1]] = true
	}
	// make help prints the targets with a "## " comment.
	for _, m := range regexp.MustCompile(`(?m)^([a-z-]+):.*## `).FindAllStringSubmatch(string(makefile), -1) {
		if !listed[m[1]] {
			t.Errorf("make help lists %q, the README does not", m[1])
		}
	}
}
