package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium finds the browser scripts/ensure-chromium.sh installs (make test
// runs it first), or the one JOBBOARD_CHROMIUM names.
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("JOBBOARD_CHROMIUM"), "/usr/bin/chromium"} {
		if p != "" && fileExists(p) {
			return p
		}
	}
	t.Fatal("no Chromium for the /docs browser test: run scripts/ensure-chromium.sh, or set JOBBOARD_CHROMIUM")
	return ""
}

// chromiumHome gives the browser a home of its own, removed after the test,
// and its profile there. Chromium writes outside its profile too: a socket
// folder in TMPDIR (left behind when it is killed), crash-report settings in
// ~/.config/chromium and dconf's cache in ~/.cache. The home is made straight
// in TMPDIR, not by t.TempDir, whose longer path would put the socket over
// the length Unix sockets allow (about 107 bytes) under make test.
func chromiumHome(t *testing.T) []chromedp.ExecAllocatorOption {
	t.Helper()
	home, err := os.MkdirTemp("", "chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(home); err != nil {
			t.Errorf("remove the browser's home: %v", err)
		}
	})
	return []chromedp.ExecAllocatorOption{
		chromedp.Env("HOME="+home, "TMPDIR="+home,
			"XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache")),
		chromedp.UserDataDir(filepath.Join(home, "profile")),
	}
}

// keepScreenshot writes the page as the test saw it to artifactDir when the
// test fails, or on every run when JOBBOARD_TEST_ARTIFACTS names a folder: a
// passing run leaves nothing in the repository.
func keepScreenshot(t *testing.T, png []byte) {
	t.Cleanup(func() {
		if !t.Failed() && os.Getenv("JOBBOARD_TEST_ARTIFACTS") == "" {
			return
		}
		path := filepath.Join(artifactDir(t), "docs-page.png")
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Logf("screenshot not kept: %v", err)
			return
		}
		t.Logf("screenshot: %s", path)
	})
}

// artifactDir is where tests leave files for people to look at:
// JOBBOARD_TEST_ARTIFACTS, or test-artifacts/ at the top of the repository.
func artifactDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("JOBBOARD_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(repoRoot(t), "test-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestDocsPageInChromium opens /docs in a real headless Chromium, as an
// employer would: the page loads without console errors, shows the jobs,
// drivers and imports operations, and "Try it out" of GET
// /api/v2.0/jobs.json with a key pasted under Authorize gets 200.
func TestDocsPageInChromium(t *testing.T) {
	browser := chromium(t)
	env := migratedEnv(t)
	a := createAccount(t, env, "Docs Carrier")
	svc := startService(t, env)
	if code, _, body := svc.request("basic", a.APIKey, "POST", "/api/v2.0/jobs.json", twoJobs); code != 200 {
		t.Fatalf("post jobs: %d %s", code, body)
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		// This machine has no way out; without these Chromium keeps trying.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-quic", true),
		chromedp.WindowSize(1280, 1800),
	)
	opts = append(opts, chromiumHome(t)...)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()
	// The first run starts the browser; it must not carry the timeout, which
	// would end the browser with it.
	if err := chromedp.Do(browserCtx); err != nil {
		t.Fatalf("start %s: %v", browser, err)
	}

	// Collect every console error and uncaught exception from the start.
	consoleCtx, stopConsole := context.WithCancel(browserCtx)
	messages := chromedp.Console(consoleCtx)
	var consoleErrors []string
	consoleDone := make(chan struct{})
	go func() {
		defer close(consoleDone)
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				consoleErrors = append(consoleErrors, m.String())
			}
		}
	}()

	ctx, cancel := context.WithTimeout(browserCtx, 90*time.Second)
	defer cancel()
	const listJobs = "#operations-JobService-JobService_ListJobs"
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	var tags []string
	var status, responseBody string
	err := chromedp.Do(ctx,
		chromedp.Navigate(svc.httpBase+"/docs"),
		chromedp.WaitVisible(css(listJobs)),
		// Authorize with the key as the Basic user name.
		chromedp.Click(css(".auth-wrapper .authorize")),
		chromedp.WaitVisible(css(`.modal-ux input[name="username"]`)),
		chromedp.SendKeys(css(`.modal-ux input[name="username"]`), a.APIKey),
		chromedp.Click(css(".modal-ux .auth-btn-wrapper button.authorize")),
		chromedp.Click(css(".modal-ux .auth-btn-wrapper .btn-done")),
		chromedp.WaitNotPresent(css(".modal-ux")),
		// Open GET /api/v2.0/jobs.json, try it out, execute.
		chromedp.Click(css(listJobs+" .opblock-summary-control")),
		chromedp.Click(css(listJobs+" .try-out__btn")),
		chromedp.Click(css(listJobs+" .execute")),
		chromedp.WaitVisible(css(listJobs+" .live-responses-table tr.response .response-col_status")),
	)
	if err == nil {
		tags, err = chromedp.Run(ctx, chromedp.Evaluate[[]string](
			`Array.from(document.querySelectorAll(".opblock-tag-section .opblock-tag")).map(e => e.dataset.tag)`))
	}
	if err == nil {
		status, err = chromedp.Run(ctx, chromedp.Text(css(listJobs+" .live-responses-table tr.response .response-col_status")))
	}
	if err == nil {
		responseBody, err = chromedp.Run(ctx, chromedp.Text(css(listJobs+" .live-responses-table .response-col_description pre")))
	}
	// The screenshot shows the answer, or the page as it was when a step failed.
	shotCtx, cancelShot := context.WithTimeout(browserCtx, 20*time.Second)
	defer cancelShot()
	if shot, serr := chromedp.Run(shotCtx, chromedp.FullScreenshot(100)); serr == nil {
		keepScreenshot(t, shot)
	}
	stopConsole()
	<-consoleDone
	if err != nil {
		t.Fatalf("driving /docs: %v\nconsole errors: %q", err, consoleErrors)
	}

	for _, want := range []string{"JobService", "DriverService", "JobImportService"} {
		if !slices.Contains(tags, want) {
			t.Errorf("the page lists %q, want %s among them", tags, want)
		}
	}
	if strings.TrimSpace(status) != "200" {
		t.Errorf("try it out of GET /api/v2.0/jobs.json: status %q, want 200; body %s", status, responseBody)
	}
	if !strings.Contains(responseBody, `"referenceNumber"`) {
		t.Errorf("try it out answered %q, want the account's jobs", responseBody)
	}
	if len(consoleErrors) > 0 {
		t.Errorf("console errors on /docs:\n%s", strings.Join(consoleErrors, "\n"))
	}
}
