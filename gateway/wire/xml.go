package wire

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

const xmlDeclaration = `<?xml version="1.0" encoding="UTF-8"?>` + "\n"

type xmlWriter struct {
	buf   []byte
	names []string // open elements
	// opened backs names at the depths the documents have, so that a
	// document takes no allocation of its own for them.
	opened [4]string
}

func newXMLWriter(size int) *xmlWriter {
	w := &xmlWriter{buf: make([]byte, 0, size)}
	w.names = w.opened[:0]
	w.buf = append(w.buf, xmlDeclaration...)
	return w
}

func (w *xmlWriter) open(name string) {
	w.buf = append(w.buf, '<')
	w.buf = append(w.buf, name...)
	w.buf = append(w.buf, '>')
	w.names = append(w.names, name)
}

func (w *xmlWriter) close() {
	name := w.names[len(w.names)-1]
	w.names = w.names[:len(w.names)-1]
	w.buf = append(w.buf, '<', '/')
	w.buf = append(w.buf, name...)
	w.buf = append(w.buf, '>')
}

func (w *xmlWriter) empty(name string) {
	w.buf = append(w.buf, '<')
	w.buf = append(w.buf, name...)
	w.buf = append(w.buf, '/', '>')
}

func (w *xmlWriter) BeginObject(name string)  { w.open(name) }
func (w *xmlWriter) EndObject()               { w.close() }
func (w *xmlWriter) BeginList(name string)    { w.open(name) }
func (w *xmlWriter) BeginXMLOnly(name string) { w.open(name) }
func (w *xmlWriter) EndXMLOnly()              { w.close() }

// EndList closes the list, written as an empty element when it has no items.
func (w *xmlWriter) EndList() {
	name := w.names[len(w.names)-1]
	if bytes.HasSuffix(w.buf, []byte("<"+name+">")) {
		w.buf = w.buf[:len(w.buf)-len(name)-2]
		w.names = w.names[:len(w.names)-1]
		w.empty(name)
		return
	}
	w.close()
}

func (w *xmlWriter) String(name, v string) {
	if v == "" {
		w.empty(name)
		return
	}
	w.open(name)
	w.buf = appendXMLText(w.buf, v)
	w.close()
}

func (w *xmlWriter) NullableString(name string, v *string) {
	if v == nil {
		w.empty(name)
		return
	}
	w.String(name, *v)
}

func (w *xmlWriter) RichText(name string, v *string) {
	if v == nil || *v == "" {
		w.empty(name)
		return
	}
	w.open(name)
	w.buf = appendCDATA(w.buf, *v)
	w.close()
}

func (w *xmlWriter) Int(name string, v int64) {
	w.open(name)
	w.buf = strconv.AppendInt(w.buf, v, 10)
	w.close()
}

func (w *xmlWriter) NullableInt(name string, v *int64) {
	if v == nil {
		w.empty(name)
		return
	}
	w.Int(name, *v)
}

// Bool writes 1 for true and an empty element for false.
func (w *xmlWriter) Bool(name string, v bool) {
	if !v {
		w.empty(name)
		return
	}
	w.open(name)
	w.buf = append(w.buf, '1')
	w.close()
}

func (w *xmlWriter) JSONValue(name string, v []byte) { w.String(name, string(v)) }

func (w *xmlWriter) Bytes() []byte { return append(w.buf, '\n') }

// xmlChar reports whether XML 1.0 allows r in a document.
func xmlChar(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' ||
		(r >= 0x20 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF)
}

// appendXMLText escapes s as character data; characters XML cannot carry
// become U+FFFD. Runs of characters that need nothing are copied whole.
func appendXMLText(buf []byte, s string) []byte {
	start := 0 // s[start:i] is copied as it is
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf && c != '<' && c != '>' && c != '&' && xmlChar(rune(c)) {
			i++
			continue
		}
		var put string
		size := 1
		switch c {
		case '<':
			put = "&lt;"
		case '>':
			put = "&gt;"
		case '&':
			put = "&amp;"
		default:
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			if (r != utf8.RuneError || size > 1) && xmlChar(r) {
				i += size
				continue
			}
			put = "\uFFFD"
		}
		buf = append(append(buf, s[start:i]...), put...)
		i += size
		start = i
	}
	return append(buf, s[start:]...)
}

// appendCDATA writes s as CDATA, splitting any "]]>" across two sections;
// characters XML cannot carry become U+FFFD. Runs of characters that need
// nothing are copied whole (character by character, writing a long list's
// descriptions took a twelfth of its time).
func appendCDATA(buf []byte, s string) []byte {
	buf = append(buf, "<![CDATA["...)
	start := 0 // s[start:i] is copied as it is
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf && c != ']' && xmlChar(rune(c)) {
			i++
			continue
		}
		if strings.HasPrefix(s[i:], "]]>") {
			buf = append(append(buf, s[start:i]...), "]]]]><![CDATA[>"...)
			i += 3
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r != utf8.RuneError || size > 1) && xmlChar(r) {
			i += size
			continue
		}
		buf = append(append(buf, s[start:i]...), "\uFFFD"...)
		i += size
		start = i
	}
	buf = append(buf, s[start:]...)
	return append(buf, "]]>"...)
}

func (w *xmlWriter) Buffered() int { return len(w.buf) }

func (w *xmlWriter) Flush(out io.Writer) error {
	_, err := out.Write(w.buf)
	w.buf = w.buf[:0]
	return err
}
