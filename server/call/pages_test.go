package call

import "testing"

// TestLimitParam: the feed's and the deliveries log's limit take the
// digits of a number in range as given, spaces included.
func TestLimitParam(t *testing.T) {
	tests := []struct {
		text string
		want int
		ok   bool
	}{
		{"", 100, true}, {"1", 1, true}, {"1000", 1000, true},
		{"0", 0, false}, {"1001", 0, false}, {"ten", 0, false}, {" 5", 0, false}, {"5 ", 0, false},
	}
	for _, tt := range tests {
		got, err := LimitParam(tt.text, 100, 1000)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("LimitParam(%q) = %d, %v; want %d, ok %v", tt.text, got, err, tt.want, tt.ok)
		}
	}
}
