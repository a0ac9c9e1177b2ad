package gateway_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzDriversQuery sends any query string to the drivers list, through the
// gateway's parameter mapping, the service's parsing and the store's SQL,
// against a real database. Every answer is a 200 list or a 400 that names a
// parameter, in JSON, and never a server error.
func FuzzDriversQuery(f *testing.F) {
	for _, seed := range []string{
		"", "max=1000&page=2&sort=-sent", "certifications=HAZMAT (H)&driver_type=owner operator&state=tx",
		"email=A@B.COM&phone=+1 (212) 555-0101", "start_date=2026-01-01&end_date=2026-01-31T23:59:59+0100",
		"lives_within_radius=500&lives_within_zip=10001", "lives_within_radius=0&lives_within_zip=99999",
		"min_experience=0.5&has_job_apps=true", "job_title=' OR 1=1 --", "first_name=%00&last_name=%FF",
		"max=-1", "page=99999999999999999999", "sort=name;DROP TABLE drivers", "unknown=1&max=1",
	} {
		f.Add(seed)
	}
	a := newAPI(f)
	f.Fuzz(func(t *testing.T, query string) {
		req := httptest.NewRequest(http.MethodGet, "/api/v2.0/drivers.json", nil)
		req.URL.RawQuery = query
		req.SetBasicAuth(a.key, "")
		rec := httptest.NewRecorder()
		a.handler.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK:
			var list []json.RawMessage
			if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil {
				t.Fatalf("?%s: 200 with a body that is not a JSON list: %.200s", query, rec.Body)
			}
		case http.StatusBadRequest:
			var e struct {
				Error struct {
					Status, Message string
				}
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Status != "INVALID_ARGUMENT" || !strings.Contains(e.Error.Message, ":") {
				t.Fatalf("?%s: 400 without an error naming the parameter: %.300s", query, rec.Body)
			}
		default:
			t.Fatalf("?%s: status %d: %.300s", query, rec.Code, rec.Body)
		}
	})
}
