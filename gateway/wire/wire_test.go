package wire

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDocuments(t *testing.T) {
	write := func(w Writer) {
		w.BeginObject("root")
		w.String("plain", `a "quoted" <tag> & more`)
		w.NullableString("missing", nil)
		w.RichText("html", new("<p>x]]>y</p>"))
		w.Int("n", -42)
		w.Bool("yes", true)
		w.Bool("no", false)
		w.BeginList("items")
		w.BeginObject("item")
		w.String("k", "v")
		w.EndObject()
		w.EndList()
		w.BeginList("none")
		w.EndList()
		w.String("ctl", "a\x01b\u2028")
		w.EndObject()
	}
	tests := []struct {
		format Format
		want   string
	}{
		{JSON, `{"plain":"a \"quoted\" <tag> & more","missing":null,"html":"<p>x]]>y</p>","n":-42,"yes":true,"no":false,"items":[{"k":"v"}],"none":[],"ctl":"a\u0001b\u2028"}` + "\n"},
		{XML, xmlDeclaration + `<root><plain>a "quoted" &lt;tag&gt; &amp; more</plain><missing/><html><![CDATA[<p>x]]]]><![CDATA[>y</p>]]></html><n>-42</n><yes>1</yes><no/><items><item><k>v</k></item></items><none/><ctl>a` + "\uFFFD" + "b\u2028</ctl></root>\n"},
	}
	for _, tt := range tests {
		t.Run(tt.format.String(), func(t *testing.T) {
			w := New(tt.format, 0)
			write(w)
			if got := string(w.Bytes()); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestJSONStringInvalidUTF8(t *testing.T) {
	if got := string(appendJSONString(nil, "a\xffb")); got != `"a\ufffdb"` {
		t.Errorf("got %s", got)
	}
}

// TestFlushBetweenItems: a list flushed item by item reads the same as one
// written whole, in both formats.
func TestFlushBetweenItems(t *testing.T) {
	for _, f := range []Format{JSON, XML} {
		for _, n := range []int{0, 1, 3} {
			whole, streamed := New(f, 0), New(f, 0)
			var out strings.Builder
			whole.BeginList("jobs")
			streamed.BeginList("jobs")
			for i := range n {
				for _, w := range []Writer{whole, streamed} {
					w.BeginObject("job")
					w.Int("id", int64(i))
					w.EndObject()
				}
				if err := streamed.Flush(&out); err != nil || streamed.Buffered() != 0 {
					t.Fatalf("flush: %v, %d bytes left", err, streamed.Buffered())
				}
			}
			whole.EndList()
			streamed.EndList()
			out.Write(streamed.Bytes())
			if got, want := out.String(), string(whole.Bytes()); got != want {
				t.Errorf("%s, %d items: streamed %q, whole %q", f, n, got, want)
			}
		}
	}
}

// TestJSONStringEachByteAnywhere: every byte, and runes of every length,
// at every place of a text that plainJSON reads eight bytes at a time,
// escape as a rune by rune escaper does.
func TestJSONStringEachByteAnywhere(t *testing.T) {
	plain := "Class A CDL, home weekly; 0.55/mile"
	var texts []string
	for b := range 256 {
		for at := range 17 {
			texts = append(texts, plain[:at]+string([]byte{byte(b)})+plain[at:])
		}
	}
	for _, r := range []string{"é", "€", "𝄞", "\u2028", "\u2029", "\xe2\x82", "\xf0\x9d\x84"} {
		for at := range 17 {
			texts = append(texts, plain[:at]+r+plain[at:])
		}
	}
	for _, text := range texts {
		if got, want := string(appendJSONString(nil, text)), jsonStringByRune(text); got != want {
			t.Fatalf("%q: got %s, want %s", text, got, want)
		}
	}
}

// FuzzJSONString: any text escapes as a rune by rune escaper does.
func FuzzJSONString(f *testing.F) {
	for _, seed := range []string{"", "plain text of some length", "a\"b\\c\nd\x01e", "\u2028x\xffy€"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if got, want := string(appendJSONString(nil, text)), jsonStringByRune(text); got != want {
			t.Fatalf("%q: got %s, want %s", text, got, want)
		}
	})
}

// jsonStringByRune is the JSON string of text, escaped one rune at a time
// by the rules appendJSONString keeps.
func jsonStringByRune(text string) string {
	var b strings.Builder
	b.WriteByte('"')
	for len(text) > 0 {
		r, size := utf8.DecodeRuneInString(text)
		text = text[size:]
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\ufffd`)
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == '\u2028' || r == '\u2029':
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// BenchmarkJSONString escapes a description of about 2 KB of plain HTML:
// 1.23-1.33 µs byte by byte, 0.73-0.74 µs eight plain bytes at a time.
func BenchmarkJSONString(b *testing.B) {
	s := strings.Repeat("<p>Drive late-model trucks on dedicated lanes, home every weekend, with paid orientation.</p>", 20)
	buf := make([]byte, 0, 4096)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		buf = appendJSONString(buf[:0], s)
	}
}

// TestXMLEachByteAnywhere: every byte, runes of every length and the end
// of a CDATA section, at every place of a text, come out of the text and
// CDATA writers as a rune by rune writer writes them.
func TestXMLEachByteAnywhere(t *testing.T) {
	plain := "Class A CDL <b>home</b> weekly & 0.55/mile"
	var texts []string
	for b := range 256 {
		for at := range 17 {
			texts = append(texts, plain[:at]+string([]byte{byte(b)})+plain[at:])
		}
	}
	for _, r := range []string{"é", "€", "𝄞", "\uFFFE", "\ufffd", "\xed\xa0\x80", "\xe2\x82", "]]>", "]]]>", "]]", "]"} {
		for at := range 17 {
			texts = append(texts, plain[:at]+r+plain[at:], r+plain[at:]+r)
		}
	}
	for _, text := range texts {
		checkXML(t, text)
	}
}

// FuzzXMLText: any text comes out of the text and CDATA writers as a rune
// by rune writer writes it.
func FuzzXMLText(f *testing.F) {
	for _, seed := range []string{"", "plain text", "a<b>&c]]>d", "\x01\uFFFEx\xffy€]]"} {
		f.Add(seed)
	}
	f.Fuzz(checkXML)
}

func checkXML(t *testing.T, text string) {
	if got, want := string(appendXMLText(nil, text)), xmlTextByRune(text); got != want {
		t.Fatalf("text %q: got %q, want %q", text, got, want)
	}
	if got, want := string(appendCDATA(nil, text)), cdataByRune(text); got != want {
		t.Fatalf("CDATA %q: got %q, want %q", text, got, want)
	}
}

// xmlTextByRune is text escaped as character data one rune at a time.
func xmlTextByRune(text string) string {
	var b strings.Builder
	for _, r := range text { // an invalid byte reads as U+FFFD
		switch {
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '&':
			b.WriteString("&amp;")
		case !xmlChar(r):
			b.WriteRune(utf8.RuneError)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// cdataByRune is text as CDATA, written one rune at a time.
func cdataByRune(text string) string {
	var b strings.Builder
	b.WriteString("<![CDATA[")
	for i := 0; i < len(text); {
		if strings.HasPrefix(text[i:], "]]>") {
			b.WriteString("]]]]><![CDATA[>")
			i += 3
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		if !xmlChar(r) {
			r = utf8.RuneError
		}
		b.WriteRune(r)
	}
	b.WriteString("]]>")
	return b.String()
}

// BenchmarkCDATA writes a description of about 2 KB of plain HTML as
// CDATA: 6.3-6.6 µs rune by rune, 2.1-2.3 µs copying runs of plain bytes
// whole.
func BenchmarkCDATA(b *testing.B) {
	s := strings.Repeat("<p>Drive late-model trucks on dedicated lanes, home every weekend, with paid orientation.</p>", 20)
	buf := make([]byte, 0, 4096)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		buf = appendCDATA(buf[:0], s)
	}
}
