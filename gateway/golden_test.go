package gateway_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/truckjobs/jobboard/server/drivers"

	"github.com/truckjobs/jobboard/server/jobs"

	"github.com/truckjobs/jobboard/internal/rules"
	"github.com/truckjobs/jobboard/server/intake"
	"github.com/truckjobs/jobboard/server/store"
)

// The jobs the golden cases start from: every field set, the minimum, and
// text that needs care in XML.
var (
	fullJob = doc{
		{"referenceNumber", "FULL1"}, {"title", "OTR Driver & Team <Lead>"}, {"city", "Dallas"},
		{"state", "tx"}, {"postalCode", "752011234"}, {"driverType", "company driver"},
		{"preference", "Lease Purchase Team Solo"}, {"freightType", "Dry Van"}, {"payAmountMin", 18.5},
		{"payAmountMax", "22"}, {"payFrequency", "Hourly"}, {"employmentType", []string{"Full-Time", "Part-Time"}},
		{"routeType", []string{"OTR"}}, {"description", "<p>Home <b>weekly</b></p>"},
		{"requirements", "<ul><li>CDL-A</li></ul>"}, {"twicOnly", true}, {"licenseClass", "A"},
	}
	minimalJob = doc{
		{"referenceNumber", "MIN1"}, {"title", "Yard Spotter"}, {"state", "GA"}, {"driverType", "Student"},
		{"freightType", "Yard Spotter"}, {"description", "Nights"},
	}
	markupJob = doc{
		{"referenceNumber", "TEXT1"}, {"title", `"Quoted" & 'apostrophes'`}, {"state", "CA"},
		{"driverType", "Owner Operator"}, {"freightType", "Flatbed"},
		{"description", "<p>Pay &gt; average ]]> keep reading</p>"}, {"twicOnly", false},
	}
)

func filler(n int) doc {
	return doc{{"referenceNumber", fmt.Sprintf("F%d", n)}, {"title", "Filler"}, {"state", "OH"},
		{"driverType", "Company Driver"}, {"freightType", "Box"}, {"description", "x"}}
}

// everyProblem is a post whose summary holds every kind of error and ignored value.
func everyProblem() []doc {
	docs := []doc{
		append(append(doc{}, minimalJob...), field{"benefits", "Dental"}, field{"id", 77}, field{"date", "2020-01-01"},
			field{"requirements", `<p onclick="steal()">CDL</p><script>alert(1)</script>`}),
		{{"referenceNumber", "MIN1"}, {"title", "Again"}},
		{{"referenceNumber", nil}, {"title", "  "}, {"state", "OK"}, {"driverType", "Student"}, {"freightType", "Box"}, {"description", "x"}},
		{{"referenceNumber", "BAD1"}, {"title", "Bad values"}, {"state", "ZZ"}, {"postalCode", "1234"},
			{"driverType", "Trucker"}, {"freightType", "Box"}, {"payAmountMin", "20"}, {"payAmountMax", "10"},
			{"employmentType", []string{"Seasonal"}}, {"twicOnly", "maybe"}, {"description", "x"}},
	}
	for i := len(docs); i <= rules.MaxJobsPerPost; i++ {
		docs = append(docs, filler(i))
	}
	return docs
}

func TestGolden(t *testing.T) {
	seed := func(a *api) { a.post(fullJob, minimalJob, markupJob) }
	tests := []struct {
		name   string
		setup  func(a *api)
		method string
		path   string // {fmt} becomes json or xml
		body   func(format string) string
		noAuth bool
	}{
		{name: "list", setup: seed, method: "GET", path: "/api/v2.0/jobs.{fmt}"},
		{name: "list_empty", method: "GET", path: "/api/v2.0/jobs.{fmt}"},
		{name: "retrieve", setup: seed, method: "GET", path: "/api/v2.0/jobs.{fmt}/1"},
		{name: "retrieve_markup", setup: seed, method: "GET", path: "/api/v2.0/jobs.{fmt}/3"},
		{name: "post_added", method: "POST", path: "/api/v2.0/jobs.{fmt}",
			body: func(f string) string { return encodeJobs(f, []doc{fullJob, minimalJob}) }},
		{name: "post_upsert", setup: seed, method: "POST", path: "/api/v2.0/jobs.{fmt}",
			body: func(f string) string {
				changed := append(doc{}, minimalJob...)
				changed[1] = field{"title", "Yard Spotter - Nights"}
				return encodeJobs(f, []doc{fullJob, changed, filler(1)})
			}},
		{name: "post_every_problem", method: "POST", path: "/api/v2.0/jobs.{fmt}",
			body: func(f string) string { return encodeJobs(f, everyProblem()) }},
		{name: "post_active_limit", setup: fillToLimit, method: "POST", path: "/api/v2.0/jobs.{fmt}",
			body: func(f string) string {
				updated := filler(0)
				updated[1] = field{"title", "Filler, updated"}
				return encodeJobs(f, []doc{updated, minimalJob})
			}},
		{name: "delete_one", setup: seed, method: "DELETE", path: "/api/v2.0/jobs.{fmt}/2"},
		{name: "delete_one_missing", setup: seed, method: "DELETE", path: "/api/v2.0/jobs.{fmt}/999"},
		{name: "delete_one_not_an_id", setup: seed, method: "DELETE", path: "/api/v2.0/jobs.{fmt}/abc"},
		{name: "error_query_not_utf8", method: "GET", path: "/api/v2.0/drivers.{fmt}?last_name=%FF"},
		{name: "error_path_nul", method: "DELETE", path: "/api/v2.0/jobs.{fmt}/reference/A%00"},
		{name: "delete_many", setup: seed, method: "DELETE", path: "/api/v2.0/jobs.{fmt}",
			body: func(f string) string { return encodeList(f, 1, 999, "abc", 1, 3) }},
		{name: "delete_reference", setup: seed, method: "DELETE", path: "/api/v2.0/jobs.{fmt}/reference/MIN1"},
		{name: "delete_reference_missing", setup: seed, method: "DELETE", path: "/api/v2.0/jobs.{fmt}/reference/min1"},
		{name: "delete_many_reference", setup: seed, method: "DELETE", path: "/api/v2.0/jobs.{fmt}/reference",
			body: func(f string) string { return encodeList(f, "FULL1", "NOPE", "FULL1", "TEXT1") }},
		{name: "error_unauthenticated", noAuth: true, method: "GET", path: "/api/v2.0/jobs.{fmt}"},
		{name: "error_unknown_path", method: "GET", path: "/api/v2.0/trucks.{fmt}"},
		{name: "error_not_found", method: "GET", path: "/api/v2.0/jobs.{fmt}/999"},
		{name: "error_bad_id", method: "GET", path: "/api/v2.0/jobs.{fmt}/abc"},
		{name: "error_method", method: "PUT", path: "/api/v2.0/jobs.{fmt}"},
		{name: "error_malformed", method: "POST", path: "/api/v2.0/jobs.{fmt}",
			body: func(f string) string { return map[string]string{"json": `[{"title": `, "xml": `<jobs><job>`}[f] }},
		{name: "error_wrong_shape", method: "POST", path: "/api/v2.0/jobs.{fmt}",
			body: func(f string) string {
				return map[string]string{"json": `{"referenceNumber": "A1"}`, "xml": `<job/>`}[f]
			}},
		{name: "error_not_utf8", method: "POST", path: "/api/v2.0/jobs.{fmt}",
			body: func(string) string { return "[\xff]" }},
		{name: "error_too_large", method: "POST", path: "/api/v2.0/jobs.{fmt}",
			body: func(string) string { return strings.Repeat(" ", 16<<20+1) }},
	}
	for _, tt := range tests {
		for _, format := range []string{"json", "xml"} {
			t.Run(tt.name+"."+format, func(t *testing.T) {
				a := newAPI(t)
				if tt.setup != nil {
					tt.setup(a)
				}
				body := ""
				if tt.body != nil {
					body = tt.body(format)
				}
				key := a.key
				if tt.noAuth {
					key = ""
				}
				resp := a.doAs(key, tt.method, strings.ReplaceAll(tt.path, "{fmt}", format), body)
				checkGolden(t, tt.name+"."+format, resp)
			})
		}
	}
}

// fillToLimit gives the account the maximum of active jobs, F0 to F9999.
func fillToLimit(a *api) {
	var fillers []store.JobFields
	for i := 0; i < jobs.MaxActiveJobs; i++ {
		fillers = append(fillers, store.JobFields{ReferenceNumber: fmt.Sprintf("F%d", i), Title: "Filler", State: "OH",
			DriverType: "Company Driver", FreightType: "Box", Description: "x"})
	}
	opts := store.UpsertOptions{MaxActive: jobs.MaxActiveJobs, Today: fixedNow}
	if _, err := a.store.UpsertJobs(context.Background(), a.acct, fillers, opts); err != nil {
		a.t.Fatal(err)
	}
}

// seedDrivers gives the account two applicants, one with every detail field
// and an application to a job, one with the minimum.
func seedDrivers(a *api) {
	a.post(fullJob)
	s := func(v string) *string { return &v }
	year := func(v int32) *int32 { return &v }
	full := &intake.Application{
		FirstName: "Rosa", LastName: "Álvarez", Address: "12 Depot Rd", Address2: s("Apt 4 & 5"), City: "Laredo",
		State: "TX", Zip: "78040", Email: "rosa@example.com", Phone: "+1 956-555-0142", DriverType: "Owner Operator",
		Experience: "12", Sent: "2026-11-02T14:05:09Z", Endorsements: []string{"H", "T"},
		FreightExperience: s("Dry Van, Reefer"), FreightPreferences: s("Flatbed"), LicenseState: s("tx"),
		PreferredAssignments: s("Regional"), PreferredRegions: s("Southwest"), HasTeam: s(""), LicenseClass: s("A"),
		DateOfBirth: s("1984-07-09"), TwicCard: s("Yes"), Accidents: s("0"), MovingViolations: s("1"),
		LastLicenseSuspension: year(2015), LastDUI: nil, InterestedLeasePurchase: s("No"), Teams: s("Solo"),
		TrucksOwned: s(""), IsPremium: true,
		EmploymentHistory: []intake.Employment{
			{Company: "Border Freight", State: "TX", Phone: "9565550100", StartDate: "2019-03-01"},
			{Company: "Acme <Haul>", State: "NM", Phone: "5055550100", StartDate: "2014-01-15", EndDate: s("2019-02-28")},
		},
		JobApplications: []intake.JobApplication{{Reference: "FULL1", IsDirectApp: true, CreatedAt: "2026-11-02T15:00:00Z"}},
	}
	minimal := &intake.Application{FirstName: "Sam", LastName: "Ng", Address: "9 Elm St", City: "Newark",
		State: "NJ", Zip: "07102", Email: "sam@example.com", Phone: "9735550101", DriverType: "Student",
		Experience: "0.5", Sent: "2026-10-30"}
	if _, err := drivers.ImportApplications(context.Background(), a.store, a.outbox, a.acct, []*intake.Application{full, minimal}); err != nil {
		a.t.Fatal(err)
	}
}

func TestGoldenDrivers(t *testing.T) {
	tests := []struct{ name, path string }{
		{"drivers_list", "/api/v2.0/drivers.{fmt}"},
		{"drivers_list_page", "/api/v2.0/drivers.{fmt}?max=1&sort=-sent"},
		{"drivers_list_empty", "/api/v2.0/drivers.{fmt}?state=WY"},
		{"drivers_list_unknown_param", "/api/v2.0/drivers.{fmt}?utm_source=mail&max=1"},
		{"driver_detail", "/api/v2.0/drivers.{fmt}/1"},
		{"driver_detail_minimal", "/api/v2.0/drivers.{fmt}/2"},
		{"drivers_error_not_found", "/api/v2.0/drivers.{fmt}/3"},
		{"drivers_error_param", "/api/v2.0/drivers.{fmt}?lives_within_radius=10&lives_within_zip=00000"},
		// Beyond v2.0 (docs/api.md, Lead status): the status filter and
		// member, driver 1 being rejected.
		{"drivers_list_status", "/api/v2.0/drivers.{fmt}?status=rejected,hired&include=status"},
		{"driver_detail_status", "/api/v2.0/drivers.{fmt}/2?include=Status"},
		{"drivers_error_status", "/api/v2.0/drivers.{fmt}?status=hired,gone"},
		{"drivers_error_include", "/api/v2.0/drivers.{fmt}/1?include=status,notes"},
	}
	for _, tt := range tests {
		for _, format := range []string{"json", "xml"} {
			t.Run(tt.name+"."+format, func(t *testing.T) {
				a := newAPI(t)
				seedDrivers(a)
				if resp := a.do("PUT", "/api/v2.0/drivers/1/status", `{"status": "rejected", "reason": "psp"}`); resp.StatusCode != http.StatusOK {
					t.Fatalf("PUT status: HTTP %d", resp.StatusCode)
				}
				resp := a.do("GET", strings.ReplaceAll(tt.path, "{fmt}", format), "")
				checkGolden(t, tt.name+"."+format, resp)
			})
		}
	}
}
