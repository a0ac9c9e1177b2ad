package openapicheck

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestAnswer: answers as a client reads them (absolute URLs) and as a
// server writes them (paths) are found in the document and checked; what
// the document does not describe passes.
func TestAnswer(t *testing.T) {
	const job = `{"id": 7, "date": "2026-11-02", "referenceNumber": "A1", "title": "T", "city": null, "state": "OH",
		"postalCode": null, "driverType": "Company Driver", "preference": null, "freightType": "Box", "payAmountMin": null,
		"payAmountMax": null, "payFrequency": null, "employmentType": null, "routeType": null, "description": "d",
		"requirements": null, "twicOnly": false, "licenseClass": null}`
	jsonHeader := http.Header{"Content-Type": {"application/json"}}
	tests := []struct {
		name, method, url string
		status            int
		body              string
		error             string // empty: passes
	}{
		{"a job as the document says", "GET", "http://127.0.0.1:8080/api/v2.0/jobs.json/7", 200, job, ""},
		{"the same, by path", "GET", "/api/v2.0/jobs.json/7", 200, job, ""},
		{"an id as a string, read by a client", "GET", "http://127.0.0.1:8080/api/v2.0/jobs.json/7", 200,
			strings.Replace(job, `"id": 7`, `"id": "7"`, 1), `"/id"`},
		{"an id as a string", "GET", "/api/v2.0/jobs.json/7", 200, strings.Replace(job, `"id": 7`, `"id": "7"`, 1), `"/id"`},
		{"a required member missing", "GET", "/api/v2.0/jobs.json/7", 200, strings.Replace(job, `"title": "T", `, "", 1), "title"},
		{"a value outside its enum", "GET", "/api/v2.0/jobs.json/7", 200, strings.Replace(job, `"Box"`, `"Boxes"`, 1), "freightType"},
		{"a status not declared", "GET", "/api/v2.0/jobs.json/7", 418, `{}`, "418"},
		{"an error as declared", "GET", "/api/v2.0/jobs.json/8", 404, `{"error": {"code": 404, "status": "NOT_FOUND", "message": "no job 8"}}`, ""},
		{"XML is not described", "GET", "/api/v2.0/jobs.xml/7", 200, `<jobs><job/></jobs>`, ""},
		{"a path not described", "GET", "/healthz", 200, `ok`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, tt.url, nil)
			err := Answer(r, tt.status, jsonHeader, []byte(tt.body))
			switch {
			case tt.error == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.error != "" && (err == nil || !strings.Contains(err.Error(), tt.error)):
				t.Errorf("error %v, want one naming %s", err, tt.error)
			}
		})
	}
}
