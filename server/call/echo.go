package call

import (
	"fmt"
	"strings"
)

// Echoes of client values are cut, so a huge value cannot make the answer
// many times larger than the request.
const (
	MaxQuoted = 100   // characters of a value quoted in a message
	MaxEchoed = 1_024 // characters of a value returned in an entry
)

// Quoted is %q of s, cut to MaxQuoted characters.
func Quoted(s string) string { return fmt.Sprintf("%q", Truncate(s, MaxQuoted)) }

// Echoed is the value returned in an entry, cut to MaxEchoed characters,
// with its NUL characters escaped.
func Echoed(s *string) *string {
	if s == nil || (len(*s) <= MaxEchoed && !strings.ContainsRune(*s, 0)) {
		return s
	}
	e := EscapeNUL(Truncate(*s, MaxEchoed))
	return &e
}

// EscapeNUL writes each NUL character of text echoed from a request as
// \x00, as a value quoted in a message shows it (docs/api.md, Jobs), so an
// entry reads the same in its value and its message, in JSON, in XML
// (which cannot hold a NUL) and in an import's results. A NUL is never
// part of a valid value, and clients built on C strings would cut the text
// at it.
func EscapeNUL(s string) string { return strings.ReplaceAll(s, "\x00", `\x00`) }

// Truncate cuts s to n characters, marking the cut with an ellipsis.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := 0
	for k := range s {
		if i == n {
			return s[:k] + "…"
		}
		i++
	}
	return s
}
