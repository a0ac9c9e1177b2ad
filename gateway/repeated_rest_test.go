package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// validJob is a job's members that pass every rule, after which a case adds
// its own; job(ref, more) is one JSON job object.
func jsonJob(ref, more string) string {
	return `{"referenceNumber":"` + ref + `","title":"T","state":"TX","driverType":"Student","freightType":"Box","description":"x"` + more + `}`
}

func xmlJob(ref, more string) string {
	return `<job><referenceNumber>` + ref + `</referenceNumber><title>T</title><state>TX</state><driverType>Student</driverType>` +
		`<freightType>Box</freightType><description>x</description>` + more + `</job>`
}

// TestRepeatedMemberInAJob: a job that names a member twice is not saved,
// and is one invalid entry naming the member with the second value; the
// other jobs of the post go on (docs/api.md, Limits against abuse). The
// last value used to win silently: referenceNumber DK1 then DK2 was stored
// as DK2.
func TestRepeatedMemberInAJob(t *testing.T) {
	a := newAPI(t)
	type entry struct {
		Index           int
		ReferenceNumber *string
		Field           *string
		Value           *string
		Message         string
	}
	tests := []struct {
		name, path, body string
		field, value     string // of the one invalid entry; "" for none
		message          string // in the entry's message
	}{
		{"JSON reference number", "/api/v2.0/jobs.json", jsonJob("DK1", `,"referenceNumber":"DK2"`),
			"referenceNumber", "DK2", `referenceNumber: "DK2" is a second value for a field this job already gave`},
		{"JSON same value twice", "/api/v2.0/jobs.json", jsonJob("DK3", `,"title":"T"`), "title", "T", "a job gives each field once"},
		{"JSON null the second time", "/api/v2.0/jobs.json", jsonJob("DK4", `,"city":"Waco","city":null`), "city", "",
			"city: is given more than once in this job"},
		{"JSON list field", "/api/v2.0/jobs.json", jsonJob("DK5", `,"employmentType":"Full-Time","employmentType":["Part-Time"]`),
			"employmentType", `["Part-Time"]`, "a job gives each field once"},
		{"JSON unknown field", "/api/v2.0/jobs.json", jsonJob("DK6", `,"benefits":"dental","benefits":"vision"`), "benefits", "vision", "second value"},
		{"JSON escaped name", "/api/v2.0/jobs.json", jsonJob("DK7", `,"\u0074itle":"U"`), "title", "U", "second value"},
		{"JSON inside an unknown field", "/api/v2.0/jobs.json", jsonJob("DK8", `,"benefits":{"plans":[{"dental":1,"dental":2}]}`),
			"benefits.plans.0.dental", "", "is given more than once"},
		{"JSON three times, one entry", "/api/v2.0/jobs.json", jsonJob("DK9", `,"state":"OK","state":"KS"`), "state", "OK", "second value"},
		{"JSON unknown structure once", "/api/v2.0/jobs.json", jsonJob("OK1", `,"benefits":{"dental":1,"vision":2}`), "", "", ""},
		{"XML reference number", "/api/v2.0/jobs.xml", "<jobs>" + xmlJob("DX1", "<referenceNumber>DX2</referenceNumber>") + "</jobs>",
			"referenceNumber", "DX2", "second value"},
		{"XML unknown element", "/api/v2.0/jobs.xml", "<jobs>" + xmlJob("DX3", "<benefits>a</benefits><benefits>b</benefits>") + "</jobs>",
			"benefits", "b", "second value"},
		{"XML list field repeats by design", "/api/v2.0/jobs.xml",
			"<jobs>" + xmlJob("OK2", "<employmentType>Full-Time</employmentType><employmentType>Part-Time</employmentType>") + "</jobs>", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Each case posts its job between two good ones, which are added.
			body := "[" + jsonJob("A"+tt.name[:1], "") + "," + tt.body + "," + jsonJob("B"+tt.name[:1], "") + "]"
			if strings.HasSuffix(tt.path, ".xml") {
				body = "<jobs>" + xmlJob("AX", "") + strings.TrimSuffix(strings.TrimPrefix(tt.body, "<jobs>"), "</jobs>") + xmlJob("BX", "") + "</jobs>"
			}
			// The answer is read as JSON: the XML post is asked for again as JSON.
			resp := a.do("POST", tt.path, body)
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%d %s", resp.StatusCode, got)
			}
			if strings.HasSuffix(tt.path, ".xml") {
				checkXMLRepeat(t, string(got), tt.field, tt.value, tt.message)
				return
			}
			var sum struct {
				Added, Updated, Unchanged, Errors int
				ErrorMessages                     map[string]struct{ Errors []entry }
			}
			if err := json.Unmarshal(got, &sum); err != nil {
				t.Fatalf("%v: %s", err, got)
			}
			invalid := sum.ErrorMessages["invalidErrors"].Errors
			if tt.field == "" {
				if sum.Errors != 0 || sum.Added+sum.Updated+sum.Unchanged != 3 {
					t.Errorf("want all three saved: %s", got)
				}
				return
			}
			if sum.Errors != 1 || len(invalid) != 1 || sum.Added+sum.Updated+sum.Unchanged != 2 {
				t.Fatalf("want one invalid entry and two jobs saved: %s", got)
			}
			e := invalid[0]
			if e.Index != 1 || e.Field == nil || *e.Field != tt.field || !strings.Contains(e.Message, tt.message) ||
				(tt.value == "") != (e.Value == nil) || (e.Value != nil && *e.Value != tt.value) {
				t.Errorf("entry %s", got)
			}
			if e.ReferenceNumber == nil || !strings.HasPrefix(tt.body[strings.Index(tt.body, `"referenceNumber":"`)+19:], *e.ReferenceNumber+`"`) {
				t.Errorf("the entry names the job by its first reference number: %s", got)
			}
		})
	}
	// Nothing of DK1/DK2 was stored.
	resp := a.do("GET", "/api/v2.0/jobs.json", "")
	list, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, ref := range []string{`"DK1"`, `"DK2"`, `"DX1"`, `"DX2"`} {
		if strings.Contains(string(list), ref) {
			t.Errorf("job %s was stored: %s", ref, list)
		}
	}
}

// checkXMLRepeat checks the XML summary of a post whose middle job repeats
// field (none when field is "").
func checkXMLRepeat(t *testing.T, got, field, value, message string) {
	t.Helper()
	if field == "" {
		if !strings.Contains(got, "<errors>0</errors>") {
			t.Errorf("want no errors: %s", got)
		}
		return
	}
	want := "<index>1</index><referenceNumber>DX" // the first reference number
	if !strings.Contains(got, "<errors>1</errors>") || !strings.Contains(got, want) ||
		!strings.Contains(got, "<field>"+field+"</field><value>"+value+"</value>") || !strings.Contains(got, message) {
		t.Errorf("want one invalid entry for %s: %s", field, got)
	}
}

// TestRepeatedMemberRefusesTheBody: outside the jobs of a post or an
// import, a member named twice is a 400 naming it. A webhook body with two
// auth.token members used to be created with the second.
func TestRepeatedMemberRefusesTheBody(t *testing.T) {
	a := newAPI(t)
	tests := []struct{ name, method, path, body, want string }{
		{"webhook auth.token", "POST", "/api/v2.0/webhooks",
			`{"url":"https://example.com/h","auth":{"type":"bearer","token":"a","token":"b"}}`, `auth.\"token\": is named twice`},
		{"webhook url", "POST", "/api/v2.0/webhooks",
			`{"url":"https://example.com/h","url":"https://example.com/i"}`, `\"url\": is named twice`},
		{"import callbackUrl", "POST", "/api/v2.0/job-imports",
			`{"jobs":[],"callbackUrl":"https://example.com/a","callbackUrl":"https://example.com/b"}`, `\"callbackUrl\": is named twice`},
		{"import jobs", "POST", "/api/v2.0/job-imports", `{"jobs":[],"jobs":[]}`, `\"jobs\": is named twice`},
		{"import unknown member", "POST", "/api/v2.0/job-imports", `{"jobs":[],"meta":{"a":{"b":1,"b":2}}}`, `\"meta.a.b\": is named twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := a.do(tt.method, tt.path, tt.body)
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(got), tt.want) {
				t.Errorf("%d %s, want 400 with %s", resp.StatusCode, got, tt.want)
			}
		})
	}
}

// TestRepeatedMemberInAnImport: an imported job naming a member twice
// fails with one message naming it, through the stored form of the import;
// the import's other jobs are added.
func TestRepeatedMemberInAnImport(t *testing.T) {
	a := newAPI(t)
	ctx := context.Background()
	if err := a.services.Queue.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_ = a.services.Queue.Stop(stop)
	})
	resp := a.do("POST", "/api/v2.0/job-imports", `{"jobs":[`+jsonJob("IM1", `,"referenceNumber":"IM2"`)+`,`+jsonJob("IM3", "")+`]}`)
	created, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var imp struct{ Links struct{ Self string } }
	if err := json.Unmarshal(created, &imp); err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("%d %s", resp.StatusCode, created)
	}
	path := imp.Links.Self[strings.Index(imp.Links.Self, "/api/"):]
	var got struct {
		Data struct {
			Status  string
			Results struct {
				Added, Failed int
				Errors        []struct {
					Index           int
					ReferenceNumber *string
					Messages        []string
				}
			}
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for got.Data.Status != "complete" {
		if time.Now().After(deadline) {
			t.Fatalf("import still %q", got.Data.Status)
		}
		time.Sleep(50 * time.Millisecond)
		resp := a.do("GET", path, "")
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
	}
	r := got.Data.Results
	if r.Added != 1 || r.Failed != 1 || len(r.Errors) != 1 || r.Errors[0].Index != 0 || r.Errors[0].ReferenceNumber == nil ||
		*r.Errors[0].ReferenceNumber != "IM1" || len(r.Errors[0].Messages) != 1 ||
		!strings.Contains(r.Errors[0].Messages[0], `referenceNumber: "IM2" is a second value`) {
		t.Errorf("results %+v", r)
	}
}
