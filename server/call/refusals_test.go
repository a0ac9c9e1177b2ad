package call

import (
	"fmt"
	"strings"
	"testing"

	"github.com/truckjobs/jobboard/internal/grpctest"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestInvalidArgumentWords(t *testing.T) {
	long := strings.Repeat("é", 2000)
	for _, tt := range []struct {
		name       string
		err        error
		message    string
		violations []string
	}{
		{"a value and a rule", InvalidField("state", "ZZ", "is not valid; allowed: a state"),
			`state: "ZZ" is not valid; allowed: a state`, []string{`state | "ZZ" is not valid; allowed: a state`}},
		{"a value cut to 1,024 characters", InvalidField("email", long, "is too long"),
			`email: "` + strings.Repeat("é", 1024) + `…" is too long`,
			[]string{`email | "` + strings.Repeat("é", 1024) + `…" is too long`}},
		{"a value that is not text", InvalidField("first_name", "Ann\xc3", "is not valid"),
			`first_name: "Ann\xc3" is not valid`, []string{`first_name | "Ann\xc3" is not valid`}},
		{"words of the caller", InvalidFieldText("page_size", "-1 is negative"),
			"page_size: -1 is negative", []string{"page_size | -1 is negative"}},
		{"a label of REST's", InvalidArgument(FieldViolation{Field: "callback_url", Label: "callbackUrl", Description: `"x" is not a URL`}),
			`callbackUrl: "x" is not a URL`, []string{`callback_url | "x" is not a URL`}},
		{"no label", InvalidArgument(FieldViolation{Field: "jobs", Description: "the request lists 3 items"}),
			"the request lists 3 items", []string{"jobs | the request lists 3 items"}},
		{"several", InvalidArgument(
			FieldViolation{Field: "application.sent", Label: "sent", Description: "is required"},
			FieldViolation{Field: "application.zip", Label: "zip", Description: `"1" is not a ZIP code`}),
			`sent: is required; zip: "1" is not a ZIP code`,
			[]string{"application.sent | is required", `application.zip | "1" is not a ZIP code`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := status.Convert(tt.err)
			if st.Code() != codes.InvalidArgument || st.Message() != tt.message {
				t.Errorf("got %v %q, want InvalidArgument %q", st.Code(), st.Message(), tt.message)
			}
			if got := grpctest.Violations(tt.err); strings.Join(got, "\n") != strings.Join(tt.violations, "\n") {
				t.Errorf("violations %q, want %q", got, tt.violations)
			}
		})
	}
}

// TestInvalidArgumentCapped: past maxViolations the violations are counted,
// not listed.
func TestInvalidArgumentCapped(t *testing.T) {
	var vs []FieldViolation
	for i := range maxViolations + 150 {
		f := fmt.Sprintf("applications[%d].email", i)
		vs = append(vs, FieldViolation{Field: f, Label: f, Description: `"x" is not an e-mail address`})
	}
	err := InvalidArgument(vs...)
	got := grpctest.Violations(err)
	if len(got) != maxViolations+1 || got[maxViolations] != " | and 150 more problems" ||
		!strings.HasSuffix(status.Convert(err).Message(), `; and 150 more problems`) {
		t.Errorf("%d violations: %d listed, the last %q; message ends %q", len(vs), len(got), got[len(got)-1],
			status.Convert(err).Message()[len(status.Convert(err).Message())-40:])
	}
}
