package call

import (
	"fmt"
	"strconv"
)

// PageSize is the page size a list request asks for (AIP-158): unset is
// the list's default, more than its most is its most, negative is refused.
// items names what a page holds, for the message.
func PageSize(requested int32, defaultSize, maxSize int, items string) (int, error) {
	switch size := int(requested); {
	case size < 0:
		return 0, InvalidFieldText("page_size", fmt.Sprintf("%d is negative; a page holds 1-%d %s", size, maxSize, items))
	case size == 0:
		return defaultSize, nil
	case size > maxSize:
		return maxSize, nil
	default:
		return size, nil
	}
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
