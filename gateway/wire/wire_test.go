package wire

import "testing"

func ptr(s string) *string { return &s }

func TestDocuments(t *testing.T) {
	write := func(w Writer) {
		w.BeginObject("root")
		w.String("plain", `a "quoted" <tag> & more`)
		w.NullableString("missing", nil)
		w.RichText("html", ptr("<p>x]]>y</p>"))
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
