package server

import "fmt"

// pageSize is the page size a list request asks for (AIP-158): unset is
// the list's default, more than its most is its most, negative is refused.
// items names what a page holds, for the message.
func pageSize(requested int32, defaultSize, maxSize int, items string) (int, error) {
	switch size := int(requested); {
	case size < 0:
		return 0, invalidFieldText("page_size", fmt.Sprintf("%d is negative; a page holds 1-%d %s", size, maxSize, items))
	case size == 0:
		return defaultSize, nil
	case size > maxSize:
		return maxSize, nil
	default:
		return size, nil
	}
}
