package gateway_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// TestAnswersStayNearTheRequestSize: values repeated in a field, unknown
// fields and long reference numbers cannot make a post's answer or an
// import's stored results many times larger than the request (docs/api.md,
// Limits against abuse; a 201 KB post was once answered with 118 MB).
func TestAnswersStayNearTheRequestSize(t *testing.T) {
	a := newAPI(t)
	// Each job of a post has its own reference (%[1]d), 1,024 characters
	// long: a repeated one would be a duplicate, reported once.
	longRef := strings.Repeat("R", 1020) + "%04[1]d"
	many := func(n int, v string) string {
		vs := make([]string, n)
		for i := range vs {
			vs[i] = v
		}
		b, _ := json.Marshal(vs)
		return string(b)
	}
	manyFields := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, `,"f%d":0`, i)
		}
		return b.String()
	}
	tests := []struct {
		name string
		job  string // one job, a format for its number; the post sends 20
	}{
		{"10,000 bad employment types", `{"referenceNumber":"` + longRef + `","employmentType":` + many(10_000, "x") + `}`},
		{"ten bad values in each list", `{"referenceNumber":"` + longRef + `","employmentType":` + many(10, "x") + `,"routeType":` + many(10, "y") + `}`},
		{"2,000 unknown fields", `{"referenceNumber":"` + longRef + `"` + manyFields(2000) + `}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jobs := make([]string, 20)
			for i := range jobs {
				jobs[i] = fmt.Sprintf(tt.job, i)
			}
			body := "[" + strings.Join(jobs, ",") + "]"
			resp := a.do("POST", "/api/v2.0/jobs.json", body)
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%d %.300s", resp.StatusCode, got)
			}
			if ratio := float64(len(got)) / float64(len(body)); ratio > 20 {
				t.Errorf("a %d-byte post was answered with %d bytes (%.1fx)", len(body), len(got), ratio)
			}
			t.Logf("request %d bytes, answer %d bytes", len(body), len(got))
		})
	}
}

func TestByteOrderMarkIgnored(t *testing.T) {
	a := newAPI(t)
	const bom = "\uFEFF"
	tests := []struct{ name, path, body string }{
		{"JSON post", "/api/v2.0/jobs.json", bom + `[{"referenceNumber":"BOM1","title":"T","state":"TX","driverType":"Student","freightType":"Box","description":"x"}]`},
		{"XML post", "/api/v2.0/jobs.xml", bom + `<?xml version="1.0" encoding="UTF-8"?><jobs><job><referenceNumber>BOM2</referenceNumber><title>T</title><state>TX</state><driverType>Student</driverType><freightType>Box</freightType><description>x</description></job></jobs>`},
		{"XML post without declaration", "/api/v2.0/jobs.xml", bom + `<jobs><job><referenceNumber>BOM3</referenceNumber><title>T</title><state>TX</state><driverType>Student</driverType><freightType>Box</freightType><description>x</description></job></jobs>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := a.do("POST", tt.path, tt.body)
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !(strings.Contains(string(got), `"added":1`) || strings.Contains(string(got), "<added>1</added>")) {
				t.Errorf("%d %s", resp.StatusCode, got)
			}
		})
	}
	resp := a.do("POST", "/api/v2.0/job-imports", bom+`{"jobs":[]}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("import with a byte order mark: %d", resp.StatusCode)
	}
}

func TestMethodNotAllowedSaysWhatIs(t *testing.T) {
	a := newAPI(t)
	tests := []struct{ method, path, allow string }{
		{"PUT", "/api/v2.0/jobs.json", "GET, POST, DELETE"},
		{"PATCH", "/api/v2.0/jobs.xml", "GET, POST, DELETE"},
		{"POST", "/api/v2.0/jobs.json/7", "GET, DELETE"},
		{"GET", "/api/v2.0/jobs.json/reference/R1", "DELETE"},
		{"POST", "/api/v2.0/drivers.xml", "GET"},
		{"DELETE", "/api/v2.0/job-imports", "POST"},
		{"PUT", "/api/v2.0/job-imports/0b6a7f0e-8d0c-4d7e-9a1b-2c3d4e5f6a7b", "GET"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			// Without credentials: the method is wrong whoever asks.
			resp := a.doAs("", tt.method, tt.path, "")
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != tt.allow {
				t.Errorf("%d Allow %q, want 405 Allow %q", resp.StatusCode, resp.Header.Get("Allow"), tt.allow)
			}
			if !strings.Contains(string(body), tt.method) || !strings.Contains(string(body), tt.allow) {
				t.Errorf("message does not name the method and the allowed ones: %s", body)
			}
		})
	}
}

// TestBlankReferenceIsNull: a blank referenceNumber is missing, so entries
// show it as null (docs/api.md, Jobs), in the post's answer and in an
// import's results.
func TestBlankReferenceIsNull(t *testing.T) {
	a := newAPI(t)
	for _, path := range []string{"/api/v2.0/jobs.json", "/api/v2.0/jobs.xml"} {
		body := `[{"referenceNumber":"  ","title":"T","state":"TX","driverType":"Student","freightType":"Box","description":"x"}]`
		if strings.HasSuffix(path, ".xml") {
			body = `<jobs><job><referenceNumber> </referenceNumber><title>T</title><state>TX</state><driverType>Student</driverType><freightType>Box</freightType><description>x</description></job></jobs>`
		}
		resp := a.do("POST", path, body)
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := `{"index":0,"referenceNumber":null,"field":"referenceNumber"`
		if strings.HasSuffix(path, ".xml") {
			want = `<error><index>0</index><referenceNumber/><field>referenceNumber</field>`
		}
		if !strings.Contains(string(got), want) {
			t.Errorf("%s: want %s in %s", path, want, got)
		}
	}
}

// TestJobsListPagesOverREST: page_size and page_token give the gRPC paging
// over REST, with a Link to the next page; without them the list is whole.
func TestJobsListPagesOverREST(t *testing.T) {
	a := newAPI(t)
	var jobs []doc
	for i := range 5 {
		jobs = append(jobs, doc{{"referenceNumber", fmt.Sprintf("P%d", i)}, {"title", "T"}, {"state", "TX"},
			{"driverType", "Student"}, {"freightType", "Box"}, {"description", "x"}})
	}
	a.post(jobs...)
	count := func(path string) (int, string) {
		resp := a.do("GET", path, "")
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, body)
		}
		return strings.Count(string(body), `"referenceNumber"`) + strings.Count(string(body), "<referenceNumber>"), resp.Header.Get("Link")
	}
	if n, link := count("/api/v2.0/jobs.json"); n != 5 || link != "" {
		t.Errorf("whole list: %d jobs, Link %q", n, link)
	}
	if n, link := count("/api/v2.0/jobs.json?pageSize=4"); n != 4 || link == "" {
		t.Errorf("pageSize=4: %d jobs, Link %q", n, link)
	}
	path := "/api/v2.0/jobs.xml?page_size=2"
	var pages []int
	for path != "" && len(pages) < 5 {
		n, link := count(path)
		pages = append(pages, n)
		path = ""
		if link != "" {
			path = link[strings.Index(link, "/api/"):strings.Index(link, ">")]
		}
	}
	if fmt.Sprint(pages) != "[2 2 1]" {
		t.Errorf("pages of %v jobs, want [2 2 1]", pages)
	}
	resp := a.do("GET", "/api/v2.0/jobs.json?page_size=0", "")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `page_size: \"0\"`) {
		t.Errorf("page_size=0: %d %s", resp.StatusCode, body)
	}
	// Tokens are signed: one altered, or the plain id tokens once were, is
	// refused as a token the service did not answer.
	_, link := count("/api/v2.0/jobs.json?page_size=2")
	token, _ := url.QueryUnescape(regexp.MustCompile(`page_token=([^&>]+)`).FindStringSubmatch(link)[1])
	swap := "A"
	if token[2] == 'A' {
		swap = "B"
	}
	for _, bad := range []string{token[:2] + swap + token[3:], "2"} {
		resp := a.do("GET", "/api/v2.0/jobs.json?page_token="+url.QueryEscape(bad), "")
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "page_token: ") {
			t.Errorf("page_token %q: %d %s", bad, resp.StatusCode, body)
		}
	}
}
