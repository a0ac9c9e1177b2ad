package call

import (
	"fmt"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Every InvalidArgument of the services is made here, so that each one
// carries a google.rpc.BadRequest naming the fields at fault for gRPC
// callers, while its message stays the text the REST API has always shown
// (the gateway renders the message, never the details).

// FieldViolation is one problem of a request.
type FieldViolation struct {
	// Field is the path of the field as a gRPC caller names it:
	// "page_size", "jobs[3].title", or a metadata key such as
	// "x-account-id"; "" is the request as a whole.
	Field string
	// Label names the field in the message, where REST's name may differ
	// from the gRPC path ("callbackUrl"); "" leaves it out.
	Label string
	// Description is the value and the rule, as the message says them.
	Description string
}

// Text is the violation as the message says it: "label: description".
func (v FieldViolation) Text() string {
	if v.Label == "" {
		return v.Description
	}
	return v.Label + ": " + v.Description
}

// InvalidField is the InvalidArgument for one field whose value breaks a
// rule: `field: "value" rule`, the value cut to MaxEchoed characters.
func InvalidField(field, value, rule string) error {
	return InvalidArgument(FieldValueViolation(field, value, rule))
}

// FieldValueViolation is the problem of a field whose value breaks a rule,
// as InvalidField says it, for a call that lists it with others.
func FieldValueViolation(field, value, rule string) FieldViolation {
	return FieldViolation{Field: field, Label: field,
		Description: fmt.Sprintf("%q %s", Truncate(value, MaxEchoed), rule)}
}

// InvalidFieldText is the InvalidArgument for one field, described in
// words of the caller's own: a number, or a rule without a value.
func InvalidFieldText(field, description string) error {
	return InvalidArgument(FieldViolation{Field: field, Label: field, Description: description})
}

// maxViolations is the most violations an error lists one by one; the
// rest are counted, so that an error stays within a small multiple of a
// normal one (a batch of 1,000 applications each wrong in every field).
const maxViolations = 100

// InvalidArgument is InvalidArgument for the violations, its message their
// texts joined by "; ", the first maxViolations of them.
func InvalidArgument(vs ...FieldViolation) error {
	if len(vs) > maxViolations {
		more := FieldViolation{Description: fmt.Sprintf("and %d more problems", len(vs)-maxViolations)}
		vs = append(vs[:maxViolations:maxViolations], more)
	}
	texts := make([]string, len(vs))
	detail := &errdetails.BadRequest{}
	for i, v := range vs {
		texts[i] = v.Text()
		detail.FieldViolations = append(detail.FieldViolations,
			&errdetails.BadRequest_FieldViolation{Field: v.Field, Description: v.Description})
	}
	st := status.New(codes.InvalidArgument, strings.Join(texts, "; "))
	if withDetail, err := st.WithDetails(detail); err == nil {
		st = withDetail
	}
	return st.Err()
}

// RenameFields gives the violations of an InvalidArgument made by
// InvalidArgument other field names, in the message and the details: an
// adapter's callers name a field otherwise than the core does. Any other
// error is returned as it is.
func RenameFields(err error, rename func(field string) string) error {
	st := status.Convert(err)
	if st.Code() != codes.InvalidArgument {
		return err
	}
	var vs []FieldViolation
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				field := rename(v.GetField())
				vs = append(vs, FieldViolation{Field: field, Label: field, Description: v.GetDescription()})
			}
		}
	}
	if len(vs) == 0 {
		return err
	}
	return InvalidArgument(vs...)
}
