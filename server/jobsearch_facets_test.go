package server

import (
	"fmt"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
)

// facetValue is one counted value of a facet as SearchJobs answers it.
type facetValue struct {
	value, label string
	n            int64
}

func (v facetValue) String() string { return fmt.Sprintf("%s (%s) %d", v.label, v.value, v.n) }

// TestSearchJobsFacetsOwnFilter: for each of the seven facets, asked for
// with its own filter and another one, the counts are those of the match
// with its own filter left out and the other applied: exact, per value,
// values no job has left out, highest first and equal counts by label.
// The expected counts are worked out by hand from the eight jobs below.
func TestSearchJobsFacetsOwnFilter(t *testing.T) {
	const (
		company = jobboardv2.DriverType_DRIVER_TYPE_COMPANY_DRIVER
		owner   = jobboardv2.DriverType_DRIVER_TYPE_OWNER_OPERATOR
		student = jobboardv2.DriverType_DRIVER_TYPE_STUDENT

		dryVan  = jobboardv2.FreightType_FREIGHT_TYPE_DRY_VAN
		tanker  = jobboardv2.FreightType_FREIGHT_TYPE_TANKER
		flatbed = jobboardv2.FreightType_FREIGHT_TYPE_FLATBED
		reefer  = jobboardv2.FreightType_FREIGHT_TYPE_REFRIGERATED

		local     = jobboardv2.RouteType_ROUTE_TYPE_LOCAL
		regional  = jobboardv2.RouteType_ROUTE_TYPE_REGIONAL
		otr       = jobboardv2.RouteType_ROUTE_TYPE_OTR
		dedicated = jobboardv2.RouteType_ROUTE_TYPE_DEDICATED

		fullTime  = jobboardv2.EmploymentType_EMPLOYMENT_TYPE_FULL_TIME
		partTime  = jobboardv2.EmploymentType_EMPLOYMENT_TYPE_PART_TIME
		temporary = jobboardv2.EmploymentType_EMPLOYMENT_TYPE_TEMPORARY
		permanent = jobboardv2.EmploymentType_EMPLOYMENT_TYPE_PERMANENT

		weekly  = jobboardv2.PayFrequency_PAY_FREQUENCY_WEEKLY
		perMile = jobboardv2.PayFrequency_PAY_FREQUENCY_PER_MILE
		hourly  = jobboardv2.PayFrequency_PAY_FREQUENCY_HOURLY

		classA    = jobboardv2.LicenseClass_LICENSE_CLASS_A
		classB    = jobboardv2.LicenseClass_LICENSE_CLASS_B
		classC    = jobboardv2.LicenseClass_LICENSE_CLASS_C
		classNone = jobboardv2.LicenseClass_LICENSE_CLASS_NONE
	)
	type row struct {
		ref      string
		driver   jobboardv2.DriverType
		freight  jobboardv2.FreightType
		routes   []jobboardv2.RouteType
		jobTypes []jobboardv2.EmploymentType
		pay      jobboardv2.PayFrequency // UNSPECIFIED: no pay given
		min, max int64                   // cents; 0 is not given
		state    string
		class    jobboardv2.LicenseClass // UNSPECIFIED: the job asks for no class
	}
	// J5 has no route type, no pay and no license class; J8 no employment
	// type: they count for no value of those facets. J3 and J7 ask class
	// None, which is a value of its own.
	rows := []row{
		{"J1", company, dryVan, []jobboardv2.RouteType{local, regional}, []jobboardv2.EmploymentType{fullTime},
			weekly, 150000, 180000, "TX", classA},
		{"J2", company, tanker, []jobboardv2.RouteType{otr}, []jobboardv2.EmploymentType{fullTime, permanent},
			weekly, 120000, 0, "TX", classB},
		{"J3", owner, flatbed, []jobboardv2.RouteType{regional}, []jobboardv2.EmploymentType{partTime},
			perMile, 70, 0, "TX", classNone},
		{"J4", company, dryVan, []jobboardv2.RouteType{regional, otr}, []jobboardv2.EmploymentType{fullTime},
			hourly, 2500, 3000, "OK", classC},
		{"J5", student, dryVan, nil, []jobboardv2.EmploymentType{temporary, partTime},
			0, 0, 0, "TX", 0},
		{"J6", company, reefer, []jobboardv2.RouteType{local}, []jobboardv2.EmploymentType{fullTime},
			weekly, 100000, 130000, "LA", classA},
		// Account B's.
		{"J7", owner, tanker, []jobboardv2.RouteType{dedicated, regional}, []jobboardv2.EmploymentType{permanent},
			weekly, 160000, 0, "TX", classNone},
		{"J8", company, dryVan, []jobboardv2.RouteType{local}, nil,
			perMile, 60, 75, "OK", classB},
	}
	input := func(r row) *jobboardv2.JobInput {
		return searchJob(r.ref, "Driver", "<p>Drive.</p>", func(j *jobboardv2.JobInput) {
			j.DriverType, j.FreightType, j.RouteType, j.EmploymentType = r.driver, r.freight, r.routes, r.jobTypes
			j.PayFrequency, j.State, j.LicenseClass = r.pay, r.state, r.class
			if r.min > 0 {
				j.PayAmountMinCents = proto.Int64(r.min)
			}
			if r.max > 0 {
				j.PayAmountMaxCents = proto.Int64(r.max)
			}
		})
	}
	f := newSearchFixture(t)
	var a, b []*jobboardv2.JobInput
	for _, r := range rows[:6] {
		a = append(a, input(r))
	}
	for _, r := range rows[6:] {
		b = append(b, input(r))
	}
	// One post each, so the match's order (newest first) is J8 … J1.
	f.post(t, f.a.APIKey, a...)
	f.post(t, f.b.APIKey, b...)

	v := func(value fmt.Stringer, label string, n int64) facetValue {
		return facetValue{value.String(), label, n}
	}
	state := func(code string, n int64) facetValue { return facetValue{code, code, n} }
	for _, tt := range []struct {
		name  string
		req   *jobboardv2.SearchJobsRequest
		match []string // the jobs of every filter, newest first
		want  []facetValue
	}{
		// Texas's jobs by driver type: J1, J2 company; J3, J7 owner; J5 student.
		{"driver type", &jobboardv2.SearchJobsRequest{
			DriverTypes: []jobboardv2.DriverType{student, owner}, States: []string{"TX"},
			Facets: []jobboardv2.JobFacet{jobboardv2.JobFacet_JOB_FACET_DRIVER_TYPE},
		}, []string{"J7", "J5", "J3"}, []facetValue{
			v(company, "Company Driver", 2), v(owner, "Owner Operator", 2), v(student, "Student", 1)}},
		// Company drivers' jobs by freight: J1, J4, J8 dry van; J6
		// refrigerated; J2 tanker (J7, a tanker too, is an owner's).
		{"freight type", &jobboardv2.SearchJobsRequest{
			FreightTypes: []jobboardv2.FreightType{tanker}, DriverTypes: []jobboardv2.DriverType{company},
			Facets: []jobboardv2.JobFacet{jobboardv2.JobFacet_JOB_FACET_FREIGHT_TYPE},
		}, []string{"J2"}, []facetValue{
			v(dryVan, "Dry Van", 3), v(reefer, "Refrigerated", 1), v(tanker, "Tanker", 1)}},
		// Dry vans by route, once per route of each: J1 local and
		// regional, J4 regional and OTR, J8 local, J5 none. Dedicated
		// (J7's, a tanker) is left out: no dry van has it.
		{"route type", &jobboardv2.SearchJobsRequest{
			RouteTypes: []jobboardv2.RouteType{local}, FreightTypes: []jobboardv2.FreightType{dryVan},
			Facets: []jobboardv2.JobFacet{jobboardv2.JobFacet_JOB_FACET_ROUTE_TYPE},
		}, []string{"J8", "J1"}, []facetValue{
			v(local, "Local", 2), v(regional, "Regional", 2), v(otr, "OTR", 1)}},
		// Texas's jobs by employment, once per type of each: J1 full-time,
		// J2 full-time and permanent, J3 part-time, J5 temporary and
		// part-time, J7 permanent. Three values tie at 2: by label.
		{"employment type", &jobboardv2.SearchJobsRequest{
			EmploymentTypes: []jobboardv2.EmploymentType{temporary}, States: []string{"TX"},
			Facets: []jobboardv2.JobFacet{jobboardv2.JobFacet_JOB_FACET_EMPLOYMENT_TYPE},
		}, []string{"J5"}, []facetValue{
			v(fullTime, "Full-Time", 2), v(partTime, "Part-Time", 2), v(permanent, "Permanent", 2),
			v(temporary, "Temporary", 1)}},
		// min_pay_cents is an amount in the unit of the one pay frequency
		// asked for, so docs/api.md makes it part of the pay frequency's
		// own filter, left out of that facet with it: Texas's jobs by pay
		// frequency are J1, J2, J7 weekly and J3 per mile, J2 counted
		// although its $1,200 leaves it out of the match. J6 (weekly, in
		// LA) is not counted: the state filter holds.
		{"pay frequency, with a minimum pay", &jobboardv2.SearchJobsRequest{
			PayFrequencies: []jobboardv2.PayFrequency{weekly}, MinPayCents: proto.Int64(150000), States: []string{"TX"},
			Facets: []jobboardv2.JobFacet{jobboardv2.JobFacet_JOB_FACET_PAY_FREQUENCY},
		}, []string{"J7", "J1"}, []facetValue{v(weekly, "Weekly", 3), v(perMile, "Per Mile", 1)}},
		// Regional jobs by state: J1, J3, J7 in Texas, J4 in Oklahoma (J8,
		// in Oklahoma too, is local).
		{"state", &jobboardv2.SearchJobsRequest{
			States: []string{"ok"}, RouteTypes: []jobboardv2.RouteType{regional},
			Facets: []jobboardv2.JobFacet{jobboardv2.JobFacet_JOB_FACET_STATE},
		}, []string{"J4"}, []facetValue{state("TX", 3), state("OK", 1)}},
		// A class C driver's filter keeps the jobs asking C, None or no
		// class (J3, J5, J7 in Texas); left out of its facet, Texas's jobs
		// by class are J3, J7 None, J1 A, J2 B. J5 asks for no class: it
		// has no value to count, and None is not a name for "not given".
		{"license class", &jobboardv2.SearchJobsRequest{
			LicenseClass: classC, States: []string{"TX"},
			Facets: []jobboardv2.JobFacet{jobboardv2.JobFacet_JOB_FACET_LICENSE_CLASS},
		}, []string{"J7", "J5", "J3"}, []facetValue{v(classNone, "None", 2), v(classA, "A", 1), v(classB, "B", 1)}},
		// A driver without a class drives no company job here (each asks
		// for one), yet the facet counts their classes: its own filter is
		// left out even when it leaves no match.
		{"license class, no match", &jobboardv2.SearchJobsRequest{
			LicenseClass: classNone, DriverTypes: []jobboardv2.DriverType{company},
			Facets: []jobboardv2.JobFacet{jobboardv2.JobFacet_JOB_FACET_LICENSE_CLASS},
		}, []string{}, []facetValue{v(classA, "A", 2), v(classB, "B", 2), v(classC, "C", 1)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := f.find(t, tt.req)
			if got := refs(r); !slices.Equal(got, tt.match) {
				t.Errorf("match %v, want %v", got, tt.match)
			}
			if r.TotalSize != int64(len(tt.match)) || r.TotalSizeIsEstimate {
				t.Errorf("total %d (estimate %v), want %d exactly", r.TotalSize, r.TotalSizeIsEstimate, len(tt.match))
			}
			if len(r.Facets) != 1 || r.Facets[0].Facet != tt.req.Facets[0] {
				t.Fatalf("facets %v, want %v alone", r.Facets, tt.req.Facets[0])
			}
			var got []facetValue
			for _, fv := range r.Facets[0].Values {
				got = append(got, facetValue{fv.Value, fv.Label, fv.Count})
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("%v counts:\n got %v\nwant %v", tt.req.Facets[0], got, tt.want)
			}
		})
	}
}
