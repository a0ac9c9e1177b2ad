package server

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

// fieldViolation is one problem of a request.
type fieldViolation struct {
	// field is the path of the field as a gRPC caller names it:
	// "page_size", "jobs[3].title", or a metadata key such as
	// "x-account-id"; "" is the request as a whole.
	field string
	// label names the field in the message, where REST's name may differ
	// from the gRPC path ("callbackUrl"); "" leaves it out.
	label string
	// description is the value and the rule, as the message says them.
	description string
}

func (v fieldViolation) text() string {
	if v.label == "" {
		return v.description
	}
	return v.label + ": " + v.description
}

// invalidField is the InvalidArgument for one field whose value breaks a
// rule: `field: "value" rule`, the value cut to maxEchoed characters.
func invalidField(field, value, rule string) error {
	return invalidArgument(fieldViolation{field: field, label: field,
		description: fmt.Sprintf("%q %s", truncate(value, maxEchoed), rule)})
}

// invalidFieldText is the InvalidArgument for one field, described in words
// of the caller's own: a number, or a rule without a value.
func invalidFieldText(field, description string) error {
	return invalidArgument(fieldViolation{field: field, label: field, description: description})
}

// maxViolations is the most violations an error lists one by one; the
// rest are counted, so that an error stays within a small multiple of a
// normal one (a batch of 1,000 applications each wrong in every field).
const maxViolations = 100

// invalidArgument is InvalidArgument for the violations, its message their
// texts joined by "; ", the first maxViolations of them.
func invalidArgument(vs ...fieldViolation) error {
	if len(vs) > maxViolations {
		more := fieldViolation{description: fmt.Sprintf("and %d more problems", len(vs)-maxViolations)}
		vs = append(vs[:maxViolations:maxViolations], more)
	}
	texts := make([]string, len(vs))
	detail := &errdetails.BadRequest{}
	for i, v := range vs {
		texts[i] = v.text()
		detail.FieldViolations = append(detail.FieldViolations,
			&errdetails.BadRequest_FieldViolation{Field: v.field, Description: v.description})
	}
	st := status.New(codes.InvalidArgument, strings.Join(texts, "; "))
	if withDetail, err := st.WithDetails(detail); err == nil {
		st = withDetail
	}
	return st.Err()
}

// renameFields gives the violations of an InvalidArgument made by
// invalidArgument other field names, in the message and the details: an
// adapter's callers name a field otherwise than the core does. Any other
// error is returned as it is.
func renameFields(err error, rename func(field string) string) error {
	st := status.Convert(err)
	if st.Code() != codes.InvalidArgument {
		return err
	}
	var vs []fieldViolation
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				field := rename(v.GetField())
				vs = append(vs, fieldViolation{field: field, label: field, description: v.GetDescription()})
			}
		}
	}
	if len(vs) == 0 {
		return err
	}
	return invalidArgument(vs...)
}
