package jobs

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/truckjobs/jobboard/domain"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/internal/rules"
	"github.com/truckjobs/jobboard/server/call"
)

// validInput is a job that passes every rule; cases change one field.
func validInput() *restv2.JobInput {
	return &restv2.JobInput{
		ReferenceNumber: new("A1"), Title: new("Driver"), State: new("TX"),
		DriverType: new("Company Driver"), FreightType: new("Dry Van"), Description: new("Good job"),
	}
}

// checkEdited checks validInput after edit has changed it.
func checkEdited(v *jobValidator, edit func(*restv2.JobInput)) (domain.JobFields, []fieldProblem, []ignoredField) {
	in := validInput()
	edit(in)
	return v.check(in)
}

func TestJobRulesProblems(t *testing.T) {
	long := func(n int) *string { return new(strings.Repeat("x", n)) }
	tests := []struct {
		name    string
		edit    func(j *restv2.JobInput)
		kind    problemKind
		field   string
		message string
	}{
		{"reference missing", func(j *restv2.JobInput) { j.ReferenceNumber = nil }, missingProblem, "referenceNumber", "referenceNumber is required"},
		{"reference blank", func(j *restv2.JobInput) { j.ReferenceNumber = new("  ") }, missingProblem, "referenceNumber", "referenceNumber is required"},
		{"reference punctuation", func(j *restv2.JobInput) { j.ReferenceNumber = new("A-1") }, invalidProblem, "referenceNumber", `referenceNumber: "A-1" must be 1-64 letters and digits`},
		{"reference too long", func(j *restv2.JobInput) { j.ReferenceNumber = new(strings.Repeat("a", 65)) }, invalidProblem, "referenceNumber", ""},
		{"title missing", func(j *restv2.JobInput) { j.Title = nil }, missingProblem, "title", "title is required"},
		{"title blank", func(j *restv2.JobInput) { j.Title = new("") }, missingProblem, "title", "title is required"},
		{"title too long", func(j *restv2.JobInput) { j.Title = long(256) }, invalidProblem, "title", ""},
		{"city too long", func(j *restv2.JobInput) { j.City = long(101) }, invalidProblem, "city", ""},
		{"state missing", func(j *restv2.JobInput) { j.State = nil }, missingProblem, "state", "state is required"},
		{"state unknown", func(j *restv2.JobInput) { j.State = new("XX") }, invalidProblem, "state", `state: "XX" is not a US state code`},
		{"state full name", func(j *restv2.JobInput) { j.State = new("Texas") }, invalidProblem, "state", ""},
		{"zip four digits", func(j *restv2.JobInput) { j.PostalCode = new("1234") }, invalidProblem, "postalCode", `postalCode: "1234" is not a ZIP code (12345 or 12345-6789)`},
		{"zip letters", func(j *restv2.JobInput) { j.PostalCode = new("7520A") }, invalidProblem, "postalCode", ""},
		{"zip bad plus four", func(j *restv2.JobInput) { j.PostalCode = new("75201-12") }, invalidProblem, "postalCode", ""},
		{"driver type missing", func(j *restv2.JobInput) { j.DriverType = nil }, missingProblem, "driverType", "driverType is required"},
		{"driver type unknown", func(j *restv2.JobInput) { j.DriverType = new("Trucker") }, invalidProblem, "driverType", `driverType: "Trucker" is not one of Owner Operator, Company Driver, Student`},
		{"freight type missing", func(j *restv2.JobInput) { j.FreightType = nil }, missingProblem, "freightType", "freightType is required"},
		{"freight type unknown", func(j *restv2.JobInput) { j.FreightType = new("Livestock") }, invalidProblem, "freightType", ""},
		{"preference unknown", func(j *restv2.JobInput) { j.Preference = new("Solo") }, invalidProblem, "preference", ""},
		{"pay frequency unknown", func(j *restv2.JobInput) { j.PayFrequency = new("Daily") }, invalidProblem, "payFrequency", ""},
		{"license class unknown", func(j *restv2.JobInput) { j.LicenseClass = new("D") }, invalidProblem, "licenseClass", ""},
		{"pay three places", func(j *restv2.JobInput) { j.PayAmountMin = new("18.505") }, invalidProblem, "payAmountMin", `payAmountMin: "18.505" must be a decimal number with at most two decimal places`},
		{"pay negative", func(j *restv2.JobInput) { j.PayAmountMax = new("-1") }, invalidProblem, "payAmountMax", `payAmountMax: "-1" must not be negative`},
		{"pay not a number", func(j *restv2.JobInput) { j.PayAmountMin = new("lots") }, invalidProblem, "payAmountMin", ""},
		{"pay exponent", func(j *restv2.JobInput) { j.PayAmountMin = new("1e3") }, invalidProblem, "payAmountMin", ""},
		{"pay too large", func(j *restv2.JobInput) { j.PayAmountMin = new("1000000.01") }, invalidProblem, "payAmountMin", `payAmountMin: "1000000.01" must be at most 1000000`},
		{"pay huge", func(j *restv2.JobInput) { j.PayAmountMin = new(strings.Repeat("9", 40)) }, invalidProblem, "payAmountMin", ""},
		{"min above max", func(j *restv2.JobInput) { j.PayAmountMin, j.PayAmountMax = new("20"), new("19.99") }, invalidProblem, "payAmountMin", `payAmountMin: "20" is greater than payAmountMax "19.99"`},
		{"employment unknown", func(j *restv2.JobInput) { j.EmploymentType = []string{"Full-Time", "Seasonal"} }, invalidProblem, "employmentType", `employmentType: "Seasonal" is not one of Full-Time, Part-Time, Temporary, Permanent`},
		{"route unknown", func(j *restv2.JobInput) { j.RouteType = []string{"Coastal"} }, invalidProblem, "routeType", ""},
		{"employment many unknown: one entry", func(j *restv2.JobInput) { j.EmploymentType = []string{"Seasonal", "Full-Time", "Gig", "x\x00"} }, invalidProblem, "employmentType",
			`employmentType: "Seasonal" is not one of Full-Time, Part-Time, Temporary, Permanent (nor are 2 more of the values sent)`},
		{"route eleven values", func(j *restv2.JobInput) { j.RouteType = strings.Split(strings.Repeat("OTR,", 10)+"OTR", ",") }, invalidProblem, "routeType",
			"routeType: 11 values were sent; at most 10 are accepted"},
		{"employment ten thousand bad values", func(j *restv2.JobInput) { j.EmploymentType = strings.Split(strings.Repeat("x,", 9_999)+"x", ",") }, invalidProblem, "employmentType",
			"employmentType: 10000 values were sent; at most 10 are accepted"},
		{"description missing", func(j *restv2.JobInput) { j.Description = nil }, missingProblem, "description", "description is required"},
		{"description blank", func(j *restv2.JobInput) { j.Description = new(" \n ") }, missingProblem, "description", ""},
		{"description too long", func(j *restv2.JobInput) { j.Description = long(50_001) }, invalidProblem, "description", ""},
		{"description too long once escaped", func(j *restv2.JobInput) { j.Description = new(strings.Repeat("&", 20_000)) }, invalidProblem, "description", ""},
		{"description only script", func(j *restv2.JobInput) { j.Description = new("<script>alert(1)</script>") }, invalidProblem, "description", ""},
		{"requirements too long", func(j *restv2.JobInput) { j.Requirements = long(50_001) }, invalidProblem, "requirements", ""},
		{"twic unknown", func(j *restv2.JobInput) { j.TwicOnly = new("yes") }, invalidProblem, "twicOnly", `twicOnly: "yes" is not a boolean (true, false, 1 or 0)`},
		{"NUL in title", func(j *restv2.JobInput) { j.Title = new("a\x00b") }, invalidProblem, "title", ""},
		{"NUL in city", func(j *restv2.JobInput) { j.City = new("a\x00b") }, invalidProblem, "city", ""},
	}
	v := newJobValidator()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, problems, _ := checkEdited(v, tt.edit)
			if len(problems) != 1 {
				t.Fatalf("got %d problems, want 1: %+v", len(problems), problems)
			}
			p := problems[0]
			if p.kind != tt.kind || p.field != tt.field {
				t.Errorf("got kind %d field %q, want kind %d field %q", p.kind, p.field, tt.kind, tt.field)
			}
			if tt.message != "" && p.message != tt.message {
				t.Errorf("message:\n got  %s\n want %s", p.message, tt.message)
			}
			if p.kind == invalidProblem && !strings.Contains(p.message, tt.field) {
				t.Errorf("message %q does not name the field", p.message)
			}
		})
	}
}

func TestJobRulesNormalise(t *testing.T) {
	tests := []struct {
		name string
		edit func(j *restv2.JobInput)
		want func(f *domain.JobFields)
	}{
		{"state lower case", func(j *restv2.JobInput) { j.State = new("tx") }, func(f *domain.JobFields) {}},
		{"enums any case", func(j *restv2.JobInput) {
			j.DriverType, j.FreightType, j.Preference = new("OWNER operator"), new("drop AND hook"), new("lease purchase team solo")
			j.PayFrequency, j.LicenseClass = new("per mile"), new("none")
		}, func(f *domain.JobFields) {
			f.DriverType, f.FreightType, f.Preference = "Owner Operator", "Drop and Hook", new(domain.Preference("Lease Purchase Team Solo"))
			f.PayFrequency, f.LicenseClass = new(domain.PayFrequency("Per Mile")), new(domain.LicenseClass("None"))
		}},
		{"territory", func(j *restv2.JobInput) { j.State = new("pr") }, func(f *domain.JobFields) { f.State = "PR" }},
		{"zip nine digits", func(j *restv2.JobInput) { j.PostalCode = new("752011234") }, func(f *domain.JobFields) { f.PostalCode = new("75201-1234") }},
		{"zip plus four", func(j *restv2.JobInput) { j.PostalCode = new("75201-1234") }, func(f *domain.JobFields) { f.PostalCode = new("75201-1234") }},
		{"zip five", func(j *restv2.JobInput) { j.PostalCode = new(" 07030 ") }, func(f *domain.JobFields) { f.PostalCode = new("07030") }},
		{"pay two places", func(j *restv2.JobInput) { j.PayAmountMin, j.PayAmountMax = new("18.5"), new("22") }, func(f *domain.JobFields) {
			f.PayMin, f.PayMax = new(domain.Cents(1850)), new(domain.Cents(2200))
		}},
		{"pay equal bounds", func(j *restv2.JobInput) { j.PayAmountMin, j.PayAmountMax = new("20.00"), new("20") }, func(f *domain.JobFields) {
			f.PayMin, f.PayMax = new(domain.Cents(2000)), new(domain.Cents(2000))
		}},
		{"pay zero", func(j *restv2.JobInput) { j.PayAmountMin = new("0") }, func(f *domain.JobFields) { f.PayMin = new(domain.Cents(0)) }},
		{"ten list values accepted", func(j *restv2.JobInput) {
			j.RouteType = strings.Split(strings.Repeat("otr,", 9)+"Local", ",")
		}, func(f *domain.JobFields) { f.RouteType = []domain.RouteType{"OTR", "Local"} }},
		{"lists dedup in order", func(j *restv2.JobInput) {
			j.EmploymentType = []string{"part-time", "Full-Time", "PART-TIME", ""}
			j.RouteType = []string{"ltl", "otr"}
		}, func(f *domain.JobFields) {
			f.EmploymentType = []domain.EmploymentType{"Part-Time", "Full-Time"}
			f.RouteType = []domain.RouteType{"LTL", "OTR"}
		}},
		{"twic true", func(j *restv2.JobInput) { j.TwicOnly = new("TRUE") }, func(f *domain.JobFields) { f.TwicOnly = true }},
		{"twic 1", func(j *restv2.JobInput) { j.TwicOnly = new("1") }, func(f *domain.JobFields) { f.TwicOnly = true }},
		{"twic 0", func(j *restv2.JobInput) { j.TwicOnly = new("0") }, func(f *domain.JobFields) {}},
		{"twic empty", func(j *restv2.JobInput) { j.TwicOnly = new("") }, func(f *domain.JobFields) {}},
		{"optional blanks unset", func(j *restv2.JobInput) {
			j.City, j.PostalCode, j.Preference, j.Requirements = new(""), new(" "), new(""), new("")
		}, func(f *domain.JobFields) {}},
		{"text trimmed", func(j *restv2.JobInput) { j.Title, j.City = new("  Driver \n"), new(" Waco ") }, func(f *domain.JobFields) { f.City = new("Waco") }},
		{"basic html kept", func(j *restv2.JobInput) {
			j.Description = new(`<p><b>B</b> <i>I</i> <u>U</u> <em>E</em> <strong>S</strong><br></p><ul><li>1</li></ul><ol><li>2</li></ol><a href="https://example.com/x">link</a>`)
		}, func(f *domain.JobFields) {
			f.Description = `<p><b>B</b> <i>I</i> <u>U</u> <em>E</em> <strong>S</strong><br></p><ul><li>1</li></ul><ol><li>2</li></ol><a href="https://example.com/x">link</a>`
		}},
		// A > in text is stored as &gt;, so rich text never holds the ]]>
		// that would end its XML CDATA section (docs/api.md, Formats).
		{"]]> in rich text", func(j *restv2.JobInput) { j.Description, j.Requirements = new("<p>a ]]> b</p>"), new("]]>") },
			func(f *domain.JobFields) { f.Description, f.Requirements = "<p>a ]]&gt; b</p>", new("]]&gt;") }},
	}
	v := newJobValidator()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, problems, ignored := checkEdited(v, tt.edit)
			if len(problems) > 0 || len(ignored) > 0 {
				t.Fatalf("problems %+v, ignored %+v", problems, ignored)
			}
			want := domain.JobFields{ReferenceNumber: "A1", Title: "Driver", State: "TX", DriverType: "Company Driver",
				FreightType: "Dry Van", Description: "Good job", EmploymentType: []domain.EmploymentType{}, RouteType: []domain.RouteType{}}
			tt.want(&want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
		})
	}
}

func TestJobRulesIgnoredValues(t *testing.T) {
	tests := []struct {
		name        string
		edit        func(j *restv2.JobInput)
		wantField   string
		wantMessage string
		wantText    string // description once saved
	}{
		{"unknown field", func(j *restv2.JobInput) {
			j.ExtraFields = []*restv2.ExtraField{{Name: "benefits", Value: new("Dental")}}
		}, "benefits", "unknown field benefits was ignored", "Good job"},
		{"id sent", func(j *restv2.JobInput) { j.ExtraFields = []*restv2.ExtraField{{Name: "id", Value: new("7")}} },
			"id", "id is assigned by the service and was ignored", "Good job"},
		{"date sent", func(j *restv2.JobInput) { j.ExtraFields = []*restv2.ExtraField{{Name: "date"}} },
			"date", "date is assigned by the service and was ignored", "Good job"},
		{"NUL in an unknown field's name", func(j *restv2.JobInput) {
			j.ExtraFields = []*restv2.ExtraField{{Name: "ben\x00", Value: new("x")}}
		}, `ben\x00`, `unknown field ben\x00 was ignored`, "Good job"},
		{"script removed", func(j *restv2.JobInput) { j.Description = new("<p>Hi</p><script>alert(1)</script>") },
			"description", "", "<p>Hi</p>"},
		{"attribute removed", func(j *restv2.JobInput) { j.Description = new(`<p onclick="x()">Hi</p>`) },
			"description", "", "<p>Hi</p>"},
		{"javascript link removed", func(j *restv2.JobInput) { j.Description = new(`<a href="javascript:x()">Hi</a>`) },
			"description", "", "Hi"},
		{"table removed", func(j *restv2.JobInput) { j.Description = new(`<table><tr><td>Hi</td></tr></table>`) },
			"description", "", "Hi"},
	}
	v := newJobValidator()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, problems, ignored := checkEdited(v, tt.edit)
			if len(problems) > 0 {
				t.Fatalf("problems %+v", problems)
			}
			if len(ignored) != 1 || ignored[0].field != tt.wantField {
				t.Fatalf("ignored = %+v, want one for %s", ignored, tt.wantField)
			}
			if tt.wantMessage != "" && ignored[0].message != tt.wantMessage {
				t.Errorf("message %q, want %q", ignored[0].message, tt.wantMessage)
			}
			if got.Description != tt.wantText {
				t.Errorf("description %q, want %q", got.Description, tt.wantText)
			}
		})
	}
}

// TestEchoedValues: a value returned in an entry is cut to maxEchoed
// characters, and a NUL in it is written \x00, as messages quote it.
func TestEchoedValues(t *testing.T) {
	long := strings.Repeat("é", call.MaxEchoed)
	tests := []struct {
		name string
		in   *string
		want *string
	}{
		{"absent", nil, nil},
		{"plain", new("Dental"), new("Dental")},
		{"NUL", new("x\x00y\x00"), new(`x\x00y\x00`)},
		{"long", new(long + "tail"), new(long + "…")},
		{"long with NUL", new("\x00" + long), new(`\x00` + long[:len(long)-len("é")] + "…")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := call.Echoed(tt.in); !cmp.Equal(got, tt.want) {
				got, want := rules.OrEmpty(got), rules.OrEmpty(tt.want)
				t.Errorf("call.Echoed(%.40q) = %.40q (%d bytes), want %.40q (%d bytes)", rules.OrEmpty(tt.in), got, len(got), want, len(want))
			}
		})
	}
}

func TestSanitizerSpellingIsNotRemoval(t *testing.T) {
	h := newHTMLSanitizer()
	for _, s := range []string{"Tom & Jerry", `<a href='https://x.test/'>x</a>`, "<P>Hi</P>", "5 < 6", "<br/>"} {
		if _, removed := h.sanitize(s); removed {
			t.Errorf("%q: reported as removed HTML", s)
		}
	}
}

// TestSanitizerRemembers: a text seen before gets the same answer without
// being sanitised again, and the memory stays within its bound.
func TestSanitizerRemembers(t *testing.T) {
	h := newHTMLSanitizer()
	for _, text := range []string{"<p>Home <b>weekly</b></p>", `<p onclick="x()">CDL</p><script>alert(1)</script>`, "plain & simple"} {
		clean1, removed1 := h.sanitize(text)
		clean2, removed2 := h.sanitize(text)
		want, wantRemoved := h.sanitizeText(text)
		if clean1 != want || clean2 != want || removed1 != wantRemoved || removed2 != wantRemoved {
			t.Errorf("%q: first %q %v, again %q %v, want %q %v", text, clean1, removed1, clean2, removed2, want, wantRemoved)
		}
	}
	// Texts that clean to something long count with their result.
	big := strings.Repeat("x&", maxRemembered/(64*6))
	for i := range 400 {
		h.sanitize(fmt.Sprintf("%d%s", i, big))
	}
	if h.size > maxRemembered {
		t.Errorf("remembers %d bytes, more than %d", h.size, maxRemembered)
	}
	h.sanitize(strings.Repeat("<", maxRemembered)) // too big to remember
	if h.size > maxRemembered {
		t.Errorf("remembers %d bytes after a huge text", h.size)
	}

}

// TestJobRulesBoundedEntries: however many values or fields a job sends,
// its entries stay few (docs/api.md, Limits against abuse): one problem per field, ten
// unknown fields named one by one and the rest in one entry.
func TestJobRulesBoundedEntries(t *testing.T) {
	v := newJobValidator()
	in := validInput()
	in.State = new("a\x00b")
	in.EmploymentType = strings.Split(strings.Repeat("bad,", 5)+"bad", ",")
	in.RouteType = []string{"Coastal", "Inland"}
	for i := range 1000 {
		in.ExtraFields = append(in.ExtraFields, &restv2.ExtraField{Name: fmt.Sprintf("f%d", i), Value: new("v")})
	}
	_, problems, ignored := v.check(in)
	fields := map[string]int{}
	for _, p := range problems {
		fields[p.field]++
	}
	if diff := cmp.Diff(map[string]int{"state": 1, "employmentType": 1, "routeType": 1}, fields); diff != "" {
		t.Errorf("problems by field (-want +got):\n%s", diff)
	}
	if len(ignored) != maxIgnoredFields+1 {
		t.Fatalf("%d ignored entries, want %d", len(ignored), maxIgnoredFields+1)
	}
	last := ignored[maxIgnoredFields]
	if last.field != "" || last.message != "990 more unknown fields were ignored" || !strings.HasPrefix(*last.value, "f10, f11, ") || len(*last.value) > call.MaxEchoed+8 {
		t.Errorf("last ignored entry %q %q %.60q (%d bytes)", last.field, last.message, *last.value, len(*last.value))
	}
}

// TestEveryTextFieldHasItsRule: a text field is checked by a rule of its
// own (a length, a pattern), so a new one cannot be stored unchecked.
func TestEveryTextFieldHasItsRule(t *testing.T) {
	for _, f := range domain.JobFieldList() {
		if _, ok := textRules[f.Name]; (f.Kind == domain.TextField) != ok {
			t.Errorf("%s (kind %d): has a text rule %v", f.Name, f.Kind, ok)
		}
	}
}

// The rules of reference numbers and amounts as regular expressions say
// them, against which their loops are checked.
var (
	referenceRule = regexp.MustCompile(`^[A-Za-z0-9]+$`)
	decimalRule   = regexp.MustCompile(`^\d+(?:\.\d{1,2})?$`)
)

func TestReadsLikeTheRules(t *testing.T) {
	for _, s := range []string{"", "0", "12", "12.", "12.5", "12.50", "12.505", ".5", "1.2.3", "1e5", "-1", "+1", "12 ", " 12",
		"١٢", "12.٥", "A1", "a-1", "Z9z", "AB_1", "é1", "12\n", "0.00", "007.1", "12.5\x00"} {
		if got, want := isDecimal(s), decimalRule.MatchString(s); got != want {
			t.Errorf("isDecimal(%q) = %v, want %v", s, got, want)
		}
		if got, want := lettersAndDigits(s), referenceRule.MatchString(s); got != want {
			t.Errorf("lettersAndDigits(%q) = %v, want %v", s, got, want)
		}
	}
}

// FuzzReadsLikeTheRules is TestReadsLikeTheRules for any text.
func FuzzReadsLikeTheRules(f *testing.F) {
	for _, s := range []string{"12.50", "A1", ".5", "12."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if isDecimal(s) != decimalRule.MatchString(s) || lettersAndDigits(s) != referenceRule.MatchString(s) {
			t.Errorf("%q: isDecimal %v, lettersAndDigits %v; the rules say %v, %v",
				s, isDecimal(s), lettersAndDigits(s), decimalRule.MatchString(s), referenceRule.MatchString(s))
		}
	})
}
