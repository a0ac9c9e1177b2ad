package gateway_test

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestBadInputCatalogue sends the inputs a careless or hostile client
// sends, over REST in both formats, and checks each gets the 4xx the
// docs/api.md names with an error body in the suffix's format (or, for a post
// the service could read, a 200 summary that refuses the job), and that
// nothing already stored changed: the account's jobs and the whole jobs
// table read the same after as before.
func TestBadInputCatalogue(t *testing.T) {
	a := newAPI(t)
	a.post(fullJob, minimalJob, markupJob)
	snapshot := func() string {
		resp := a.do("GET", "/api/v2.0/jobs.json", "")
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var rows string
		if err := a.store.DB().Get(&rows, `SELECT coalesce(string_agg(j::text, E'\n' ORDER BY id), '') FROM jobs j`); err != nil {
			t.Fatal(err)
		}
		return string(body) + "\n" + rows
	}
	before := snapshot()

	big := strings.Repeat("x", 10<<20)
	job := func(title string) string {
		return fmt.Sprintf(`[{"referenceNumber":"NEW1","title":%s,"state":"TX","driverType":"Student","freightType":"Box","description":"x"}]`, title)
	}
	nested := func(depth int) string { return strings.Repeat("[", depth) + strings.Repeat("]", depth) }
	tests := []struct {
		name, method, path, body string
		status                   int
		// summaryRefuses: 200 and a summary with errors, nothing added.
		summaryRefuses bool
	}{
		{"malformed JSON", "POST", "/api/v2.0/jobs.json", `[{"referenceNumber":`, 400, false},
		{"truncated JSON in a delete", "DELETE", "/api/v2.0/jobs.json", `[1, 2`, 400, false},
		{"truncated XML", "POST", "/api/v2.0/jobs.xml", `<jobs><job><referenceNumber>A`, 400, false},
		{"mismatched XML tags", "POST", "/api/v2.0/jobs.xml", `<jobs><job></jobs></job>`, 400, false},
		{"object where the array belongs", "POST", "/api/v2.0/jobs.json", `{"referenceNumber":"A1"}`, 400, false},
		{"array where the object belongs", "POST", "/api/v2.0/job-imports", `[{"referenceNumber":"A1"}]`, 400, false},
		{"jobs not an array in an import", "POST", "/api/v2.0/job-imports", `{"jobs":{"referenceNumber":"A1"}}`, 400, false},
		{"numbers where jobs belong", "POST", "/api/v2.0/jobs.json", `[1, 2, 3]`, 400, false},
		{"object where an id belongs", "DELETE", "/api/v2.0/jobs.json", `[{"id":1}]`, 400, false},
		{"wrong XML root", "POST", "/api/v2.0/jobs.xml", `<drivers><driver/></drivers>`, 400, false},
		{"DOCTYPE", "POST", "/api/v2.0/jobs.xml", `<!DOCTYPE jobs [<!ENTITY x "y">]><jobs><job><title>&x;</title></job></jobs>`, 400, false},
		{"doctype in lower case", "POST", "/api/v2.0/jobs.xml", `<!doctype jobs [<!ENTITY x "y">]><jobs><job><title>&x;</title></job></jobs>`, 400, false},
		{"an entity declared without a DOCTYPE", "POST", "/api/v2.0/jobs.xml", `<!ENTITY x "y"><jobs/>`, 400, false},
		{"10,000 employment types", "POST", "/api/v2.0/jobs.json",
			`[{"referenceNumber":"NEW1","title":"T","state":"TX","driverType":"Student","freightType":"Box","description":"x","employmentType":[` + strings.Repeat(`"Gig",`, 9999) + `"Gig"]}]`, 200, true},
		{"external entity", "POST", "/api/v2.0/jobs.xml", `<!DOCTYPE jobs [<!ENTITY x SYSTEM "file:///etc/passwd">]><jobs><job><title>&x;</title></job></jobs>`, 400, false},
		{"undeclared entity", "POST", "/api/v2.0/jobs.xml", `<jobs><job><title>&x;</title></job></jobs>`, 400, false},
		{"deep JSON nesting", "POST", "/api/v2.0/jobs.json", `[{"extra":` + nested(100000) + `}]`, 400, false},
		{"deep XML nesting", "POST", "/api/v2.0/jobs.xml", `<jobs><job><extra>` + strings.Repeat("<a>", 100000) + strings.Repeat("</a>", 100000) + `</extra></job></jobs>`, 400, false},
		{"invalid UTF-8 in JSON", "POST", "/api/v2.0/jobs.json", job("\"\xff\xfe\""), 400, false},
		{"invalid UTF-8 in XML", "DELETE", "/api/v2.0/jobs.xml/reference", "<jobs><job>\xc3\x28</job></jobs>", 400, false},
		{"raw NUL byte in JSON", "POST", "/api/v2.0/jobs.json", job("\"a\x00b\""), 400, false},
		{"escaped NUL in a title", "POST", "/api/v2.0/jobs.json", job(`"a\u0000b"`), 200, true},
		{"NUL character reference in XML", "POST", "/api/v2.0/jobs.xml", `<jobs><job><title>&#0;</title></job></jobs>`, 400, false},
		{"a title of 10 MB", "POST", "/api/v2.0/jobs.json", job(`"` + big + `"`), 200, true},
		{"a reference of 10 MB", "DELETE", "/api/v2.0/jobs.json/reference/" + strings.Repeat("R", 10<<10), "", 200, true},
		{"a title of the wrong type", "POST", "/api/v2.0/jobs.json", job(`{"a":1}`), 400, false},
		{"pay out of range", "POST", "/api/v2.0/jobs.json",
			`[{"referenceNumber":"NEW1","title":"T","state":"TX","driverType":"Student","freightType":"Box","description":"x","payAmountMin":1e400}]`, 200, true},
		{"an id out of range", "GET", "/api/v2.0/jobs.json/99999999999999999999999", "", 400, false},
		{"a negative id", "GET", "/api/v2.0/jobs.xml/-1", "", 404, false},
		{"ids out of range in a delete", "DELETE", "/api/v2.0/jobs.json", `[99999999999999999999999, -5, 1.5, "abc"]`, 200, true},
		{"a query parameter out of range", "GET", "/api/v2.0/drivers.json?max=1001", "", 400, false},
		{"a query parameter repeated", "GET", "/api/v2.0/drivers.xml?max=2&max=2", "", 400, false},
		{"a jobs list parameter repeated", "GET", "/api/v2.0/jobs.json?page_size=2&page_size=3", "", 400, false},
		{"a jobs list parameter repeated, JSON name", "GET", "/api/v2.0/jobs.xml?pageSize=2&pageSize=2", "", 400, false},
		{"a radius out of range", "GET", "/api/v2.0/drivers.xml?lives_within_radius=1e9&lives_within_zip=10001", "", 400, false},
		{"a post over 16 MiB", "POST", "/api/v2.0/jobs.json", `[{"description":"` + strings.Repeat("y", 16<<20) + `"}]`, 413, false},
		{"a delete over 1 MiB", "DELETE", "/api/v2.0/jobs.xml", "<jobs>" + strings.Repeat("<job>1</job>", 100000) + "</jobs>", 413, false},
		{"an import over 64 MiB", "POST", "/api/v2.0/job-imports", `{"jobs":[{"description":"` + strings.Repeat("z", 64<<20) + `"}]}`, 413, false},
		{"a body where none is taken", "GET", "/api/v2.0/jobs.json", strings.Repeat("q", 2<<20), 413, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := a.do(tt.method, tt.path, tt.body)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("%d, want %d: %.300s", resp.StatusCode, tt.status, body)
			}
			xmlPath := strings.Contains(tt.path, ".xml")
			if xmlPath != strings.Contains(resp.Header.Get("Content-Type"), "xml") {
				t.Errorf("Content-Type %q for %s", resp.Header.Get("Content-Type"), tt.path)
			}
			if tt.summaryRefuses {
				var sum struct{ Added, Updated, Deleted, Errors int }
				if err := json.Unmarshal(body, &sum); err != nil || sum.Errors == 0 || sum.Added+sum.Updated+sum.Deleted != 0 {
					t.Errorf("want a summary refusing the request: %.300s", body)
				}
				return
			}
			var e struct {
				Code    int    `json:"code" xml:"code"`
				Status  string `json:"status" xml:"status"`
				Message string `json:"message" xml:"message"`
			}
			var err error
			if xmlPath {
				err = xml.Unmarshal(body, &e)
			} else {
				var wrapped struct {
					Error *struct {
						Code    int    `json:"code"`
						Status  string `json:"status"`
						Message string `json:"message"`
					} `json:"error"`
				}
				if err = json.Unmarshal(body, &wrapped); err == nil && wrapped.Error != nil {
					e.Code, e.Status, e.Message = wrapped.Error.Code, wrapped.Error.Status, wrapped.Error.Message
				}
			}
			if err != nil || e.Code != tt.status || e.Status == "" || e.Message == "" {
				t.Errorf("error body %.300s (%v)", body, err)
			}
			if len(e.Message) > 2000 {
				t.Errorf("the message repeats %d bytes of input back", len(e.Message))
			}
		})
	}

	if after := snapshot(); after != before {
		t.Errorf("stored jobs changed:\nbefore %s\nafter  %s", before, after)
	}

	// Values that look like SQL or script are data: stored as sent, or
	// with the markup the rules remove taken out, never run.
	hostile := `[{"referenceNumber":"SQL1","title":"x'); DROP TABLE jobs; --","city":"Robert'); DELETE FROM accounts;--",
		"state":"TX","driverType":"Student","freightType":"Box",
		"description":"<script>alert(1)</script><p onmouseover=\"alert(2)\">ok</p><img src=x onerror=alert(3)>"}]`
	resp := a.do("POST", "/api/v2.0/jobs.json", hostile)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"added":1`) {
		t.Fatalf("hostile-looking values: %d %s", resp.StatusCode, body)
	}
	resp = a.do("GET", "/api/v2.0/jobs.json", "")
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`"title":"x'); DROP TABLE jobs; --"`, `"city":"Robert'); DELETE FROM accounts;--"`, `"description":"<p>ok</p>"`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("want %s in the list: %.1000s", want, body)
		}
	}
	if strings.Contains(string(body), "alert") || strings.Count(string(body), `"referenceNumber"`) != 4 {
		t.Errorf("script kept, or jobs lost: %.1000s", body)
	}
}

// TestRepeatedQueryParameter: every list refuses a parameter it reads given
// more than once, naming it and the values in the same words, rather than
// picking one of the values; an unknown parameter repeated is ignored.
func TestRepeatedQueryParameter(t *testing.T) {
	a := newAPI(t)
	tests := []struct {
		path    string
		status  int
		message string
	}{
		{"/api/v2.0/drivers.json?max=2&max=2", 400, `too many values for field \"max\": 2, 2`},
		{"/api/v2.0/events?limit=5&limit=6", 400, `too many values for field \"limit\": 5, 6`},
		{"/api/v2.0/jobs.json?page_size=2&page_size=3", 400, `too many values for field \"page_size\": 2, 3`},
		{"/api/v2.0/jobs.json?pageSize=2&pageSize=2", 400, `too many values for field \"pageSize\": 2, 2`},
		{"/api/v2.0/jobs.xml?page_token=a&page_token=b&page_size=1", 400, `too many values for field "page_token": a, b`},
		{"/api/v2.0/jobs.json?page_size=2&utm=a&utm=b", 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			resp := a.do("GET", tt.path, "")
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status || !strings.Contains(string(body), tt.message) {
				t.Errorf("%d %.300s, want %d and %s", resp.StatusCode, body, tt.status, tt.message)
			}
		})
	}
}

// TestRefusedBodyIsTheAnswer: a body is decoded as it arrives, yet one
// over its route's limit, or not UTF-8, is answered as such even when its
// start failed to decode first, and one that decoded is not stored when
// its end is refused.
func TestRefusedBodyIsTheAnswer(t *testing.T) {
	a := newAPI(t)
	valid := `[{"referenceNumber":"LATE1","title":"T","state":"TX","driverType":"Student","freightType":"Box","description":"x"}]`
	spaces := strings.Repeat(" ", 1<<20)
	tests := []struct {
		name, path, body string
		status           int
		message          string
	}{
		{"malformed start, post over 16 MiB", "/api/v2.0/jobs.json", `[}` + strings.Repeat(spaces, 17), 413, "larger than the 16 MiB"},
		{"malformed start, import over 64 MiB", "/api/v2.0/job-imports", `{]` + strings.Repeat(spaces, 65), 413, "larger than the 64 MiB"},
		{"malformed start, invalid UTF-8 after a MiB", "/api/v2.0/jobs.json", `[}` + spaces + "\xff", 400, "not valid UTF-8"},
		{"valid jobs, invalid UTF-8 after them", "/api/v2.0/jobs.json", valid + spaces + "\xff", 400, "not valid UTF-8"},
		{"valid import, invalid UTF-8 after it", "/api/v2.0/job-imports", `{"jobs":` + valid + `}` + spaces + "\xc3", 400, "not valid UTF-8"},
		{"valid jobs, over the limit after them", "/api/v2.0/jobs.json", valid + strings.Repeat(spaces, 17), 413, "larger than the 16 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := a.do("POST", tt.path, tt.body)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status || !strings.Contains(string(body), tt.message) {
				t.Errorf("%d %.300s, want %d and %q", resp.StatusCode, body, tt.status, tt.message)
			}
		})
	}
	var late int
	if err := a.store.DB().Get(&late, `SELECT count(*) FROM jobs WHERE reference_number = 'LATE1'`); err != nil || late != 0 {
		t.Errorf("%d jobs stored from refused bodies (%v)", late, err)
	}
	var imports int
	if err := a.store.DB().Get(&imports, `SELECT count(*) FROM job_imports`); err != nil || imports != 0 {
		t.Errorf("%d imports stored from refused bodies (%v)", imports, err)
	}
}
