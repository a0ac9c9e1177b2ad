package gateway

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
)

// Unknown query parameters are ignored (docs/api.md, Drivers), but said out
// loud: drivers.xml?state=TX&radius=50 answers every TX driver, and the
// X-Ignored-Parameters header (and the access log) tells the client that
// radius played no part.
const (
	ignoredHeader = "X-Ignored-Parameters"
	// maxIgnoredName bounds each name reported, in bytes before escaping.
	maxIgnoredName = 64
	// maxIgnoredList bounds the whole header value.
	maxIgnoredList = 1024
)

// ignoredParams lists the names in query that known does not hold: sorted,
// each once, cut to maxIgnoredName bytes and query-escaped, so a name
// holding a comma, a space or a control character cannot break the list
// or the header; an empty name is written "". Past maxIgnoredList bytes
// the list ends with "(and N more)", which no escaped name can be.
// Values are never reported.
func ignoredParams(query url.Values, known map[string]bool) string {
	var names []string
	for name := range query {
		if known[name] {
			continue
		}
		name = cutName(name)
		if name == "" {
			name = `""`
		}
		names = append(names, name)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	var b strings.Builder
	for i, name := range names {
		if b.Len()+len(", ")+len(name) > maxIgnoredList {
			fmt.Fprintf(&b, ", (and %d more)", len(names)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(name)
	}
	return b.String()
}

// cutName escapes a name after cutting it to maxIgnoredName bytes, on a
// character boundary (names are UTF-8: checkParams refused others).
func cutName(name string) string {
	if len(name) > maxIgnoredName {
		cut := maxIgnoredName
		for cut > 0 && !utf8.RuneStart(name[cut]) {
			cut--
		}
		name = name[:cut]
	}
	return url.QueryEscape(name)
}
