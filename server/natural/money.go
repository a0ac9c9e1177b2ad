package natural

import (
	"strconv"
	"strings"
)

// Cents reads a non-negative decimal with at most two places, as the
// validation has accepted it ("18.5", "18.50", "0018"), as cents. Amounts
// too long for any column come out huge rather than wrapping, so a range
// check still refuses them.
func Cents(s string) int64 {
	whole, frac, _ := strings.Cut(s, ".")
	whole = strings.TrimLeft(whole, "0")
	if len(whole) > 12 {
		return 1 << 62
	}
	w, _ := strconv.ParseInt("0"+whole, 10, 64)
	f, _ := strconv.ParseInt((frac + "00")[:2], 10, 64)
	return w*100 + f
}

// Decimal writes cents as the lenient form's decimal with two places; a
// negative amount keeps its sign, so the validation refuses it as negative.
func Decimal(cents int64) string {
	sign := ""
	u := uint64(cents)
	if cents < 0 {
		sign, u = "-", uint64(-cents)
	}
	return sign + strconv.FormatUint(u/100, 10) + "." + strconv.FormatUint(u%100/10, 10) + strconv.FormatUint(u%10, 10)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func ptr[T any](v T) *T { return &v }
