package topology

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// shellWord quotes w for sh when it needs it.
func shellWord(w string) string {
	if strings.ContainsAny(w, " ?&'\"$") {
		return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return w
}

// TestDocCommands: the commands docs/deploy.md and docs/operations.md
// show for the topology are the ones it runs, so the pages cannot drift
// from what works: the account command is the one CreateAccount runs, and
// each procedure's make target runs the topology's command that the
// scenarios call.
func TestDocCommands(t *testing.T) {
	doc, err := os.ReadFile("../../docs/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	words := []string{"CONTAINERS_CONF=deploy/image/containers.conf", "podman", "--runtime", "runc"}
	for _, w := range accountArgs("localhost/jobboard:latest", "Acme Freight") {
		words = append(words, shellWord(w))
	}
	if cmd := strings.Join(words, " "); !strings.Contains(string(doc), "\n"+cmd+"\n") {
		t.Errorf("docs/deploy.md does not show the account command on a line of its own:\n%s", cmd)
	}
	ops, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct{ shown, target, runs string }{
		{"make topology-replica N=2", "topology-replica:", `$(TOPOLOGY) replica "$(N)"`},
		{"for n in 1 2 3; do make topology-replica N=$n; done", "topology-replica:", `$(TOPOLOGY) replica "$(N)"`},
		{"make topology-upgrade IMAGE=localhost/jobboard:<revision>", "topology-upgrade:", `$(TOPOLOGY) upgrade`},
		{"make topology-failover", "topology-failover:", `$(TOPOLOGY) failover`},
		{"make topology-new-standby", "topology-new-standby:", `$(TOPOLOGY) new-standby`},
		{"make topology-switchover", "topology-switchover:", `$(TOPOLOGY) switchover`},
		{"make topology-rotate-internal-token", "topology-rotate-internal-token:", `$(TOPOLOGY) rotate-internal-token`},
		{"make topology-retire-internal-token", "topology-retire-internal-token:", `$(TOPOLOGY) retire-internal-token`},
		{"make topology-backup", "topology-backup:", `$(TOPOLOGY) backup $(if $(filter 1,$(FULL)),full,incremental)`},
		{`make topology-restore TARGET="2026-12-05 13:42:05+00"`, "topology-restore:", `$(TOPOLOGY) restore "$(TARGET)"`},
	} {
		if !strings.Contains(string(ops), "\n"+p.shown+"\n") {
			t.Errorf("docs/operations.md does not show %q on a line of its own", p.shown)
		}
		recipe := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(p.target) + `.*\n\t@` + regexp.QuoteMeta(p.runs) + `$`)
		if !recipe.Match(makefile) {
			t.Errorf("the Makefile has no target %s running %s", p.target, p.runs)
		}
	}
}
