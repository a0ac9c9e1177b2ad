package main

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// refusedMetric is the server's count of admission refusals by reason.
const refusedMetric = "jobboard_admission_refused_total"

// refusalCounts reads the server's refusals so far, by reason: the client
// sees only a 503, and the reason tells a line that was full from one that
// was judged too slow or a wait that ran out.
func refusalCounts(ctx context.Context, p *process) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.metricsBase+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("read the server's metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("read the server's metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parse the server's metrics: %w", err)
	}
	counts := map[string]float64{}
	for _, m := range families[refusedMetric].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "reason" {
				counts[l.GetValue()] = m.GetCounter().GetValue()
			}
		}
	}
	return counts, nil
}

// refusalNote says how many refusals of each reason came between two
// readings, the largest first; "" when there were none.
func refusalNote(before, after map[string]float64) string {
	type reason struct {
		name string
		n    float64
	}
	var reasons []reason
	for _, name := range slices.Sorted(maps.Keys(after)) {
		if n := after[name] - before[name]; n > 0 {
			reasons = append(reasons, reason{name, n})
		}
	}
	if len(reasons) == 0 {
		return ""
	}
	slices.SortStableFunc(reasons, func(a, b reason) int { return cmp.Compare(b.n, a.n) })
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		parts[i] = fmt.Sprintf("%s %.0f", r.name, r.n)
	}
	return "The server's reasons (" + refusedMetric + "): " + strings.Join(parts, ", ") + "."
}
