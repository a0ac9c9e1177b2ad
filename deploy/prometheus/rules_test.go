// The tests of package prometheus check that the alert rules, their unit tests
// and their runbooks (docs/operations.md) keep to one another: promtool
// (make test-alerts) checks what each rule does, this what surrounds it.
package prometheus_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

type ruleFile struct {
	Groups []struct {
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

type testFile struct {
	Tests []struct {
		Cases []struct {
			Alert     string `yaml:"alertname"`
			ExpAlerts []any  `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	} `yaml:"tests"`
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestEveryAlertTestedAndDocumented: each alert has a severity, a runbook
// annotation pointing at its own section of docs/operations.md, a unit
// test where it fires and one where it must not; and every alert section
// of the runbooks is an alert that exists.
func TestEveryAlertTestedAndDocumented(t *testing.T) {
	var rules ruleFile
	readYAML(t, "alerts.yml", &rules)
	var tests testFile
	readYAML(t, "alerts_test.yml", &tests)
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^### (Jobboard\w+)$`).FindAllStringSubmatch(string(doc), -1) {
		sections[m[1]] = true
	}
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, g := range tests.Tests {
		for _, c := range g.Cases {
			if len(c.ExpAlerts) > 0 {
				fires[c.Alert] = true
			} else {
				quiet[c.Alert] = true
			}
		}
	}
	alerts := map[string]bool{}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			alerts[r.Alert] = true
			if s := r.Labels["severity"]; s != "page" && s != "ticket" {
				t.Errorf("%s: severity %q, want page or ticket", r.Alert, s)
			}
			if want := "docs/operations.md#" + strings.ToLower(r.Alert); r.Annotations["runbook"] != want {
				t.Errorf("%s: runbook %q, want %q", r.Alert, r.Annotations["runbook"], want)
			}
			if r.Annotations["summary"] == "" {
				t.Errorf("%s: no summary", r.Alert)
			}
			if !sections[r.Alert] {
				t.Errorf("%s: no section ### %s in docs/operations.md", r.Alert, r.Alert)
			}
			if !fires[r.Alert] {
				t.Errorf("%s: no unit test in alerts_test.yml where it fires", r.Alert)
			}
			if !quiet[r.Alert] {
				t.Errorf("%s: no unit test in alerts_test.yml where it must not fire", r.Alert)
			}
		}
	}
	if len(alerts) == 0 {
		t.Fatal("no alert read from alerts.yml")
	}
	for name := range sections {
		if !alerts[name] {
			t.Errorf("docs/operations.md has a section for %s, which alerts.yml does not define", name)
		}
	}
}
