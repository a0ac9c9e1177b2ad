package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/truckjobs/jobboard/server/descriptors"
)

// repoRoot is the module root, where the examples and .bin live.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// grpcurlBinary returns the grpcurl that `make test` and `make grpcurl` install
// into .bin, or, when that is missing (a plain go test), installs the version
// scripts/install-tools.sh pins into buildDir, so the test never depends on
// whatever is on PATH.
func grpcurlBinary(t *testing.T) string {
	t.Helper()
	return madeOnce(t, findOrInstallGrpcurl)
}

// findOrInstallGrpcurl looks for grpcurl or installs it once per test run.
var findOrInstallGrpcurl = sync.OnceValues(func() (string, error) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return "", err
	}
	if p := filepath.Join(root, ".bin", "grpcurl"); fileExists(p) {
		return p, nil
	}
	script, err := os.ReadFile(filepath.Join(root, "scripts", "install-tools.sh"))
	if err != nil {
		return "", err
	}
	m := regexp.MustCompile(`(?m)^GRPCURL_VERSION=(\S+)$`).FindSubmatch(script)
	if m == nil {
		return "", errors.New("no GRPCURL_VERSION in scripts/install-tools.sh")
	}
	cmd := exec.Command("go", "install", "github.com/fullstorydev/grpcurl/cmd/grpcurl@"+string(m[1]))
	cmd.Env = append(os.Environ(), "GOBIN="+buildDir, "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install grpcurl: %v\n%s", err, out)
	}
	return filepath.Join(buildDir, "grpcurl"), nil
})

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// firstCommentLine is the first line of the comment above a proto element,
// as grpcurl describe prints it.
func firstCommentLine(t *testing.T, name string) string {
	t.Helper()
	d, err := descriptors.Resolver().FindDescriptorByName(protoreflect.FullName(name))
	if err != nil {
		t.Fatal(err)
	}
	c := strings.TrimSpace(d.ParentFile().SourceLocations().ByDescriptor(d).LeadingComments)
	if c == "" {
		t.Fatalf("%s has no comment in the proto", name)
	}
	line, _, _ := strings.Cut(c, "\n")
	return "// " + strings.TrimSpace(line)
}

// TestGrpcurl: reflection lets grpcurl list the services, describe them and
// their messages with the proto comments, and call each of them.
func TestGrpcurl(t *testing.T) {
	grpcurl := grpcurlBinary(t)
	env := migratedEnv(t)
	a := createAccount(t, env, "Grpcurl Freight")
	svc := startService(t, env)
	run := func(args ...string) string {
		t.Helper()
		args = append([]string{"-plaintext"}, args...)
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(grpcurl, args...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("grpcurl %q: %v\n%s%s", args, err, stdout.String(), stderr.String())
		}
		return stdout.String()
	}

	services := []string{"jobboard.v2.JobService", "jobboard.v2.DriverService", "jobboard.v2.DriverIntakeService", "jobboard.v2.JobImportService"}
	listed := strings.Fields(run(svc.grpcAddr, "list"))
	for _, want := range append(services, "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection") {
		if !slices.Contains(listed, want) {
			t.Errorf("grpcurl list: no %s in %q", want, listed)
		}
	}
	for _, name := range services {
		out := run(svc.grpcAddr, "describe", name)
		want := []string{firstCommentLine(t, name)}
		d, _ := descriptors.Resolver().FindDescriptorByName(protoreflect.FullName(name))
		methods := d.(protoreflect.ServiceDescriptor).Methods()
		for i := 0; i < methods.Len(); i++ {
			want = append(want, firstCommentLine(t, string(methods.Get(i).FullName())))
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("grpcurl describe %s: no %q in\n%s", name, w, out)
			}
		}
	}
	for _, name := range []string{"jobboard.v2.Job", "jobboard.v2.Job.reference_number", "jobboard.v2.DriverApplication"} {
		if out, want := run(svc.grpcAddr, "describe", name), firstCommentLine(t, name); !strings.Contains(out, want) {
			t.Errorf("grpcurl describe %s: no %q in\n%s", name, want, out)
		}
	}

	key := "authorization: Bearer " + a.APIKey
	out := run("-H", key, "-d", `{"jobs": [{"referenceNumber": "G100", "title": "Dedicated Dry Van", "state": "OH",
		"driverType": "DRIVER_TYPE_COMPANY_DRIVER", "freightType": "FREIGHT_TYPE_DRY_VAN", "twicOnly": true,
		"payAmountMinCents": 2150, "description": "<p>Home nightly.</p>"}]}`,
		svc.grpcAddr, "jobboard.v2.JobService/PostJobs")
	if !strings.Contains(out, `"added": 1`) {
		t.Errorf("PostJobs: %s", out)
	}
	if out := run("-H", key, svc.grpcAddr, "jobboard.v2.JobService/ListJobs"); !strings.Contains(out, `"referenceNumber": "G100"`) ||
		!strings.Contains(out, `"payAmountMinCents": "2150"`) || !strings.Contains(out, `"twicOnly": true`) {
		t.Errorf("ListJobs: %s", out)
	}
	// Sent now: the intake refuses a time more than 5 minutes ahead of its clock.
	sent := time.Now().UTC().Format(time.RFC3339)
	out = run("-H", "authorization: Bearer "+internalToken, "-H", fmt.Sprintf("x-account-id: %d", a.ID),
		"-d", `{"application": {"firstName": "Ana", "lastName": "Ruiz", "address": "14 Depot Rd", "city": "Laredo",
		"state": "TX", "zip": "78040", "email": "ana.ruiz@example.com", "phone": "+1 956 555 0142",
		"driverType": "DRIVER_TYPE_OWNER_OPERATOR", "experience": "6", "sent": "`+sent+`",
		"certifications": ["CERTIFICATION_HAZMAT"],
		"jobApplications": [{"reference": "G100", "isDirectApp": true, "createdAt": "`+sent+`"}]}}`,
		svc.grpcAddr, "jobboard.v2.DriverIntakeService/SubmitApplication")
	if !regexp.MustCompile(`"driverId": "\d+"`).MatchString(out) {
		t.Errorf("SubmitApplication: %s", out)
	}
	if out := run("-H", key, "-d", `{"email": "ana.ruiz@example.com", "pageSize": 2, "livesWithinRadiusMiles": 50, "livesWithinZip": "78040"}`,
		svc.grpcAddr, "jobboard.v2.DriverService/ListDrivers"); !strings.Contains(out, `"lastName": "Ruiz"`) ||
		!strings.Contains(out, `"driverType": "DRIVER_TYPE_OWNER_OPERATOR"`) {
		t.Errorf("ListDrivers: %s", out)
	}
	out = run("-H", key, "-d", `{"jobs": [{"referenceNumber": "G101", "title": "Flatbed Regional", "state": "IN",
		"driverType": "DRIVER_TYPE_COMPANY_DRIVER", "freightType": "FREIGHT_TYPE_FLATBED", "description": "<p>Tarping pay.</p>"}]}`,
		svc.grpcAddr, "jobboard.v2.JobImportService/CreateJobImport")
	if !strings.Contains(out, `"status": "JOB_IMPORT_STATUS_PENDING"`) {
		t.Errorf("CreateJobImport: %s", out)
	}
}

// TestExamples runs the programs in examples/ against a real server, as an
// integrator would, and checks what they print and what they stored.
func TestExamples(t *testing.T) {
	root := repoRoot(t)
	env := migratedEnv(t)
	a := createAccount(t, env, "Example Haulers")
	svc := startService(t, env)
	example := func(key string, args ...string) (string, error) {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "JOBBOARD_API_KEY="+key, "JOBBOARD_URL="+svc.httpBase)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	t.Run("grpc-client", func(t *testing.T) {
		// The example is a module of its own, so this also checks that the
		// generated client can be required from outside the main module.
		bin := filepath.Join(t.TempDir(), "grpc-client")
		if out, err := example("", "go", "-C", "examples/grpc-client", "build", "-o", bin, "."); err != nil {
			t.Fatalf("build: %v\n%s", err, out)
		}
		out, err := example(a.APIKey, bin, "-addr", svc.grpcAddr)
		if err != nil || !strings.Contains(out, "PostJobs GRPC100: added 1, updated 0, unchanged 0, errors 0\n") ||
			!strings.Contains(out, "ListJobs: 1 active jobs\n") || !strings.Contains(out, "\tGRPC100\tDedicated Dry Van Driver\tColumbus, OH\n") {
			t.Errorf("grpc-client: %v\n%s", err, out)
		}
		if out, err := example(a.APIKey, bin, "-addr", svc.grpcAddr); err != nil || !strings.Contains(out, "unchanged 1, errors 0") {
			t.Errorf("grpc-client again: %v\n%s", err, out)
		}
		if out, err := example("jb_live_wrong", bin, "-addr", svc.grpcAddr); err == nil || !strings.Contains(out, "PostJobs: Unauthenticated") {
			t.Errorf("grpc-client with a wrong key: %v\n%s", err, out)
		}
	})

	t.Run("intake-client", func(t *testing.T) {
		// Another module using the client package, as an internal service
		// would: it submits three applications and lists them.
		bin := filepath.Join(t.TempDir(), "intake-client")
		if out, err := example("", "go", "-C", "examples/intake-client", "build", "-o", bin, "."); err != nil {
			t.Fatalf("build: %v\n%s", err, out)
		}
		run := func(token string) (string, error) {
			cmd := exec.Command(bin, "-addr", svc.grpcAddr, "-account", fmt.Sprint(a.ID))
			cmd.Env = append(os.Environ(), "JOBBOARD_INTERNAL_TOKEN="+token)
			out, err := cmd.CombinedOutput()
			return string(out), err
		}
		for round := 1; round <= 2; round++ { // the same batch again stores nothing twice
			out, err := run(internalToken)
			if err != nil || !regexp.MustCompile(`(?m)^SubmitApplications: 3 applications stored, driver ids \[\d+ \d+ \d+\]$`).MatchString(out) ||
				!strings.Contains(out, "ListDrivers: 3 drivers named Intake\n") ||
				!regexp.MustCompile(`(?m)^  \d+\tLuis Intake\tluis.intake@example.com\tLaredo, TX\tsent \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`).MatchString(out) {
				t.Errorf("intake-client, round %d: %v\n%s", round, err, out)
			}
		}
		if out, err := run("wrong-token"); err == nil || !strings.Contains(out, "SubmitApplications: Unauthenticated") {
			t.Errorf("intake-client with a wrong token: %v\n%s", err, out)
		}
	})

	t.Run("lead-receiver", func(t *testing.T) {
		// A module of its own, with the official Standard Webhooks library:
		// its tests verify deliveries signed by server/webhook (a README
		// test runs it against the server).
		if out, err := example("", "go", "-C", "examples/lead-receiver", "test", "-count=1", "./..."); err != nil {
			t.Errorf("go test examples/lead-receiver: %v\n%s", err, out)
		}
	})

	t.Run("post-jobs-xml.sh", func(t *testing.T) {
		out, err := example(a.APIKey, "bash", "examples/post-jobs-xml.sh")
		if err != nil || !strings.Contains(out, "<added>2</added>") || !strings.HasSuffix(out, "\nadded 2, updated 0, unchanged 0, errors 0\n") {
			t.Errorf("post-jobs-xml.sh: %v\n%s", err, out)
		}
		if out, err := example(a.APIKey, "bash", "examples/post-jobs-xml.sh", "examples/jobs-feed.xml"); err != nil ||
			!strings.HasSuffix(out, "\nadded 0, updated 0, unchanged 2, errors 0\n") {
			t.Errorf("post-jobs-xml.sh again: %v\n%s", err, out)
		}
		out, err = example("jb_live_wrong", "bash", "examples/post-jobs-xml.sh")
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() == 0 || !strings.Contains(out, "401") || !strings.Contains(out, "UNAUTHENTICATED") {
			t.Errorf("post-jobs-xml.sh with a wrong key: %v\n%s", err, out)
		}
	})

	// What the examples posted is stored as sent.
	code, _, body := svc.request("basic", a.APIKey, "GET", "/api/v2.0/jobs.json", "")
	var jobs []struct {
		ReferenceNumber string `json:"referenceNumber"`
		Title           string `json:"title"`
		EmploymentType  string `json:"employmentType"`
		TwicOnly        bool   `json:"twicOnly"`
		Description     string `json:"description"`
	}
	if err := json.Unmarshal([]byte(body), &jobs); err != nil || code != 200 {
		t.Fatalf("list: %d %s", code, body)
	}
	var refs []string
	for _, j := range jobs {
		refs = append(refs, j.ReferenceNumber)
	}
	if !slices.Equal(refs, []string{"GRPC100", "XF100", "XF101"}) {
		t.Fatalf("stored jobs %q, want GRPC100, XF100, XF101", refs)
	}
	if j := jobs[2]; j.Title != "Port Drayage Owner Operator" || !j.TwicOnly || j.EmploymentType != "Full-Time" ||
		j.Description != "<p>Container moves between the ports and rail yards, home daily.</p>" {
		t.Errorf("XF101 stored as %+v", j)
	}
	if j := jobs[1]; j.TwicOnly || j.Description != "<p>Home <b>every weekend</b>. Late-model trucks, no touch freight.</p>" {
		t.Errorf("XF100 stored as %+v", j)
	}
}

// TestReadmeGoClientBuilds: the Go program of the README's "Go client"
// section compiles, as a module of its own beside examples/intake-client
// (whose run TestExamples checks).
func TestReadmeGoClientBuilds(t *testing.T) {
	root := repoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)\n### Go client\n.*?\n```go\n(.*?)\n```\n").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README: no ```go block in the section \"### Go client\"")
	}
	dir := t.TempDir()
	mod, err := os.ReadFile(filepath.Join(root, "examples", "intake-client", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "examples", "intake-client", "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"go.mod":  bytes.Replace(mod, []byte("=> ../.."), []byte("=> "+root), 1),
		"go.sum":  sum,
		"main.go": m[1],
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "readme-client"), ".")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Errorf("the README's Go client does not build: %v\n%s\n%s", err, out, m[1])
	}
}
