package domain_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/truckjobs/jobboard/domain"
)

// TestJobFieldList: the tags describe every field with its kind, in
// JobInput's order.
func TestJobFieldList(t *testing.T) {
	type described struct {
		name     string
		kind     domain.FieldKind
		required bool
		words    int
	}
	want := []described{
		{"referenceNumber", domain.TextField, true, 0},
		{"title", domain.TextField, true, 0},
		{"city", domain.TextField, false, 0},
		{"state", domain.TextField, true, 0},
		{"postalCode", domain.TextField, false, 0},
		{"driverType", domain.WordField, true, 3},
		{"preference", domain.WordField, false, 5},
		{"freightType", domain.WordField, true, 13},
		{"payAmountMin", domain.AmountField, false, 0},
		{"payAmountMax", domain.AmountField, false, 0},
		{"payFrequency", domain.WordField, false, 3},
		{"employmentType", domain.WordsField, false, 4},
		{"routeType", domain.WordsField, false, 5},
		{"description", domain.HTMLField, true, 0},
		{"requirements", domain.HTMLField, false, 0},
		{"twicOnly", domain.FlagField, false, 0},
		{"licenseClass", domain.WordField, false, 4},
	}
	var got []described
	for _, f := range domain.JobFieldList() {
		got = append(got, described{f.Name, f.Kind, f.Required, len(f.Words)})
	}
	if !slices.Equal(got, want) {
		t.Errorf("JobFieldList =\n%v\nwant\n%v", got, want)
	}
}

// TestJobFieldAccessors: each accessor reaches its own member, both ways.
func TestJobFieldAccessors(t *testing.T) {
	field := func(name string) domain.JobField {
		f, ok := domain.JobFieldNamed(name)
		if !ok {
			t.Fatalf("no field %q", name)
		}
		return f
	}
	j := domain.JobFields{ReferenceNumber: "R1", City: new("Dallas"), DriverType: "Student",
		Preference: new(domain.Preference("Team")), PayMax: new(domain.Cents(1850)),
		RouteType: []domain.RouteType{"OTR", "LTL"}, TwicOnly: true}
	text := func(s string, given bool) string { return fmt.Sprint(s, " ", given) }
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"referenceNumber", text(field("referenceNumber").Text(&j)), "R1 true"},
		{"city", text(field("city").Text(&j)), "Dallas true"},
		{"city shared", field("city").OptionalText(&j) == j.City, true},
		{"postalCode", text(field("postalCode").Text(&j)), " false"},
		{"postalCode shared", field("postalCode").OptionalText(&j) == nil, true},
		{"driverType", text(field("driverType").Text(&j)), "Student true"},
		{"preference", text(field("preference").Text(&j)), "Team true"},
		{"payAmountMin", field("payAmountMin").Amount(&j) == nil, true},
		{"payAmountMax", *field("payAmountMax").Amount(&j), domain.Cents(1850)},
		{"routeType", slices.Equal(field("routeType").WordList(&j), []string{"OTR", "LTL"}), true},
		{"employmentType", len(field("employmentType").WordList(&j)), 0},
		{"twicOnly", field("twicOnly").Flag(&j), true},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, tt.got, tt.want)
		}
	}

	var in domain.JobInput
	field("title").SetText(&in, new("Driver"))
	field("freightType").SetText(&in, new("Flatbed"))
	field("payAmountMin").SetAmount(&in, new(domain.Cents(5)))
	field("employmentType").SetWordList(&in, []string{"Full-Time"})
	field("twicOnly").SetFlag(&in, true)
	if *in.Title != "Driver" || *in.FreightType != "Flatbed" || *in.PayMin != 5 || in.PayMax != nil ||
		!slices.Equal(in.EmploymentType, []domain.EmploymentType{"Full-Time"}) || !in.TwicOnly || in.City != nil {
		t.Errorf("set input = %+v", in)
	}
}

// TestJobFieldAccessorsRefuseAnotherKind: an accessor of one kind used on
// a field of another panics rather than read its memory as that kind.
func TestJobFieldAccessorsRefuseAnotherKind(t *testing.T) {
	pay, _ := domain.JobFieldNamed("payAmountMin")
	title, _ := domain.JobFieldNamed("title")
	var j domain.JobFields
	for name, reach := range map[string]func(){
		"an amount as text":           func() { pay.Text(&j) },
		"an amount as words":          func() { pay.WordList(&j) },
		"a text as a flag":            func() { title.Flag(&j) },
		"a required text as optional": func() { title.OptionalText(&j) },
		"a text set as an amount":     func() { title.SetAmount(&domain.JobInput{}, nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			reach()
		}()
	}
}
