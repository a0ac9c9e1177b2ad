// Package prometheus holds the service's alert rules (alerts.yml), for
// the Prometheus an operator runs and for the topology's own
// (internal/topology), which loads the same file.
package prometheus

import _ "embed"

// Alerts is alerts.yml: the alert rules, docs/operations.md's runbooks
// say what to do for each.
//
//go:embed alerts.yml
var Alerts []byte
