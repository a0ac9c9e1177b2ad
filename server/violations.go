package server

import (
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Violation is one problem with one field of a request: where it is (a
// path such as applications[12].email), the value given, and the rule the
// value breaks. Kept apart rather than as text, so that an error can carry
// them as structured details as well as in its message.
type Violation struct {
	Field string
	// Value is the value as given; "" when it is missing.
	Value string
	// Rule says what is wrong, such as "is not an e-mail address" or "is
	// required".
	Rule string
}

// Description is the problem without its field: the value quoted, then the
// rule; a missing value is the rule alone.
func (v Violation) Description() string {
	if v.Value == "" {
		return v.Rule
	}
	return strconv.Quote(v.Value) + " " + v.Rule
}

func (v Violation) String() string {
	if v.Field == "" {
		return v.Description()
	}
	return v.Field + ": " + v.Description()
}

// violationsError is INVALID_ARGUMENT whose message lists every violation,
// in order, separated by "; ".
func violationsError(vs []Violation) error {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.String()
	}
	return status.Error(codes.InvalidArgument, strings.Join(parts, "; "))
}
