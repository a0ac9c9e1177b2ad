package usstate

import "testing"

func TestName(t *testing.T) {
	for _, tt := range []struct {
		in, want string
		ok       bool
	}{
		{"TX", "Texas", true},
		{"tx", "Texas", true},
		{"dc", "District of Columbia", true},
		{"new york", "New York", true},
		{"NEBRASKA", "Nebraska", true},
		{"PR", "", false}, // a territory: jobs may be there, drivers not
		{"Tex", "", false},
		{"", "", false},
	} {
		got, ok := Name(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Name(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestIsCode(t *testing.T) {
	if len(names) != 51 {
		t.Errorf("%d codes, want the 50 states and DC", len(names))
	}
	for _, tt := range []struct {
		code string
		want bool
	}{{"WY", true}, {"DC", true}, {"wy", false}, {"PR", false}, {"Texas", false}} {
		if got := IsCode(tt.code); got != tt.want {
			t.Errorf("IsCode(%q) = %v, want %v", tt.code, got, tt.want)
		}
	}
}
