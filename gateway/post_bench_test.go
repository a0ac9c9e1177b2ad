package gateway_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkPostJobsREST posts 1,000 unchanged jobs through the REST
// gateway in-process: what the HTTP path adds to the service's work.
func BenchmarkPostJobsREST(b *testing.B) {
	a := newAPI(b)
	var jobs []map[string]any
	for i := range 1000 {
		jobs = append(jobs, map[string]any{"referenceNumber": fmt.Sprintf("B%d", i), "title": "Regional Driver",
			"state": "TX", "driverType": "Company Driver", "freightType": "Dry Van", "city": "Dallas",
			"postalCode": "75201", "payAmountMin": "0.55", "payAmountMax": "0.68", "payFrequency": "Per Mile",
			"employmentType": []string{"Full-Time"}, "routeType": []string{"Regional"},
			"description":  "<p>Home <b>every weekend</b>. Late-model trucks, paid orientation.</p><ul><li>No touch</li></ul>",
			"requirements": "<ul><li>Class A CDL</li></ul>", "twicOnly": false, "licenseClass": "A"})
	}
	body, _ := json.Marshal(jobs)
	post := func() {
		req := httptest.NewRequest(http.MethodPost, "/api/v2.0/jobs.json", bytes.NewReader(body))
		req.SetBasicAuth(a.key, "")
		rec := httptest.NewRecorder()
		a.handler.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatal(rec.Code, rec.Body.String())
		}
	}
	post()
	for b.Loop() {
		post()
	}
}
