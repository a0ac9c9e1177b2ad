package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRunGoTest runs the real go test -json on a small module with a
// passing and a failing package: the report shows both, the failure with
// its message, and the exit code is go test's.
func TestRunGoTest(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":         "module example.com/m\n\ngo 1.24\n",
		"good/a_test.go": "package good\n\nimport \"testing\"\n\nfunc TestGood(t *testing.T) { t.Log(\"quiet when passing\") }\n",
		"bad/b_test.go":  "package bad\n\nimport \"testing\"\n\nfunc TestBad(t *testing.T) { t.Errorf(\"want 1, got 2\") }\n",
		"notests/n.go":   "package notests\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	var stdout, stderr strings.Builder
	code := run([]string{"go", "test", "-json", "-count=1", "./..."}, &stdout, &stderr, time.Minute)
	if code != 1 {
		t.Errorf("exit code %d, want go test's 1; stderr:\n%s", code, stderr.String())
	}
	got := stdout.String()
	for _, want := range []string{
		"start  ./good\n", "ok     ./good  ", "start  ./bad\n", "b_test.go:5: want 1, got 2\n",
		"--- FAIL: TestBad (", "FAIL   ./bad  ", "FAIL: 1 of 2 packages failed in ", ": ./bad (TestBad)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("stdout:\n%s\nwant %q in it", got, want)
		}
	}
	for _, unwanted := range []string{"quiet when passing", "notests", "{\"Time\""} {
		if strings.Contains(got, unwanted) {
			t.Errorf("stdout:\n%s\nwant no %q in it", got, unwanted)
		}
	}
}
