package server

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
)

// searchFixture is a gRPC server with a few jobs of accounts A and B, and
// a search client holding the internal token.
type searchFixture struct {
	*grpcFixture
	search   jobboardv2.JobSearchServiceClient
	jobs     jobboardv2.JobServiceClient
	internal context.Context
	// ids are the posted jobs' ids by reference number.
	ids map[string]int64
}

const searchToken = "internal-search-secret"

func newSearchFixture(t *testing.T) *searchFixture {
	t.Helper()
	f := &searchFixture{grpcFixture: newGRPCFixture(t, Config{InternalToken: searchToken}), ids: map[string]int64{}}
	conn := f.conn(t, "127.0.0.1")
	f.search = jobboardv2.NewJobSearchServiceClient(conn)
	f.jobs = jobboardv2.NewJobServiceClient(conn)
	f.internal = metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+searchToken)
	return f
}

// searchJob is a job of Houston's 77002 unless changed.
func searchJob(ref, title, description string, change ...func(*jobboardv2.JobInput)) *jobboardv2.JobInput {
	j := &jobboardv2.JobInput{ReferenceNumber: ref, Title: title, City: proto.String("Houston"), State: "TX",
		PostalCode: proto.String("77002"), DriverType: jobboardv2.DriverType_DRIVER_TYPE_COMPANY_DRIVER,
		FreightType: jobboardv2.FreightType_FREIGHT_TYPE_DRY_VAN, Description: description}
	for _, c := range change {
		c(j)
	}
	return j
}

// post posts jobs for the account with key, one post each so that each is
// newer than the one before, and notes their ids.
func (f *searchFixture) post(t *testing.T, key string, jobs ...*jobboardv2.JobInput) {
	t.Helper()
	ctx := withKey(key)
	for _, j := range jobs {
		r, err := f.jobs.PostJobs(ctx, &jobboardv2.PostJobsRequest{Jobs: []*jobboardv2.JobInput{j}})
		if err != nil || r.Errors != 0 {
			t.Fatalf("post %s: %v %v", j.ReferenceNumber, r, err)
		}
	}
	list, err := f.jobs.ListJobs(ctx, &jobboardv2.ListJobsRequest{PageSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range list.Jobs {
		f.ids[j.ReferenceNumber] = j.Id
	}
}

func (f *searchFixture) find(t *testing.T, req *jobboardv2.SearchJobsRequest) *jobboardv2.SearchJobsResponse {
	t.Helper()
	r, err := f.search.SearchJobs(f.internal, req)
	if err != nil {
		t.Fatalf("SearchJobs(%v): %v", req, err)
	}
	return r
}

// refs are the reference numbers of the results, in order.
func refs(r *jobboardv2.SearchJobsResponse) []string {
	out := make([]string, len(r.Results))
	for i, res := range r.Results {
		out[i] = res.Job.ReferenceNumber
	}
	return out
}

// seed posts the jobs most tests search: A's four in Houston, Galveston,
// Dallas and New York, B's two, newest last.
func (f *searchFixture) seed(t *testing.T) {
	t.Helper()
	weekly := func(min, max int64) func(*jobboardv2.JobInput) {
		return func(j *jobboardv2.JobInput) {
			j.PayFrequency = jobboardv2.PayFrequency_PAY_FREQUENCY_WEEKLY
			j.PayAmountMinCents = proto.Int64(min)
			if max > 0 {
				j.PayAmountMaxCents = proto.Int64(max)
			}
		}
	}
	f.post(t, f.a.APIKey,
		searchJob("H1", "Hazmat Tanker Driver", "<p>Haul <b>hazmat</b> tankers across Texas &amp; Louisiana.</p>", weekly(140000, 170000),
			func(j *jobboardv2.JobInput) {
				j.FreightType = jobboardv2.FreightType_FREIGHT_TYPE_TANKER
				j.RouteType = []jobboardv2.RouteType{jobboardv2.RouteType_ROUTE_TYPE_REGIONAL}
				j.EmploymentType = []jobboardv2.EmploymentType{jobboardv2.EmploymentType_EMPLOYMENT_TYPE_FULL_TIME}
				j.LicenseClass = jobboardv2.LicenseClass_LICENSE_CLASS_A
				j.TwicOnly = true
			}),
		searchJob("G1", "Port Driver", "<p>Container work at the port, with tanker endorsement a plus.</p>", weekly(160000, 0),
			func(j *jobboardv2.JobInput) {
				j.City, j.PostalCode = proto.String("Galveston"), proto.String("77550")
				j.RouteType = []jobboardv2.RouteType{jobboardv2.RouteType_ROUTE_TYPE_LOCAL, jobboardv2.RouteType_ROUTE_TYPE_REGIONAL}
				j.LicenseClass = jobboardv2.LicenseClass_LICENSE_CLASS_B
			}),
		searchJob("D1", "Flatbed Owner Operator", "<p>Flatbed freight out of Dallas.</p>", func(j *jobboardv2.JobInput) {
			j.City, j.PostalCode = proto.String("Dallas"), proto.String("75201")
			j.DriverType = jobboardv2.DriverType_DRIVER_TYPE_OWNER_OPERATOR
			j.FreightType = jobboardv2.FreightType_FREIGHT_TYPE_FLATBED
			j.PayFrequency = jobboardv2.PayFrequency_PAY_FREQUENCY_PER_MILE
			j.PayAmountMinCents = proto.Int64(65)
		}),
		searchJob("N1", "City Box Truck Driver", "<p>Box truck deliveries in Manhattan.</p>", func(j *jobboardv2.JobInput) {
			j.City, j.State, j.PostalCode = proto.String("New York"), "NY", proto.String("10001")
			j.FreightType = jobboardv2.FreightType_FREIGHT_TYPE_BOX
			j.LicenseClass = jobboardv2.LicenseClass_LICENSE_CLASS_NONE
		}),
	)
	f.post(t, f.b.APIKey,
		searchJob("B1", "Tanker Driver, Chemicals", "<p>Chemical tanker runs; hazmat endorsement required.</p>", weekly(150000, 0),
			func(j *jobboardv2.JobInput) {
				j.FreightType = jobboardv2.FreightType_FREIGHT_TYPE_TANKER
				j.PostalCode = proto.String("77005")
				j.LicenseClass = jobboardv2.LicenseClass_LICENSE_CLASS_A
			}),
		searchJob("B2", "Student Driver", "<p>Training program for new drivers.</p>", func(j *jobboardv2.JobInput) {
			j.DriverType = jobboardv2.DriverType_DRIVER_TYPE_STUDENT
			j.PostalCode = nil
			j.City = nil
		}),
	)
}

// TestSearchJobsFilters: each filter alone, over a real database, in the
// default order (newest first without a query, best first with one).
func TestSearchJobsFilters(t *testing.T) {
	f := newSearchFixture(t)
	f.seed(t)
	weekly := []jobboardv2.PayFrequency{jobboardv2.PayFrequency_PAY_FREQUENCY_WEEKLY}
	for _, tt := range []struct {
		name string
		req  *jobboardv2.SearchJobsRequest
		want []string
	}{
		{"nothing: every active job, newest first", &jobboardv2.SearchJobsRequest{}, []string{"B2", "B1", "N1", "D1", "G1", "H1"}},
		{"words, stemmed, best first", &jobboardv2.SearchJobsRequest{Query: "hazmat tankers"}, []string{"H1", "B1"}},
		{"words in the city", &jobboardv2.SearchJobsRequest{Query: "galveston"}, []string{"G1"}},
		{"a phrase", &jobboardv2.SearchJobsRequest{Query: `"box truck"`}, []string{"N1"}},
		{"a word left out", &jobboardv2.SearchJobsRequest{Query: "tanker -hazmat"}, []string{"G1"}},
		{"either word", &jobboardv2.SearchJobsRequest{Query: "flatbed OR manhattan", OrderBy: jobboardv2.JobSearchOrder_JOB_SEARCH_ORDER_POSTED},
			[]string{"N1", "D1"}},
		{"a tag's name is not a word of the text", &jobboardv2.SearchJobsRequest{Query: "p"}, []string{}},
		{"stop words alone match every job", &jobboardv2.SearchJobsRequest{Query: "the"}, []string{"B2", "B1", "N1", "D1", "G1", "H1"}},
		{"50 miles of 77002", &jobboardv2.SearchJobsRequest{PostalCode: "77002"}, []string{"B1", "G1", "H1"}},
		{"10 miles of 77002", &jobboardv2.SearchJobsRequest{PostalCode: "77002", RadiusMiles: 10}, []string{"B1", "H1"}},
		{"500 miles of 77002, nearest first", &jobboardv2.SearchJobsRequest{PostalCode: "77002", RadiusMiles: 500,
			OrderBy: jobboardv2.JobSearchOrder_JOB_SEARCH_ORDER_DISTANCE}, []string{"H1", "B1", "G1", "D1"}},
		{"driver types", &jobboardv2.SearchJobsRequest{DriverTypes: []jobboardv2.DriverType{
			jobboardv2.DriverType_DRIVER_TYPE_STUDENT, jobboardv2.DriverType_DRIVER_TYPE_OWNER_OPERATOR}}, []string{"B2", "D1"}},
		{"freight types", &jobboardv2.SearchJobsRequest{FreightTypes: []jobboardv2.FreightType{jobboardv2.FreightType_FREIGHT_TYPE_TANKER}},
			[]string{"B1", "H1"}},
		{"route types", &jobboardv2.SearchJobsRequest{RouteTypes: []jobboardv2.RouteType{jobboardv2.RouteType_ROUTE_TYPE_LOCAL}},
			[]string{"G1"}},
		{"employment types", &jobboardv2.SearchJobsRequest{EmploymentTypes: []jobboardv2.EmploymentType{
			jobboardv2.EmploymentType_EMPLOYMENT_TYPE_FULL_TIME}}, []string{"H1"}},
		{"pay frequencies", &jobboardv2.SearchJobsRequest{PayFrequencies: []jobboardv2.PayFrequency{
			jobboardv2.PayFrequency_PAY_FREQUENCY_PER_MILE}}, []string{"D1"}},
		{"states in any case", &jobboardv2.SearchJobsRequest{States: []string{"ny", "CA"}}, []string{"N1"}},
		{"a class A driver drives every job", &jobboardv2.SearchJobsRequest{LicenseClass: jobboardv2.LicenseClass_LICENSE_CLASS_A},
			[]string{"B2", "B1", "N1", "D1", "G1", "H1"}},
		{"a class B driver", &jobboardv2.SearchJobsRequest{LicenseClass: jobboardv2.LicenseClass_LICENSE_CLASS_B},
			[]string{"B2", "N1", "D1", "G1"}},
		{"a class C driver", &jobboardv2.SearchJobsRequest{LicenseClass: jobboardv2.LicenseClass_LICENSE_CLASS_C},
			[]string{"B2", "N1", "D1"}},
		{"no TWIC card", &jobboardv2.SearchJobsRequest{ExcludeTwicOnly: true}, []string{"B2", "B1", "N1", "D1", "G1"}},
		{"weekly pay of at least $1,550 (the maximum, or the minimum)", &jobboardv2.SearchJobsRequest{
			PayFrequencies: weekly, MinPayCents: proto.Int64(155000)}, []string{"G1", "H1"}},
		{"highest pay first", &jobboardv2.SearchJobsRequest{PayFrequencies: weekly,
			OrderBy: jobboardv2.JobSearchOrder_JOB_SEARCH_ORDER_PAY}, []string{"H1", "G1", "B1"}},
		{"accounts", &jobboardv2.SearchJobsRequest{AccountIds: []int64{f.b.AccountID}}, []string{"B2", "B1"}},
		{"posted within a day", &jobboardv2.SearchJobsRequest{PostedWithinDays: 1}, []string{"B2", "B1", "N1", "D1", "G1", "H1"}},
		{"everything at once", &jobboardv2.SearchJobsRequest{Query: "tanker", PostalCode: "77002", RadiusMiles: 100,
			FreightTypes: []jobboardv2.FreightType{jobboardv2.FreightType_FREIGHT_TYPE_TANKER}, States: []string{"TX"},
			LicenseClass: jobboardv2.LicenseClass_LICENSE_CLASS_A, PayFrequencies: weekly, MinPayCents: proto.Int64(150000),
			AccountIds: []int64{f.a.AccountID, f.b.AccountID}, PostedWithinDays: 7,
			OrderBy: jobboardv2.JobSearchOrder_JOB_SEARCH_ORDER_POSTED}, []string{"B1", "H1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := f.find(t, tt.req)
			if got := refs(r); !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			if r.TotalSize != int64(len(tt.want)) || r.TotalSizeIsEstimate || r.NextPageToken != "" {
				t.Errorf("total %d (estimate %v), next %q; want %d exact and no next page",
					r.TotalSize, r.TotalSizeIsEstimate, r.NextPageToken, len(tt.want))
			}
		})
	}
}

// TestSearchJobsResults: what each result says besides its job.
func TestSearchJobsResults(t *testing.T) {
	f := newSearchFixture(t)
	f.seed(t)
	r := f.find(t, &jobboardv2.SearchJobsRequest{Query: "hazmat", PostalCode: "77002", RadiusMiles: 20})
	if len(r.Results) != 2 {
		t.Fatalf("results: %v", refs(r))
	}
	h1, b1 := r.Results[0], r.Results[1]
	job, err := f.jobs.GetJob(withKey(f.a.APIKey), &jobboardv2.GetJobRequest{Id: f.ids["H1"]})
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(h1.Job, job.Job) {
		t.Errorf("the job is not as GetJob answers it:\n%v\n%v", h1.Job, job.Job)
	}
	if h1.AccountId != f.a.AccountID || h1.AccountName != "A" || b1.AccountId != f.b.AccountID || b1.AccountName != "B" {
		t.Errorf("accounts: %d %q, %d %q", h1.AccountId, h1.AccountName, b1.AccountId, b1.AccountName)
	}
	// 77002 to itself, and to 77005's centroid: 4.37 miles.
	if h1.GetDistanceMiles() != 0 || b1.GetDistanceMiles() != 4.4 {
		t.Errorf("distances: %v, %v", h1.DistanceMiles, b1.DistanceMiles)
	}
	for _, res := range r.Results {
		if len(res.Highlights) == 0 || len(res.Highlights) > 3 {
			t.Fatalf("%s: highlights %q", res.Job.ReferenceNumber, res.Highlights)
		}
		all := strings.Join(res.Highlights, " ")
		if !strings.Contains(all, "<b>Hazmat</b>") && !strings.Contains(all, "<b>hazmat</b>") {
			t.Errorf("%s: the matched word is not marked: %q", res.Job.ReferenceNumber, res.Highlights)
		}
		if strings.Contains(all, "<p>") || strings.Contains(all, "</p>") {
			t.Errorf("%s: the description's HTML is left in: %q", res.Job.ReferenceNumber, res.Highlights)
		}
	}
	// Without a query there is nothing to highlight; without a postal
	// code, no distance.
	r = f.find(t, &jobboardv2.SearchJobsRequest{AccountIds: []int64{f.b.AccountID}})
	for _, res := range r.Results {
		if len(res.Highlights) != 0 || res.DistanceMiles != nil {
			t.Errorf("%s: highlights %q, distance %v", res.Job.ReferenceNumber, res.Highlights, res.DistanceMiles)
		}
	}
}

// TestSearchJobsFacets: each facet counts the whole match with every
// filter but its own, highest count first.
func TestSearchJobsFacets(t *testing.T) {
	f := newSearchFixture(t)
	f.seed(t)
	r := f.find(t, &jobboardv2.SearchJobsRequest{
		States:       []string{"TX"},
		FreightTypes: []jobboardv2.FreightType{jobboardv2.FreightType_FREIGHT_TYPE_TANKER},
		PageSize:     1,
		Facets: []jobboardv2.JobFacet{jobboardv2.JobFacet_JOB_FACET_FREIGHT_TYPE, jobboardv2.JobFacet_JOB_FACET_STATE,
			jobboardv2.JobFacet_JOB_FACET_ROUTE_TYPE, jobboardv2.JobFacet_JOB_FACET_LICENSE_CLASS, jobboardv2.JobFacet_JOB_FACET_FREIGHT_TYPE},
	})
	if r.TotalSize != 2 || len(r.Results) != 1 {
		t.Fatalf("total %d, %d results", r.TotalSize, len(r.Results))
	}
	type count struct {
		value, label string
		n            int64
	}
	got := map[jobboardv2.JobFacet][]count{}
	var order []jobboardv2.JobFacet
	for _, fc := range r.Facets {
		order = append(order, fc.Facet)
		for _, v := range fc.Values {
			got[fc.Facet] = append(got[fc.Facet], count{v.Value, v.Label, v.Count})
		}
	}
	if want := []jobboardv2.JobFacet{jobboardv2.JobFacet_JOB_FACET_FREIGHT_TYPE, jobboardv2.JobFacet_JOB_FACET_STATE,
		jobboardv2.JobFacet_JOB_FACET_ROUTE_TYPE, jobboardv2.JobFacet_JOB_FACET_LICENSE_CLASS}; !slices.Equal(order, want) {
		t.Errorf("facets %v, want %v (each once, in the order asked)", order, want)
	}
	for facet, want := range map[jobboardv2.JobFacet][]count{
		// Texas's jobs of every freight type: the freight filter left out.
		// Equal counts go by value.
		jobboardv2.JobFacet_JOB_FACET_FREIGHT_TYPE: {{"FREIGHT_TYPE_DRY_VAN", "Dry Van", 2}, {"FREIGHT_TYPE_TANKER", "Tanker", 2},
			{"FREIGHT_TYPE_FLATBED", "Flatbed", 1}},
		// Tankers of every state.
		jobboardv2.JobFacet_JOB_FACET_STATE: {{"TX", "TX", 2}},
		// The matching jobs' route types: H1's one.
		jobboardv2.JobFacet_JOB_FACET_ROUTE_TYPE:    {{"ROUTE_TYPE_REGIONAL", "Regional", 1}},
		jobboardv2.JobFacet_JOB_FACET_LICENSE_CLASS: {{"LICENSE_CLASS_A", "A", 2}},
	} {
		if !slices.Equal(got[facet], want) {
			t.Errorf("%v: %v, want %v", facet, got[facet], want)
		}
	}
}

// TestSearchJobsFacetsOfEveryJob: a facet whose match is every active job
// (no filter but its own, and account_ids) is read from the kept counts:
// exact, not estimated, and a deleted job is gone from it at once.
func TestSearchJobsFacetsOfEveryJob(t *testing.T) {
	f := newSearchFixture(t)
	f.seed(t)
	if _, err := f.jobs.DeleteJob(withKey(f.a.APIKey), &jobboardv2.DeleteJobRequest{Id: f.ids["D1"]}); err != nil {
		t.Fatal(err)
	}
	facets := func(r *jobboardv2.SearchJobsResponse) map[jobboardv2.JobFacet]string {
		got := map[jobboardv2.JobFacet]string{}
		for _, fc := range r.Facets {
			var values []string
			for _, v := range fc.Values {
				values = append(values, fmt.Sprintf("%s %d", v.Label, v.Count))
			}
			got[fc.Facet] = strings.Join(values, ", ")
		}
		return got
	}
	for _, tt := range []struct {
		name  string
		req   *jobboardv2.SearchJobsRequest
		total int64
		want  map[jobboardv2.JobFacet]string
	}{
		{"every job", &jobboardv2.SearchJobsRequest{Facets: []jobboardv2.JobFacet{
			jobboardv2.JobFacet_JOB_FACET_STATE, jobboardv2.JobFacet_JOB_FACET_DRIVER_TYPE, jobboardv2.JobFacet_JOB_FACET_ROUTE_TYPE}}, 5,
			map[jobboardv2.JobFacet]string{
				jobboardv2.JobFacet_JOB_FACET_STATE:       "TX 4, NY 1",
				jobboardv2.JobFacet_JOB_FACET_DRIVER_TYPE: "Company Driver 4, Student 1",
				jobboardv2.JobFacet_JOB_FACET_ROUTE_TYPE:  "Regional 2, Local 1",
			}},
		// The state facet leaves its own filter out: every job; the
		// freight facet counts Texas's.
		{"a state", &jobboardv2.SearchJobsRequest{States: []string{"NY"}, Facets: []jobboardv2.JobFacet{
			jobboardv2.JobFacet_JOB_FACET_STATE, jobboardv2.JobFacet_JOB_FACET_FREIGHT_TYPE}}, 1,
			map[jobboardv2.JobFacet]string{
				jobboardv2.JobFacet_JOB_FACET_STATE:        "TX 4, NY 1",
				jobboardv2.JobFacet_JOB_FACET_FREIGHT_TYPE: "Box 1",
			}},
		{"one account", &jobboardv2.SearchJobsRequest{AccountIds: []int64{f.a.AccountID}, Facets: []jobboardv2.JobFacet{
			jobboardv2.JobFacet_JOB_FACET_LICENSE_CLASS, jobboardv2.JobFacet_JOB_FACET_PAY_FREQUENCY}}, 3,
			map[jobboardv2.JobFacet]string{
				jobboardv2.JobFacet_JOB_FACET_LICENSE_CLASS: "A 1, B 1, None 1",
				jobboardv2.JobFacet_JOB_FACET_PAY_FREQUENCY: "Weekly 2",
			}},
		{"the other account", &jobboardv2.SearchJobsRequest{AccountIds: []int64{f.b.AccountID}, Facets: []jobboardv2.JobFacet{
			jobboardv2.JobFacet_JOB_FACET_DRIVER_TYPE}}, 2,
			map[jobboardv2.JobFacet]string{jobboardv2.JobFacet_JOB_FACET_DRIVER_TYPE: "Company Driver 1, Student 1"}},
		// Words: a match this small is counted, whatever counts are kept.
		{"words", &jobboardv2.SearchJobsRequest{Query: "tanker", Facets: []jobboardv2.JobFacet{
			jobboardv2.JobFacet_JOB_FACET_STATE}}, 3,
			map[jobboardv2.JobFacet]string{jobboardv2.JobFacet_JOB_FACET_STATE: "TX 3"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := f.find(t, tt.req)
			if r.TotalSize != tt.total || r.TotalSizeIsEstimate {
				t.Errorf("total %d, estimate %v; want %d exactly", r.TotalSize, r.TotalSizeIsEstimate, tt.total)
			}
			if got := facets(r); !maps.Equal(got, tt.want) {
				t.Errorf("facets %v, want %v", got, tt.want)
			}
		})
	}
}

// TestSearchJobsPaging: following next_page_token reads every match once,
// in order, in every order; a token works only for its own search.
func TestSearchJobsPaging(t *testing.T) {
	f := newSearchFixture(t)
	f.seed(t)
	// Ties: three more jobs with the same words, posted at once.
	ctx := withKey(f.a.APIKey)
	if _, err := f.jobs.PostJobs(ctx, &jobboardv2.PostJobsRequest{Jobs: []*jobboardv2.JobInput{
		searchJob("T1", "Tanker Driver", "<p>Tanker.</p>"), searchJob("T2", "Tanker Driver", "<p>Tanker.</p>"),
		searchJob("T3", "Tanker Driver", "<p>Tanker.</p>")}}); err != nil {
		t.Fatal(err)
	}
	weekly := []jobboardv2.PayFrequency{jobboardv2.PayFrequency_PAY_FREQUENCY_WEEKLY}
	for _, req := range []*jobboardv2.SearchJobsRequest{
		{},
		{Query: "tanker"},
		{Query: "driver"},
		{PostalCode: "77002", RadiusMiles: 500, OrderBy: jobboardv2.JobSearchOrder_JOB_SEARCH_ORDER_DISTANCE},
		{PayFrequencies: weekly, OrderBy: jobboardv2.JobSearchOrder_JOB_SEARCH_ORDER_PAY},
	} {
		whole := f.find(t, req)
		var paged []string
		next := proto.Clone(req).(*jobboardv2.SearchJobsRequest)
		next.PageSize = 2
		for pages := 0; ; pages++ {
			if pages > 10 {
				t.Fatalf("%v: more pages than results", req)
			}
			r := f.find(t, next)
			if r.TotalSize != whole.TotalSize {
				t.Errorf("%v: total %d on a page, %d on the whole", req, r.TotalSize, whole.TotalSize)
			}
			paged = append(paged, refs(r)...)
			if r.NextPageToken == "" {
				break
			}
			next.PageToken = r.NextPageToken
		}
		if !slices.Equal(paged, refs(whole)) {
			t.Errorf("%v: pages %v, whole %v", req, paged, refs(whole))
		}
	}

	first := f.find(t, &jobboardv2.SearchJobsRequest{Query: "tanker", PageSize: 1})
	if first.NextPageToken == "" {
		t.Fatal("no next page")
	}
	for name, req := range map[string]*jobboardv2.SearchJobsRequest{
		"another query":    {Query: "driver", PageToken: first.NextPageToken},
		"another filter":   {Query: "tanker", States: []string{"TX"}, PageToken: first.NextPageToken},
		"another order":    {Query: "tanker", OrderBy: jobboardv2.JobSearchOrder_JOB_SEARCH_ORDER_POSTED, PageToken: first.NextPageToken},
		"an altered token": {Query: "tanker", PageToken: altered(first.NextPageToken)},
	} {
		_, err := f.search.SearchJobs(f.internal, req)
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "page_token") {
			t.Errorf("%s: %v, want InvalidArgument naming page_token", name, err)
		}
	}
	// The page size may change from page to page.
	if _, err := f.search.SearchJobs(f.internal, &jobboardv2.SearchJobsRequest{Query: "tanker", PageSize: 5, PageToken: first.NextPageToken}); err != nil {
		t.Errorf("the same search with another page size: %v", err)
	}
}

// altered is token with a character in its middle changed: the last one
// may carry only bits the decoding drops.
func altered(token string) string {
	i, c := len(token)/2, "A"
	if token[i:i+1] == c {
		c = "B"
	}
	return token[:i] + c + token[i+1:]
}

// TestSearchJobsFresh: a job is found as soon as its post is answered, its
// new words as soon as its update is (and its old ones kept through an
// update of no text), and it is gone as soon as its delete is answered.
func TestSearchJobsFresh(t *testing.T) {
	f := newSearchFixture(t)
	ctx := withKey(f.a.APIKey)
	find := func(q string) []string { return refs(f.find(t, &jobboardv2.SearchJobsRequest{Query: q})) }
	f.post(t, f.a.APIKey, searchJob("F1", "Reefer Driver", "<p>Produce loads.</p>"))
	if got := find("reefer"); !slices.Equal(got, []string{"F1"}) {
		t.Fatalf("after the post: %v", got)
	}
	f.post(t, f.a.APIKey, searchJob("F1", "Livestock Driver", "<p>Cattle loads.</p>"))
	if got, gone := find("cattle"), find("reefer"); !slices.Equal(got, []string{"F1"}) || len(gone) != 0 {
		t.Fatalf("after the update: %v for its new words, %v for its old", got, gone)
	}
	// A change of no text keeps the words.
	f.post(t, f.a.APIKey, searchJob("F1", "Livestock Driver", "<p>Cattle loads.</p>", func(j *jobboardv2.JobInput) {
		j.PayFrequency, j.PayAmountMinCents = jobboardv2.PayFrequency_PAY_FREQUENCY_WEEKLY, proto.Int64(120000)
	}))
	if got := find("cattle"); !slices.Equal(got, []string{"F1"}) {
		t.Fatalf("after a change of its pay: %v", got)
	}
	if _, err := f.jobs.DeleteJob(ctx, &jobboardv2.DeleteJobRequest{Id: f.ids["F1"]}); err != nil {
		t.Fatal(err)
	}
	if got := find("cattle"); len(got) != 0 {
		t.Fatalf("after the delete: %v", got)
	}
}

// TestSearchJobsCallers: only the board's own services may search.
func TestSearchJobsCallers(t *testing.T) {
	f := newSearchFixture(t)
	for _, tt := range []struct {
		name string
		ctx  context.Context
		code codes.Code
	}{
		{"the internal token", f.internal, codes.OK},
		{"an account key", withKey(f.a.APIKey), codes.PermissionDenied},
		{"no credentials", context.Background(), codes.Unauthenticated},
		{"a wrong token", metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer nope"), codes.Unauthenticated},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := f.search.SearchJobs(tt.ctx, &jobboardv2.SearchJobsRequest{}); status.Code(err) != tt.code {
				t.Errorf("got %v, want %v", err, tt.code)
			}
		})
	}
}

// badRequestFields are the fields a status's google.rpc.BadRequest names.
func badRequestFields(err error) []string {
	var fields []string
	for _, d := range status.Convert(err).Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.FieldViolations {
				fields = append(fields, v.Field)
			}
		}
	}
	return fields
}

// TestSearchJobsBadInput: every invalid value is InvalidArgument with a
// BadRequest naming the field, and a message with the value and the rule.
func TestSearchJobsBadInput(t *testing.T) {
	f := newSearchFixture(t)
	eleven := make([]string, 11)
	for i := range eleven {
		eleven[i] = "TX"
	}
	weekly := []jobboardv2.PayFrequency{jobboardv2.PayFrequency_PAY_FREQUENCY_WEEKLY}
	for _, tt := range []struct {
		name  string
		req   *jobboardv2.SearchJobsRequest
		field string
		want  string
	}{
		{"a long query", &jobboardv2.SearchJobsRequest{Query: strings.Repeat("a", 201)}, "query", "is 201 characters long; the most is 200"},
		{"a ZIP+4", &jobboardv2.SearchJobsRequest{PostalCode: "77002-1234"}, "postal_code", `"77002-1234" is not a five-digit ZIP code`},
		{"an unknown ZIP", &jobboardv2.SearchJobsRequest{PostalCode: "00000"}, "postal_code", `"00000" is not a known US ZIP code`},
		{"a radius too wide", &jobboardv2.SearchJobsRequest{PostalCode: "77002", RadiusMiles: 501}, "radius_miles", "from 1 to 500"},
		{"a negative radius", &jobboardv2.SearchJobsRequest{PostalCode: "77002", RadiusMiles: -1}, "radius_miles", "from 1 to 500"},
		{"a radius without a centre", &jobboardv2.SearchJobsRequest{RadiusMiles: 20}, "radius_miles", "needs a postal_code"},
		{"eleven states", &jobboardv2.SearchJobsRequest{States: eleven}, "states", "has 11 values; the most is 10"},
		{"a state", &jobboardv2.SearchJobsRequest{States: []string{"TX", "ZZ"}}, "states[1]", `"ZZ" is not the USPS code`},
		{"a driver type", &jobboardv2.SearchJobsRequest{DriverTypes: []jobboardv2.DriverType{9}}, "driver_types[0]",
			`"9" is not one of Owner Operator, Company Driver, Student`},
		{"an unspecified freight type", &jobboardv2.SearchJobsRequest{FreightTypes: []jobboardv2.FreightType{0}}, "freight_types[0]", `"0" is not one of Box`},
		{"a route type", &jobboardv2.SearchJobsRequest{RouteTypes: []jobboardv2.RouteType{-3}}, "route_types[0]", `"-3" is not one of`},
		{"an employment type", &jobboardv2.SearchJobsRequest{EmploymentTypes: []jobboardv2.EmploymentType{5}}, "employment_types[0]", `"5" is not one of`},
		{"a pay frequency", &jobboardv2.SearchJobsRequest{PayFrequencies: []jobboardv2.PayFrequency{4}}, "pay_frequencies[0]", `"4" is not one of`},
		{"a license class", &jobboardv2.SearchJobsRequest{LicenseClass: 5}, "license_class", `"5" is not one of A, B, C, None`},
		{"a negative minimum pay", &jobboardv2.SearchJobsRequest{PayFrequencies: weekly, MinPayCents: proto.Int64(-1)}, "min_pay_cents", `"-1" is negative`},
		{"a minimum pay without its unit", &jobboardv2.SearchJobsRequest{MinPayCents: proto.Int64(150000)}, "min_pay_cents",
			"needs exactly one pay_frequencies value"},
		{"posted within a year and more", &jobboardv2.SearchJobsRequest{PostedWithinDays: 366}, "posted_within_days", "from 1 to 365"},
		{"an account id", &jobboardv2.SearchJobsRequest{AccountIds: []int64{0}}, "account_ids[0]", "is not an account id"},
		{"relevance without a query", &jobboardv2.SearchJobsRequest{OrderBy: jobboardv2.JobSearchOrder_JOB_SEARCH_ORDER_RELEVANCE},
			"order_by", "RELEVANCE needs a query"},
		{"distance without a postal code", &jobboardv2.SearchJobsRequest{OrderBy: jobboardv2.JobSearchOrder_JOB_SEARCH_ORDER_DISTANCE},
			"order_by", "DISTANCE needs a postal_code"},
		{"pay without its unit", &jobboardv2.SearchJobsRequest{OrderBy: jobboardv2.JobSearchOrder_JOB_SEARCH_ORDER_PAY},
			"order_by", "PAY needs exactly one pay_frequencies value"},
		{"an order", &jobboardv2.SearchJobsRequest{OrderBy: 9}, "order_by", `"9" is not one of JOB_SEARCH_ORDER_RELEVANCE`},
		{"a facet", &jobboardv2.SearchJobsRequest{Facets: []jobboardv2.JobFacet{0}}, "facets[0]", `"0" is not one of JOB_FACET_DRIVER_TYPE`},
		{"a page size", &jobboardv2.SearchJobsRequest{PageSize: -1}, "page_size", "-1 is negative"},
		{"a page token", &jobboardv2.SearchJobsRequest{PageToken: "nope"}, "page_token", `"nope" is not a next_page_token`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.search.SearchJobs(f.internal, tt.req)
			st := status.Convert(err)
			if st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), tt.want) {
				t.Fatalf("got %v, want InvalidArgument with %q", err, tt.want)
			}
			fields := badRequestFields(err)
			if !slices.Contains(fields, tt.field) {
				t.Errorf("BadRequest fields %v, want %q", fields, tt.field)
			}
		})
	}
}

// TestSearchJobsBadInputAllAtOnce: a request wrong in several fields is
// one InvalidArgument naming every one of them, the adapter's (unknown
// enum numbers) and the core's (values, a ZIP the table lacks, a page
// token) alike; a value the adapter refuses still counts for the core's
// rules, so a minimum pay with one pay frequency, unknown, is not also
// said to lack its unit.
func TestSearchJobsBadInputAllAtOnce(t *testing.T) {
	f := newSearchFixture(t)
	for _, tt := range []struct {
		name string
		req  *jobboardv2.SearchJobsRequest
		want []string
	}{
		{"the adapter's and the core's", &jobboardv2.SearchJobsRequest{
			DriverTypes: []jobboardv2.DriverType{9}, States: []string{"ZZ"}, PageSize: -1, PostalCode: "7700", RadiusMiles: 501,
		}, []string{"driver_types[0]", "states[0]", "radius_miles", "postal_code", "page_size"}},
		{"the core's alone", &jobboardv2.SearchJobsRequest{PostalCode: "00000", PostedWithinDays: 366, PageToken: "nope"},
			[]string{"posted_within_days", "postal_code", "page_token"}},
		{"an unknown unit of a minimum pay", &jobboardv2.SearchJobsRequest{
			PayFrequencies: []jobboardv2.PayFrequency{4}, MinPayCents: proto.Int64(150000),
		}, []string{"pay_frequencies[0]"}},
		// A request the core finds nothing wrong with but the adapter does
		// is refused for the adapter's problem alone, its words unread.
		{"an unknown driver type with a query", &jobboardv2.SearchJobsRequest{
			Query: "tanker", DriverTypes: []jobboardv2.DriverType{9},
		}, []string{"driver_types[0]"}},
		// No token was answered for a search with an unknown value in it.
		{"an unknown freight type with a page token", &jobboardv2.SearchJobsRequest{
			FreightTypes: []jobboardv2.FreightType{99}, PageToken: "nope",
		}, []string{"freight_types[0]", "page_token"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.search.SearchJobs(f.internal, tt.req)
			st := status.Convert(err)
			if st.Code() != codes.InvalidArgument {
				t.Fatalf("got %v, want InvalidArgument", err)
			}
			fields := badRequestFields(err)
			if !slices.Equal(fields, tt.want) {
				t.Errorf("BadRequest fields %q, want %q (message %q)", fields, tt.want, st.Message())
			}
		})
	}
}

// TestSearchJobsNewest: a job's place among the newest is the instant it
// was first added, which neither an update nor a delete and post again
// changes; posted_within_days counts back from the call.
func TestSearchJobsNewest(t *testing.T) {
	f := newSearchFixture(t)
	f.post(t, f.a.APIKey, searchJob("X1", "Yard Spotter", "<p>Yard work.</p>"), searchJob("X2", "Yard Hostler", "<p>Yard work.</p>"))
	f.post(t, f.a.APIKey, searchJob("X1", "Yard Spotter, nights", "<p>Yard work at night.</p>"))
	if got := refs(f.find(t, &jobboardv2.SearchJobsRequest{})); !slices.Equal(got, []string{"X2", "X1"}) {
		t.Errorf("after an update of X1: %v, want X2 still newest", got)
	}
	if _, err := f.jobs.DeleteJob(withKey(f.a.APIKey), &jobboardv2.DeleteJobRequest{Id: f.ids["X1"]}); err != nil {
		t.Fatal(err)
	}
	f.post(t, f.a.APIKey, searchJob("X1", "Yard Spotter", "<p>Yard work.</p>"))
	if got := refs(f.find(t, &jobboardv2.SearchJobsRequest{})); !slices.Equal(got, []string{"X2", "X1"}) {
		t.Errorf("after X1 was deleted and posted again: %v, want X2 still newest", got)
	}
	// X2 first added three days ago.
	if _, err := f.st.DB().Exec(`UPDATE jobs SET created_at = now() - interval '3 days' WHERE id = $1`, f.ids["X2"]); err != nil {
		t.Fatal(err)
	}
	for days, want := range map[int32][]string{2: {"X1"}, 4: {"X1", "X2"}} {
		if got := refs(f.find(t, &jobboardv2.SearchJobsRequest{PostedWithinDays: days})); !slices.Equal(got, want) {
			t.Errorf("posted within %d days: %v, want %v", days, got, want)
		}
	}
}
