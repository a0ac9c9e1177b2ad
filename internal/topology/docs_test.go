package topology

import (
	"os"
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

// TestDeployDocCommands: the commands docs/deploy.md shows for the
// topology are the ones it runs, so the page cannot drift from what works.
func TestDeployDocCommands(t *testing.T) {
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
}
