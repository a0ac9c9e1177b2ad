package jobs

import (
	"slices"
	"testing"
)

// TestWholeListPosition: a position reads back as written, and what no
// position wrote is refused.
func TestWholeListPosition(t *testing.T) {
	for _, p := range []wholeListPosition{
		{after: 812, mode: planNext},
		{after: 812, cuts: []int64{3762, 7524, 10000}, mode: planned},
		{after: 7524, cuts: []int64{10000}, mode: plannedThenWeighed},
		{after: 1 << 40, mode: plannedThenWeighed},
	} {
		got, ok := decodeWholeListPosition(p.encode())
		if !ok || got.after != p.after || got.mode != p.mode || !slices.Equal(got.cuts, p.cuts) {
			t.Errorf("%+v read back as %+v (%v)", p, got, ok)
		}
	}
	for _, tt := range []struct {
		name string
		raw  []byte
	}{
		{"empty", nil},
		{"no mode", []byte{5}},
		{"the list's end", []byte{5, byte(listEnds)}},
		{"no such mode", []byte{5, 9}},
		{"a cut that does not rise", []byte{5, byte(planned), 0}},
		{"a varint cut short", []byte{5, byte(planned), 0x80}},
	} {
		if p, ok := decodeWholeListPosition(tt.raw); ok {
			t.Errorf("%s: read as %+v", tt.name, p)
		}
	}
}
