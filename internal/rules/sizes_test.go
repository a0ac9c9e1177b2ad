package rules_test

import (
	"testing"

	"github.com/truckjobs/jobboard/internal/rules"
)

func TestGroupDigits(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 16777216: "16,777,216", -1234567: "-1,234,567"} {
		if got := rules.GroupDigits(n); got != want {
			t.Errorf("rules.GroupDigits(%d) = %q, want %q", n, got, want)
		}
	}
}
