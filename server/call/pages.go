package call

import (
	"fmt"
	"strconv"
)

// PageSize is the page size a list request asks for (AIP-158): unset is
// the list's default, more than its most is its most, negative is refused.
// items names what a page holds, for the message.
func PageSize(requested int32, defaultSize, maxSize int, items string) (int, error) {
	if v := PageSizeViolation(requested, maxSize, items); v != nil {
		return 0, InvalidArgument(*v)
	}
	switch size := int(requested); {
	case size == 0:
		return defaultSize, nil
	case size > maxSize:
		return maxSize, nil
	default:
		return size, nil
	}
}

// PageSizeViolation is the problem of a requested page size, for a call
// that lists it with the request's other problems: a negative one is
// refused (0 is the default, and a size above maxSize is taken as
// maxSize); nil when there is none.
func PageSizeViolation(requested int32, maxSize int, items string) *FieldViolation {
	if requested >= 0 {
		return nil
	}
	return &FieldViolation{Field: "page_size", Label: "page_size",
		Description: fmt.Sprintf("%d is negative; a page holds 1-%d %s", requested, maxSize, items)}
}

// LimitParam is the REST limit query parameter of the feed and the
// deliveries log: empty is defaultN, anything else must be the digits of
// a number from 1 to maxN as given (spaces are not trimmed, as in every
// other query parameter).
func LimitParam(text string, defaultN, maxN int) (int, error) {
	if text == "" {
		return defaultN, nil
	}
	n, err := strconv.Atoi(text)
	if err != nil || n < 1 || n > maxN {
		return 0, InvalidField("limit", text, fmt.Sprintf("is not valid; allowed: a whole number from 1 to %d", maxN))
	}
	return n, nil
}
