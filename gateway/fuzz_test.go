package gateway

import (
	"errors"
	"io"
	"testing"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/truckjobs/jobboard/gateway/wire"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
)

// Fuzzing the decoders of every request body. Run by make test for a few
// seconds each (make fuzz-quick) and longer by make fuzz; the seeds in
// testdata/fuzz/ are run by every go test.

// bodies are the request messages a body can fill, by the route's kind.
var bodies = []struct {
	name    string
	formats []wire.Format
	new     func() proto.Message
}{
	{"post jobs", []wire.Format{wire.JSON, wire.XML}, func() proto.Message { return &restv2.PostJobsRequest{} }},
	{"delete ids", []wire.Format{wire.JSON, wire.XML}, func() proto.Message { return &restv2.DeleteJobsRequest{} }},
	{"delete references", []wire.Format{wire.JSON, wire.XML}, func() proto.Message { return &restv2.DeleteJobsByReferenceRequest{} }},
	{"job import", []wire.Format{wire.JSON}, func() proto.Message { return &restv2.CreateJobImportRequest{} }},
}

func FuzzDecodeJSON(f *testing.F) {
	for _, seed := range []string{
		`[{"referenceNumber":"A1","title":"Driver","state":"TX","driverType":"Student","freightType":"Box","description":"<p>x</p>"}]`,
		`[{"referenceNumber":12345,"payAmountMin":18.5,"twicOnly":true,"employmentType":["Full-Time"],"extra":{"a":[1,{"b":null}]}}]`,
		`[1, "2", 3.5, null, true]`,
		`{"jobs": [{"title": "\ud800 \u0000"}], "callbackUrl": "https://example.com/cb", "deleteJobs": "1"}`,
		`[{"a":`, `{}`, `[]`, `"x"`, `[[[[[[[[[[]]]]]]]]]]`,
		`[{"referenceNumber":"A1","routeType":["OTR","x","y","z","OTR","a","b","c","d","e","f"]}]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		decodeEveryBody(t, wire.JSON, body)
	})
}

func FuzzDecodeXML(f *testing.F) {
	for _, seed := range []string{
		`<?xml version="1.0" encoding="UTF-8"?><jobs><job><referenceNumber>A1</referenceNumber><description><![CDATA[<b>x</b>]]></description><twicOnly/></job></jobs>`,
		`<jobs><job>42</job><job> abc </job></jobs>`,
		`<jobs><job><employmentType>Full-Time</employmentType><employmentType>Temporary</employmentType><extra><a>1</a></extra></job></jobs>`,
		`<!DOCTYPE jobs [<!ENTITY x "y">]><jobs><job>&x;</job></jobs>`,
		`<!doctype jobs><jobs/>`, `<!ENTITY x "y"><jobs/>`,
		`<jobs><job><title>&#0;&#xD800;&amp;</title></job></jobs>`,
		`<jobs>`, `<other/>`, `<jobs><job><job><job></job></job></job></jobs>`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		decodeEveryBody(t, wire.XML, body)
	})
}

// decodeEveryBody decodes body as each request the format serves. Whatever
// the body, decoding returns (no panic, no hang); an error is a message a
// client can read; and a body the gateway would accept (UTF-8, as it
// checks before decoding) decodes into UTF-8 values only, so nothing it
// yields can make PostgreSQL fail.
func decodeEveryBody(t *testing.T, format wire.Format, body []byte) {
	for _, b := range bodies {
		if !containsFormat(b.formats, format) {
			continue
		}
		for _, list := range []deleteList{deleteByID, deleteByReference} {
			msg := b.new()
			err := marshaler{format}.decode(body, msg, list)
			if err != nil {
				if errors.Is(err, io.EOF) {
					continue
				}
				if msg := err.Error(); msg == "" || !utf8.ValidString(msg) {
					t.Fatalf("%s: error %q is not a readable message", b.name, msg)
				}
				continue
			}
			if utf8.Valid(body) {
				if bad := invalidUTF8Field(msg.ProtoReflect()); bad != "" {
					t.Fatalf("%s: decoded %s is not UTF-8", b.name, bad)
				}
			}
		}
	}
}

func containsFormat(fs []wire.Format, f wire.Format) bool {
	for _, x := range fs {
		if x == f {
			return true
		}
	}
	return false
}

// invalidUTF8Field names the first string in m that is not UTF-8.
func invalidUTF8Field(m protoreflect.Message) string {
	bad := ""
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len() && bad == ""; i++ {
				if fd.Kind() == protoreflect.MessageKind {
					bad = invalidUTF8Field(l.Get(i).Message())
				} else if fd.Kind() == protoreflect.StringKind && !utf8.ValidString(l.Get(i).String()) {
					bad = string(fd.Name())
				}
			}
		case fd.Kind() == protoreflect.MessageKind:
			bad = invalidUTF8Field(v.Message())
		case fd.Kind() == protoreflect.StringKind && !utf8.ValidString(v.String()):
			bad = string(fd.Name())
		}
		return bad == ""
	})
	return bad
}
