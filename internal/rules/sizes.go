package rules

import (
	"strconv"
	"strings"
)

// MiB writes a size in MiB: "16 MiB", "1.5 MiB".
func MiB(n int) string {
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', -1, 64) + " MiB"
}

// GroupDigits writes n with a comma between groups of three digits.
func GroupDigits(n int) string {
	if n < 0 {
		return "-" + GroupDigits(-n)
	}
	s := strconv.Itoa(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
