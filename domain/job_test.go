package domain_test

import (
	"testing"

	"github.com/truckjobs/jobboard/domain"
)

func TestCents(t *testing.T) {
	tests := []struct {
		decimal string
		cents   domain.Cents
		written string
	}{
		{"0", 0, "0.00"},
		{"18.5", 1850, "18.50"},
		{"18.50", 1850, "18.50"},
		{"0018", 1800, "18.00"},
		{"0.05", 5, "0.05"},
		{"1000000", domain.MaxPay, "1000000.00"},
		{"9999999999999", 1 << 62, "46116860184273879.04"}, // too long for any column: huge, never wrapped
	}
	for _, tt := range tests {
		got := domain.ParseCents(tt.decimal)
		if got != tt.cents {
			t.Errorf("ParseCents(%q) = %d, want %d", tt.decimal, got, tt.cents)
		}
		if s := got.Decimal(); s != tt.written {
			t.Errorf("%d cents written %q, want %q", got, s, tt.written)
		}
	}
	if s := domain.Cents(-5).Decimal(); s != "-0.05" {
		t.Errorf("-5 cents written %q, want -0.05", s)
	}
}

// TestWordListsAreDistinct: each closed field's words are distinct, as
// the gRPC enums' values 1..n stand for them in order.
func TestWordListsAreDistinct(t *testing.T) {
	lists := map[string][]string{
		"driver types":     domain.Names(domain.DriverTypes()),
		"preferences":      domain.Names(domain.Preferences()),
		"freight types":    domain.Names(domain.FreightTypes()),
		"pay frequencies":  domain.Names(domain.PayFrequencies()),
		"employment types": domain.Names(domain.EmploymentTypes()),
		"route types":      domain.Names(domain.RouteTypes()),
		"license classes":  domain.Names(domain.LicenseClasses()),
	}
	for name, words := range lists {
		seen := map[string]bool{}
		for _, w := range words {
			if w == "" || seen[w] {
				t.Errorf("%s: %q is empty or repeated", name, w)
			}
			seen[w] = true
		}
	}
}

// TestWordViews: the views read the same values as the copies, both ways.
func TestWordViews(t *testing.T) {
	words := []domain.RouteType{"OTR", "LTL", "Local"}
	names := domain.NamesView(words)
	if len(names) != 3 || names[0] != "OTR" || names[2] != "Local" {
		t.Fatalf("NamesView = %q", names)
	}
	back := domain.WordsView[domain.RouteType](names)
	if len(back) != 3 || back[1] != "LTL" {
		t.Fatalf("WordsView = %q", back)
	}
	if got := domain.NamesView[domain.RouteType](nil); len(got) != 0 {
		t.Fatalf("NamesView(nil) = %q", got)
	}
}

func BenchmarkDecimal(b *testing.B) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_ = domain.Cents(185000 + i%100).Decimal()
	}
}
