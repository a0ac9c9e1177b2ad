package rules

import (
	"regexp"
	"testing"
)

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

// zipRule is ReadZIP's rule as a regular expression says it: the five
// digits are its first group, the four its second.
var zipRule = regexp.MustCompile(`^(\d{5})(?:-?(\d{4}))?$`)

// zipByRule is what ReadZIP answers by zipRule.
func zipByRule(s string) (string, bool) {
	m := zipRule.FindStringSubmatch(s)
	switch {
	case m == nil:
		return "", false
	case m[2] != "":
		return m[1] + "-" + m[2], true
	default:
		return m[1], true
	}
}

func TestReadZIP(t *testing.T) {
	for _, tc := range []struct {
		in, zip string
		ok      bool
	}{
		{"75201", "75201", true},
		{"752011234", "75201-1234", true},
		{"75201-1234", "75201-1234", true},
		{"7520", "", false},
		{"7520A", "", false},
		{"75201-12", "", false},
		{"75201 1234", "", false},
		{"75201--1234", "", false},
		{"752011234-", "", false},
		{"٧٥٢٠١", "", false},
		{" 75201", "", false},
		{"", "", false},
	} {
		zip, ok := ReadZIP(tc.in)
		if zip != tc.zip || ok != tc.ok {
			t.Errorf("ReadZIP(%q) = %q, %v; want %q, %v", tc.in, zip, ok, tc.zip, tc.ok)
		}
		if wantZip, wantOK := zipByRule(tc.in); zip != wantZip || ok != wantOK {
			t.Errorf("ReadZIP(%q) = %q, %v; the rule says %q, %v", tc.in, zip, ok, wantZip, wantOK)
		}
	}
}

// FuzzReadZIP checks ReadZIP against zipRule for any text.
func FuzzReadZIP(f *testing.F) {
	for _, s := range []string{"75201", "75201-1234", "752011234", "7520-11234"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		zip, ok := ReadZIP(s)
		if wantZip, wantOK := zipByRule(s); zip != wantZip || ok != wantOK {
			t.Errorf("ReadZIP(%q) = %q, %v; the rule says %q, %v", s, zip, ok, wantZip, wantOK)
		}
	})
}
