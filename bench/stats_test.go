package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestPairedDurationRatio(t *testing.T) {
	ms := func(xs ...int) []time.Duration {
		var d []time.Duration
		for _, x := range xs {
			d = append(d, time.Duration(x)*time.Millisecond)
		}
		return d
	}
	tests := []struct {
		name         string
		service, flr []time.Duration
		want         float64
		wantText     string
	}{
		{"none", nil, nil, 0, ""},
		{"pairs in round order, median of their ratios", ms(30, 10, 40), ms(20, 10, 10), 1.5, "1.50x, 1.00x, 4.00x"},
		{"a floor of zero is left out", ms(30, 10), ms(0, 5), 2, "2.00x"},
		{"unpaired rounds are left out", ms(10, 20, 30), ms(10), 1, "1.00x"},
		{"more than nine: count, range and middle half", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), ms(1, 1, 1, 1, 1, 1, 1, 1, 1, 1),
			6, "10 ratios, 1.00x to 10.00x, the middle half 3.00x to 8.00x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, text := pairedDurationRatio(tt.service, tt.flr)
			if got != tt.want || text != tt.wantText {
				t.Errorf("got %v %q, want %v %q", got, text, tt.want, tt.wantText)
			}
		})
	}
}

func TestTakeTurns(t *testing.T) {
	for _, tt := range []struct {
		round int
		want  string
	}{{0, "ab"}, {1, "ba"}, {2, "ab"}, {-1, "ba"}} {
		var order string
		side := func(name string) func() error { return func() error { order += name; return nil } }
		if err := takeTurns(tt.round, side("a"), side("b")); err != nil {
			t.Fatal(err)
		}
		if order != tt.want {
			t.Errorf("round %d ran %q, want %q", tt.round, order, tt.want)
		}
	}
}

func TestRepeatPairs(t *testing.T) {
	var order []string
	side := func(name string) pairSide {
		return pairSide{name: name,
			prepare: func(r int) error { order = append(order, fmt.Sprintf("prepare %s%d", name, r)); return nil },
			step:    func(r int) error { order = append(order, fmt.Sprintf("%s%d", name, r)); return nil }}
	}
	as, bs, err := repeatPairs(2, side("a"), side("b"))
	if err != nil {
		t.Fatal(err)
	}
	want := "prepare b-1 b-1 prepare a-1 a-1 prepare a0 a0 prepare b0 b0 prepare b1 b1 prepare a1 a1"
	if got := strings.Join(order, " "); got != want || len(as) != 2 || len(bs) != 2 {
		t.Errorf("ran %q with %d and %d samples, want %q and 2 each (the warm-up round not kept)", got, len(as), len(bs), want)
	}
	failing := pairSide{name: "floor", step: func(int) error { return errors.New("boom") }}
	if _, _, err := repeatPairs(2, side("a"), failing); err == nil || err.Error() != "floor: boom" {
		t.Errorf("a failing side: %v, want it named", err)
	}
}
