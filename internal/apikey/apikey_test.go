package apikey

import (
	"strings"
	"testing"
)

func TestNewIsValid(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		k := New()
		if !Valid(k) || seen[k] {
			t.Fatalf("New() = %q: valid %v, seen before %v", k, Valid(k), seen[k])
		}
		seen[k] = true
	}
}

func TestValid(t *testing.T) {
	key := New()
	for _, tt := range []struct {
		name string
		in   string
		want bool
	}{
		{"a new key", key, true},
		{"its prefix", Prefix(key), false},
		{"one digit short", key[:len(key)-1], false},
		{"one digit more", key + "0", false},
		{"another start", "jb_test_" + strings.TrimPrefix(key, "jb_live_"), false},
		{"not base62", key[:len(key)-1] + "-", false},
		{"empty", "", false},
	} {
		if got := Valid(tt.in); got != tt.want {
			t.Errorf("%s: Valid(%q) = %v, want %v", tt.name, tt.in, got, tt.want)
		}
	}
}

func TestHashAndPrefix(t *testing.T) {
	// SHA-256 of "abc", the FIPS 180-2 example.
	if got := Hash("abc"); got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("Hash(abc) = %s", got)
	}
	if got := Prefix("jb_live_0123456789"); got != "jb_live_012345" {
		t.Errorf("Prefix = %q, want jb_live_ and six digits", got)
	}
	if got := Prefix("jb_"); got != "jb_" {
		t.Errorf("Prefix of a short string = %q, want it whole", got)
	}
}
