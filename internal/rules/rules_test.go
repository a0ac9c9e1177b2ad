package rules

import "testing"

func TestBool(t *testing.T) {
	for _, tc := range []struct {
		in        string
		value, ok bool
	}{
		{"true", true, true},
		{"TRUE", true, true},
		{"True", true, true},
		{"1", true, true},
		{"false", false, true},
		{"FaLsE", false, true},
		{"0", false, true},
		{"", false, true},
		{"yes", false, false},
		{" true", false, false},
		{"2", false, false},
		{"01", false, false},
	} {
		value, ok := Bool(tc.in)
		if value != tc.value || ok != tc.ok {
			t.Errorf("Bool(%q) = %v, %v; want %v, %v", tc.in, value, ok, tc.value, tc.ok)
		}
	}
}

func TestOrEmpty(t *testing.T) {
	s := "x"
	if got := OrEmpty(&s); got != "x" {
		t.Errorf("OrEmpty(&%q) = %q", s, got)
	}
	if got := OrEmpty(nil); got != "" {
		t.Errorf("OrEmpty(nil) = %q", got)
	}
}
