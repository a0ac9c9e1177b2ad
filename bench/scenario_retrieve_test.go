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

func TestErrorsNote(t *testing.T) {
	ok := idRun{load: loadResult{requests: 100}, service: true}
	cases := []struct {
		name string
		runs []idRun
		want string
	}{
		{"no errors", []idRun{ok, ok}, ""},
		{"refused by admission", []idRun{ok, {load: loadResult{errors: 31734}, service: true,
			refusals: "The server's reasons (jobboard_admission_refused_total): wait_timeout 31734."}},
			" Runs with errors: 1 of 2: 31734 errors (The server's reasons (jobboard_admission_refused_total): wait_timeout 31734)."},
		{"errors without refusals", []idRun{{load: loadResult{errors: 3}, service: true}, ok, ok},
			" Runs with errors: 1 of 3: 3 errors (the server counted no admission refusals)."},
		{"a floor's errors", []idRun{{load: loadResult{errors: 2}}, {load: loadResult{errors: 5}}},
			" Runs with errors: 2 of 2: 2 errors; 5 errors."},
	}
	for _, c := range cases {
		if got := errorsNote(c.runs); got != c.want {
			t.Errorf("%s: errorsNote = %q\nwant %q", c.name, got, c.want)
		}
	}
}
