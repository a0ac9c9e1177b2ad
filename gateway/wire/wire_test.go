package wire

import (
	"strings"
	"testing"
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
