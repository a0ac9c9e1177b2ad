package requestid

import (
	"strings"
	"testing"
)

// TestNew: a new id is 24 lowercase hex digits, valid by the rule clients'
// ids are held to, and not the one before it.
func TestNew(t *testing.T) {
	prev := ""
	for range 100 {
		id := New()
		if len(id) != 24 || strings.Trim(id, "0123456789abcdef") != "" || !Valid(id) {
			t.Fatalf("New() = %q, want 24 lowercase hex digits", id)
		}
		if id == prev {
			t.Fatalf("New() gave %q twice in a row", id)
		}
		prev = id
	}
}

func TestFromClient(t *testing.T) {
	for _, c := range []struct {
		name, in string
		kept     bool
	}{
		{"printable", "trace-1", true},
		{"longest", strings.Repeat("x", MaxLen), true},
		{"empty", "", false},
		{"too long", strings.Repeat("x", MaxLen+1), false},
		{"control character", "a\nb", false},
		{"not ASCII", "é", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := FromClient(c.in)
			if kept := got == c.in; kept != c.kept {
				t.Errorf("FromClient(%q) = %q, kept %v, want %v", c.in, got, kept, c.kept)
			}
			if !c.kept && len(got) != 24 {
				t.Errorf("FromClient(%q) = %q, want a new 24-digit id", c.in, got)
			}
		})
	}
}
