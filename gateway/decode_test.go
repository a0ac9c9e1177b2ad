package gateway

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/truckjobs/jobboard/gateway/decode"
	"github.com/truckjobs/jobboard/gateway/wire"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/internal/rules"
)

func s(v string) *string { return &v }

func TestDecodeJobs(t *testing.T) {
	tests := []struct {
		name   string
		format wire.Format
		body   string
		want   []*restv2.JobInput
	}{
		{"json strings", wire.JSON, `[{"referenceNumber":"A1","title":"T","twicOnly":"1"}]`,
			[]*restv2.JobInput{{ReferenceNumber: s("A1"), Title: s("T"), TwicOnly: s("1")}}},
		{"json numbers and booleans as text", wire.JSON, `[{"referenceNumber":12345,"payAmountMin":18.5,"payAmountMax":"20.00","twicOnly":true}]`,
			[]*restv2.JobInput{{ReferenceNumber: s("12345"), PayAmountMin: s("18.5"), PayAmountMax: s("20.00"), TwicOnly: s("true")}}},
		{"json twicOnly 0", wire.JSON, `[{"twicOnly":0}]`, []*restv2.JobInput{{TwicOnly: s("0")}}},
		{"json null is unset", wire.JSON, `[{"title":null,"city":null}]`, []*restv2.JobInput{{}}},
		{"json list as array", wire.JSON, `[{"employmentType":["Full-Time","Part-Time"],"routeType":[]}]`,
			[]*restv2.JobInput{{EmploymentType: []string{"Full-Time", "Part-Time"}}}},
		{"json list as single string", wire.JSON, `[{"routeType":"OTR"}]`, []*restv2.JobInput{{RouteType: []string{"OTR"}}}},
		{"json unknown fields kept in order", wire.JSON, `[{"zeta":"z","id":5,"extra":{"a":[1, 2]},"gone":null}]`,
			[]*restv2.JobInput{{ExtraFields: []*restv2.ExtraField{
				{Name: "zeta", Value: s("z")}, {Name: "id", Value: s("5")}, {Name: "extra", Value: s(`{"a":[1,2]}`)}, {Name: "gone"}}}}},
		{"json escapes", wire.JSON, `[{"title":"a \"b\" \u00e9\n"}]`, []*restv2.JobInput{{Title: s("a \"b\" é\n")}}},
		{"json empty array", wire.JSON, `[]`, nil},
		{"json escaped names", wire.JSON, `[{"ti\u0074le":"T","\u0063ity":"C","z\u00e9":"x"}]`,
			[]*restv2.JobInput{{Title: s("T"), City: s("C"), ExtraFields: []*restv2.ExtraField{{Name: "zé", Value: s("x")}}}}},
		{"json repeated names: the first value stays, each repeat is noted once", wire.JSON,
			`[{"title":"a","title":"b","routeType":"OTR","routeType":["Regional",null,"Local"],"city":"x","city":null,"title":"c"}]`,
			[]*restv2.JobInput{{Title: s("a"), RouteType: []string{"OTR"}, City: s("x"), RepeatedFields: []*restv2.ExtraField{
				{Name: "title", Value: s("b")}, {Name: "routeType", Value: s(`["Regional",null,"Local"]`)}, {Name: "city"}}}}},
		{"json invalid UTF-8 and lone surrogates as U+FFFD", wire.JSON, "[{\"title\":\"a\xffb\",\"\xff\":\"\\ud800\"}]",
			[]*restv2.JobInput{{Title: s("a\uFFFDb"), ExtraFields: []*restv2.ExtraField{{Name: "\uFFFD", Value: s("\uFFFD")}}}}},
		{"json each job its own values", wire.JSON, `[{"title":"first","city":"Dallas","n":[1]},{"title":"second"},{}]`,
			[]*restv2.JobInput{{Title: s("first"), City: s("Dallas"), ExtraFields: []*restv2.ExtraField{{Name: "n", Value: s("[1]")}}},
				{Title: s("second")}, {}}},
		{"xml fields", wire.XML, `<?xml version="1.0" encoding="UTF-8"?><jobs><job><referenceNumber>A1</referenceNumber><title>T &amp; U</title></job></jobs>`,
			[]*restv2.JobInput{{ReferenceNumber: s("A1"), Title: s("T & U")}}},
		{"xml cdata and escaped text", wire.XML, `<jobs><job><description><![CDATA[<p>Hi</p>]]></description><requirements>&lt;b&gt;x&lt;/b&gt;</requirements></job></jobs>`,
			[]*restv2.JobInput{{Description: s("<p>Hi</p>"), Requirements: s("<b>x</b>")}}},
		{"xml repeated list elements", wire.XML, `<jobs><job><employmentType>Full-Time</employmentType><employmentType>Temporary</employmentType></job></jobs>`,
			[]*restv2.JobInput{{EmploymentType: []string{"Full-Time", "Temporary"}}}},
		{"xml empty element", wire.XML, `<jobs><job><twicOnly/><city></city></job></jobs>`,
			[]*restv2.JobInput{{TwicOnly: s(""), City: s("")}}},
		{"xml whitespace and comments", wire.XML, "<jobs>\n  <!-- feed -->\n  <job>\n    <state>TX</state>\n  </job>\n</jobs>\n",
			[]*restv2.JobInput{{State: s("TX")}}},
		{"xml unknown element", wire.XML, `<jobs><job><benefits>Dental</benefits><id>4</id></job></jobs>`,
			[]*restv2.JobInput{{ExtraFields: []*restv2.ExtraField{{Name: "benefits", Value: s("Dental")}, {Name: "id", Value: s("4")}}}}},
		{"xml two jobs", wire.XML, `<jobs><job><title>a</title></job><job><title>b</title></job></jobs>`,
			[]*restv2.JobInput{{Title: s("a")}, {Title: s("b")}}},
		{"xml unknown element nested 32 levels, the most", wire.XML,
			"<jobs><job><x>" + strings.Repeat("<a>", decode.MaxXMLDepth-1) + "v" + strings.Repeat("</a>", decode.MaxXMLDepth-1) + "</x></job></jobs>",
			[]*restv2.JobInput{{ExtraFields: []*restv2.ExtraField{{Name: "x", Value: s("v")}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got restv2.PostJobsRequest
			if err := (marshaler{tt.format}).Unmarshal([]byte(tt.body), &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&restv2.PostJobsRequest{Jobs: tt.want}, &got, protocmp.Transform()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeDeleteLists(t *testing.T) {
	var ids restv2.DeleteJobsRequest
	if err := (marshaler{wire.JSON}).Unmarshal([]byte(`[1, "2", "abc", 4.5, null]`), &ids); err != nil {
		t.Fatal(err)
	}
	if want := []string{"1", "2", "abc", "4.5", ""}; !cmp.Equal(ids.Ids, want) {
		t.Errorf("json ids %q, want %q", ids.Ids, want)
	}
	var refs restv2.DeleteJobsByReferenceRequest
	if err := (marshaler{wire.XML}).Unmarshal([]byte(`<jobs><job>A1</job><job> B2 </job></jobs>`), &refs); err != nil {
		t.Fatal(err)
	}
	if want := []string{"A1", " B2 "}; !cmp.Equal(refs.ReferenceNumbers, want) {
		t.Errorf("xml refs %q, want %q", refs.ReferenceNumbers, want)
	}
}

func TestDecodeRejects(t *testing.T) {
	tests := []struct {
		name   string
		format wire.Format
		body   string
		want   string // part of the error message
	}{
		{"json object not array", wire.JSON, `{"jobs":[]}`, "the body must be a JSON array of jobs"},
		{"json array of numbers", wire.JSON, `[1]`, "$[0]: each job must be a JSON object"},
		{"json object in scalar field", wire.JSON, `[{"title":{"x":1}}]`, "$[0].title: expected a single value, got an object"},
		{"json array in scalar field", wire.JSON, `[{"title":["a"]}]`, "$[0].title: expected a single value, got an array"},
		{"json object in list", wire.JSON, `[{"routeType":[{}]}]`, "$[0].routeType[0]: expected a single value, got an object"},
		{"json truncated", wire.JSON, `[{"title":"a"`, "the body ends too soon"},
		{"json syntax", wire.JSON, `[{"title" "a"}]`, "malformed JSON at byte"},
		{"json trailing data", wire.JSON, `[] []`, "unexpected data after the top-level value"},
		{"xml doctype", wire.XML, `<?xml version="1.0"?><!DOCTYPE jobs [<!ENTITY x "y">]><jobs/>`, "DOCTYPE (or any other <!...> declaration) is not accepted"},
		{"xml doctype lower case", wire.XML, `<?xml version="1.0"?><!doctype jobs [<!ENTITY x "y">]><jobs/>`, "DOCTYPE (or any other <!...> declaration) is not accepted"},
		{"xml doctype mixed case", wire.XML, `<!DocType jobs><jobs/>`, "DOCTYPE (or any other <!...> declaration) is not accepted"},
		{"xml entity declaration", wire.XML, `<!ENTITY x "y"><jobs/>`, "DOCTYPE (or any other <!...> declaration) is not accepted"},
		{"xml unknown entity", wire.XML, `<jobs><job><title>&x;</title></job></jobs>`, "malformed XML"},
		{"xml wrong root", wire.XML, `<job><title>a</title></job>`, "the root element must be <jobs>, not <job>"},
		{"xml wrong child", wire.XML, `<jobs><posting/></jobs>`, "expected <job> elements, found <posting>"},
		{"xml nested in field", wire.XML, `<jobs><job><title><b>a</b></title></job></jobs>`, "/jobs/job[1]/title: expected text, found element <b>"},
		{"xml truncated", wire.XML, `<jobs><job><title>a`, "malformed XML"},
		{"xml mismatched", wire.XML, `<jobs><job></jobs>`, "malformed XML"},
		{"xml two roots", wire.XML, `<jobs/><jobs/>`, "unexpected content after the </jobs> root element"},
		{"xml other encoding", wire.XML, `<?xml version="1.0" encoding="ISO-8859-1"?><jobs/>`, "the body must be XML in UTF-8"},
		{"json too many items", wire.JSON, "[" + strings.Repeat("{},", rules.MaxListItems) + "{}]", "more than 10000 items"},
		{"xml too many items", wire.XML, "<jobs>" + strings.Repeat("<job/>", rules.MaxListItems+1) + "</jobs>", "more than 10000 items"},
		{"xml deep unknown", wire.XML, "<jobs><job><x>" + strings.Repeat("<a>", 40) + strings.Repeat("</a>", 40) + "</x></job></jobs>", "nested deeper than 32"},
		{"xml unknown element nested 33 levels", wire.XML, "<jobs><job><x>" + strings.Repeat("<a>", 32) + strings.Repeat("</a>", 32) + "</x></job></jobs>",
			"/jobs/job[1]/x" + strings.Repeat("/a", 32) + ": elements nested deeper than 32 levels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got restv2.PostJobsRequest
			err := (marshaler{tt.format}).Unmarshal([]byte(tt.body), &got)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestDecodeEmptyBody(t *testing.T) {
	for _, f := range []wire.Format{wire.JSON, wire.XML} {
		var got restv2.PostJobsRequest
		if err := (marshaler{f}).Unmarshal([]byte(" \n"), &got); !errors.Is(err, io.EOF) {
			t.Errorf("%v: empty body gave %v, want io.EOF", f, err)
		}
	}
}

// TestDeleteTooManyItems: a delete of more than rules.MaxListItems ids or
// reference numbers is refused in either format with the words about
// deletes, not those about posts.
func TestDeleteTooManyItems(t *testing.T) {
	jsonList := "[" + strings.Repeat(`"1",`, rules.MaxListItems) + `"1"]`
	xmlList := "<jobs>" + strings.Repeat("<job>1</job>", rules.MaxListItems+1) + "</jobs>"
	for _, tt := range []struct {
		name   string
		format wire.Format
		body   string
		msg    any
	}{
		{"json ids", wire.JSON, jsonList, &restv2.DeleteJobsRequest{}},
		{"json reference numbers", wire.JSON, jsonList, &restv2.DeleteJobsByReferenceRequest{}},
		{"xml ids", wire.XML, xmlList, &restv2.DeleteJobsRequest{}},
		{"xml reference numbers", wire.XML, xmlList, &restv2.DeleteJobsByReferenceRequest{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := (marshaler{tt.format}).Unmarshal([]byte(tt.body), tt.msg)
			const want = "the body lists more than 10000 items; a delete takes at most 10,000 ids or reference numbers, so send the rest in further requests"
			if err == nil || err.Error() != want {
				t.Errorf("error %v, want %q", err, want)
			}
		})
	}
}

func TestDecodeImportRejects(t *testing.T) {
	for _, tt := range []struct{ body, want string }{
		{`{"jobs":{}}`, "jobs: must be an array of jobs"},
		{`{"jobs":"x"}`, "jobs: must be an array of jobs"},
		{`{"callbackUrl":"https://example.com/cb"}`, "jobs: is required, an array of jobs"},
		{`{"jobs":[],"deleteJobs":"yes"}`, `deleteJobs: "yes" is not a boolean (true or false)`},
		{`[]`, "the body must be a JSON object"},
	} {
		var got restv2.CreateJobImportRequest
		err := (marshaler{wire.JSON}).Unmarshal([]byte(tt.body), &got)
		if err == nil || err.Error() != tt.want && !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.body, err, tt.want)
		}
	}
}

func TestDecodeImportDeleteJobs(t *testing.T) {
	for body, want := range map[string]bool{
		`{"jobs":[]}`: false, `{"jobs":[],"deleteJobs":true}`: true, `{"jobs":[],"deleteJobs":"TRUE"}`: true,
		`{"jobs":[],"deleteJobs":1}`: true, `{"jobs":[],"deleteJobs":0}`: false, `{"jobs":[],"deleteJobs":null}`: false,
	} {
		var got restv2.CreateJobImportRequest
		if err := (marshaler{wire.JSON}).Unmarshal([]byte(body), &got); err != nil || got.DeleteJobs != want {
			t.Errorf("%s: deleteJobs %v (error %v), want %v", body, got.DeleteJobs, err, want)
		}
	}
}
