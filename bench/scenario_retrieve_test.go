package main

import (
	"testing"
	"time"
)

func TestPairedRatio(t *testing.T) {
	run := func(perSecond int64) idRun {
		return idRun{load: loadResult{requests: perSecond, elapsed: time.Second}}
	}
	runs := func(rates ...int64) []idRun {
		var r []idRun
		for _, x := range rates {
			r = append(r, run(x))
		}
		return r
	}
	tests := []struct {
		name           string
		service, floor []idRun
		want           float64
		wantText       string
	}{
		{"one repetition", runs(80), runs(100), 0.8,
			" Ratio of each repetition to its own floor run: 0.80x; the ratio is their median."},
		// The machine slowed down in the second repetition: the ratio of
		// the medians (700/900) would mix runs of different spells.
		{"paired with the run next to it", runs(800, 450, 700), runs(1000, 500, 900), 0.8,
			" Ratio of each repetition to its own floor run: 0.80x, 0.90x, 0.78x; the ratio is their median."},
		{"a floor without calls is left out", runs(80, 90), runs(0, 100), 0.9,
			" Ratio of each repetition to its own floor run: 0.90x; the ratio is their median."},
		{"no floor", runs(80), nil, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, text := pairedRatio(tt.service, tt.floor)
			if diff := got - tt.want; diff > 1e-9 || diff < -1e-9 || text != tt.wantText {
				t.Errorf("pairedRatio = %v %q, want %v %q", got, text, tt.want, tt.wantText)
			}
		})
	}
}
