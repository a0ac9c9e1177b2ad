package wire

import (
	"bytes"
	"io"
	"strconv"
	"unicode/utf8"
)

type jsonWriter struct {
	buf []byte
	// stack holds a frame per open object or array, innermost last: how
	// many members it has so far and whether it is an array. It is empty
	// at the root.
	stack []jsonFrame
	// frames back stack at the depths the documents have, so that a
	// document takes no allocation of its own for it.
	frames [4]jsonFrame
}

type jsonFrame struct {
	array bool
	n     int
}

func newJSONWriter(size int) *jsonWriter {
	w := &jsonWriter{buf: make([]byte, 0, size)}
	w.stack = w.frames[:0]
	return w
}

// member writes the separator and, inside an object, the key.
func (w *jsonWriter) member(name string) {
	if len(w.stack) == 0 {
		return
	}
	top := &w.stack[len(w.stack)-1]
	if top.n > 0 {
		w.buf = append(w.buf, ',')
	}
	top.n++
	if !top.array {
		w.buf = appendJSONString(w.buf, name)
		w.buf = append(w.buf, ':')
	}
}

func (w *jsonWriter) BeginObject(name string) {
	w.member(name)
	w.buf = append(w.buf, '{')
	w.stack = append(w.stack, jsonFrame{})
}

func (w *jsonWriter) EndObject() {
	w.stack = w.stack[:len(w.stack)-1]
	w.buf = append(w.buf, '}')
}

func (w *jsonWriter) BeginList(name string) {
	w.member(name)
	w.buf = append(w.buf, '[')
	w.stack = append(w.stack, jsonFrame{array: true})
}

func (w *jsonWriter) EndList() {
	w.stack = w.stack[:len(w.stack)-1]
	w.buf = append(w.buf, ']')
}

func (w *jsonWriter) BeginXMLOnly(string) {}
func (w *jsonWriter) EndXMLOnly()         {}

func (w *jsonWriter) String(name, v string) {
	w.member(name)
	w.buf = appendJSONString(w.buf, v)
}

func (w *jsonWriter) NullableString(name string, v *string) {
	if v == nil {
		w.null(name)
		return
	}
	w.String(name, *v)
}

func (w *jsonWriter) RichText(name string, v *string) { w.NullableString(name, v) }

func (w *jsonWriter) Int(name string, v int64) {
	w.member(name)
	w.buf = strconv.AppendInt(w.buf, v, 10)
}

func (w *jsonWriter) NullableInt(name string, v *int64) {
	if v == nil {
		w.null(name)
		return
	}
	w.Int(name, *v)
}

func (w *jsonWriter) Bool(name string, v bool) {
	w.member(name)
	w.buf = strconv.AppendBool(w.buf, v)
}

func (w *jsonWriter) JSONValue(name string, v []byte) {
	w.member(name)
	w.buf = append(w.buf, bytes.TrimSpace(v)...)
}

func (w *jsonWriter) null(name string) {
	w.member(name)
	w.buf = append(w.buf, "null"...)
}

func (w *jsonWriter) Bytes() []byte { return append(w.buf, '\n') }

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string. Control characters, quotes,
// backslashes, U+2028 and U+2029 (which break JavaScript) are escaped;
// invalid UTF-8 becomes U+FFFD.
func appendJSONString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		// Texts are mostly plain ASCII: eight such bytes are passed over
		// at once (a description's escaping was a tenth of a long list's
		// time, byte by byte).
		if i+8 <= len(s) && plainJSON(s[i:i+8]) {
			i += 8
			continue
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			buf = append(buf, s[start:i]...)
			switch c {
			case '"', '\\':
				buf = append(buf, '\\', c)
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf = append(buf, s[start:i]...)
			buf = append(buf, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			buf = append(buf, s[start:i]...)
			buf = append(buf, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

// Bytes repeated in each byte of a word, for plainJSON.
const (
	eachByte  = 0x0101010101010101
	eachHigh  = 0x8080808080808080
	eachQuote = eachByte * '"'
	eachSlash = eachByte * '\\'
	eachSpace = eachByte * 0x20
)

// plainJSON says whether the eight bytes of s are all ASCII that a JSON
// string holds as they are: none under 0x20, a quote, a backslash or over
// 0x7f. A byte is zero in v when (v - eachByte) &^ v has its high bit: no
// byte is missed, and a false alarm only sends s the slow way.
func plainJSON(s string) bool {
	w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	control := (w - eachSpace) &^ w
	quote := ((w ^ eachQuote) - eachByte) &^ (w ^ eachQuote)
	slash := ((w ^ eachSlash) - eachByte) &^ (w ^ eachSlash)
	return (w|control|quote|slash)&eachHigh == 0
}

func (w *jsonWriter) Buffered() int { return len(w.buf) }

func (w *jsonWriter) Flush(out io.Writer) error {
	_, err := out.Write(w.buf)
	w.buf = w.buf[:0]
	return err
}
