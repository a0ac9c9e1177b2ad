package jobboard

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/truckjobs/jobboard"

// importRule forbids the packages matched by from to depend, directly or
// not, on any package whose path starts with one of the prefixes in
// mustNotReach. The rules keep the layers of docs/architecture.md: the REST
// adapter never touches the database, the store speaks no wire form, and
// the shared internal packages know nothing of the services.
type importRule struct {
	name         string
	from         string // a package pattern for go list
	mustNotReach []string
}

var importRules = []importRule{
	{"the gateway never reaches the database or the queue", "./gateway/...",
		[]string{module + "/server/store", "github.com/lib/pq", "github.com/jmoiron/sqlx", "github.com/riverqueue/river"}},
	{"the domain types import nothing of the project or of a wire form", "./domain/...",
		[]string{module + "/", "google.golang.org/protobuf", "github.com/lib/pq", "github.com/jmoiron/sqlx"}},
	{"the store never reaches the generated API", "./server/store/...",
		[]string{module + "/gen/"}},
	{"internal packages never reach the services", "./internal/...",
		[]string{module + "/server/"}},
}

// TestImportRules checks each rule against the packages' dependencies as go
// list reports them (tests excluded: a test may start a whole server).
func TestImportRules(t *testing.T) {
	for _, rule := range importRules {
		t.Run(rule.name, func(t *testing.T) {
			for pkg, deps := range dependencies(t, rule.from) {
				for _, dep := range deps {
					if dep == pkg {
						continue
					}
					if slices.ContainsFunc(rule.mustNotReach, func(prefix string) bool { return strings.HasPrefix(dep, prefix) }) {
						t.Errorf("%s depends on %s", pkg, dep)
					}
				}
			}
		})
	}
}

// TestImportRulesFindAViolation shows the check can fail: cmd/jobboard
// reaches the store, so a rule forbidding it must report it.
func TestImportRulesFindAViolation(t *testing.T) {
	deps := dependencies(t, "./cmd/jobboard")[module+"/cmd/jobboard"]
	if !slices.Contains(deps, module+"/server/store") {
		t.Fatalf("go list -deps ./cmd/jobboard lacks the store: %d packages", len(deps))
	}
}

// dependencies maps each package of pattern to every package it depends on,
// itself included, from one go list.
func dependencies(t *testing.T, pattern string) map[string][]string {
	t.Helper()
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	list, err := exec.Command(goTool, "list", "-f", "{{.ImportPath}} {{join .Deps \" \"}}", pattern).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pattern, err)
	}
	out := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		if fields := strings.Fields(line); len(fields) > 0 {
			out[fields[0]] = fields
		}
	}
	if len(out) == 0 {
		t.Fatalf("go list %s: no packages", pattern)
	}
	return out
}
