package natural

import (
	"strconv"

	"github.com/truckjobs/jobboard/domain"
)

// Cents reads a decimal the validation has accepted as cents
// (domain.ParseCents).
func Cents(s string) int64 { return int64(domain.ParseCents(s)) }

// Decimal writes cents as the lenient form's decimal with two places; a
// negative amount keeps its sign, so the validation refuses it as negative.
func Decimal(cents int64) string { return domain.Cents(cents).Decimal() }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
