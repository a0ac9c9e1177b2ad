package server

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/internal/grpctest"
)

// postAtOnce posts jobs for the account with key in one request, so that
// they are added by one statement at one instant, and notes their ids.
func (f *searchFixture) postAtOnce(t *testing.T, key string, jobs ...*jobboardv2.JobInput) {
	t.Helper()
	r, err := f.jobs.PostJobs(withKey(key), &jobboardv2.PostJobsRequest{Jobs: jobs})
	if err != nil || r.Errors != 0 || int(r.Added) != len(jobs) {
		t.Fatalf("post of %d jobs: %v %v", len(jobs), r, err)
	}
	f.post(t, key) // no job: only reads the ids
}

// TestSearchJobsFields: request fields the other search tests leave thin:
// words of the requirements, phrases, page sizes, the lists' limit, a
// driver without a license class, a job whose ZIP code is unknown in a
// radius search, relevance ties, a token of another list, and text no
// PostgreSQL column may hold.
func TestSearchJobsFields(t *testing.T) {
	f := newSearchFixture(t)
	class := func(c jobboardv2.LicenseClass) func(*jobboardv2.JobInput) {
		return func(j *jobboardv2.JobInput) { j.LicenseClass = c }
	}
	f.post(t, f.a.APIKey,
		// "doubles" is in R1's requirements alone.
		searchJob("R1", "Linehaul Driver", "<p>Night runs between terminals.</p>", func(j *jobboardv2.JobInput) {
			j.Requirements = proto.String("<p>A <b>doubles</b> endorsement.</p>")
		}),
		// Both have the words box and truck, P1 alone side by side.
		searchJob("P1", "Box Truck Driver", "<p>Local deliveries.</p>"),
		searchJob("P2", "Delivery Driver", "<p>Box deliveries; the truck is ours.</p>"),
		searchJob("L1", "Forklift Operator", "<p>Forklift work.</p>", class(jobboardv2.LicenseClass_LICENSE_CLASS_A)),
		searchJob("L2", "Forklift Operator", "<p>Forklift work.</p>", class(jobboardv2.LicenseClass_LICENSE_CLASS_B)),
		searchJob("L3", "Forklift Operator", "<p>Forklift work.</p>", class(jobboardv2.LicenseClass_LICENSE_CLASS_C)),
		searchJob("L4", "Forklift Operator", "<p>Forklift work.</p>", class(jobboardv2.LicenseClass_LICENSE_CLASS_NONE)),
		searchJob("L5", "Forklift Operator", "<p>Forklift work.</p>"),
		// Identical text posted one after the other: equal rank, E2 newer.
		searchJob("E1", "Hopper Driver", "<p>Grain hopper runs.</p>"),
		searchJob("E2", "Hopper Driver", "<p>Grain hopper runs.</p>"),
	)
	// Z1's postal code is well formed (a job may have it) but has no
	// centroid in the ZIP table, so it has no place to measure from.
	var known bool
	err := f.st.DB().QueryRow(`SELECT EXISTS (SELECT 1 FROM zip_centroids WHERE zip = '00000')`).Scan(&known)
	if err != nil {
		t.Fatal(err)
	}
	if known {
		t.Fatal("00000 is in zip_centroids: pick another unknown code")
	}
	f.post(t, f.a.APIKey,
		searchJob("Z1", "Lumper", "<p>Unloading trailers.</p>", func(j *jobboardv2.JobInput) {
			j.PostalCode = proto.String("00000")
		}),
		searchJob("Z2", "Lumper", "<p>Unloading trailers.</p>"))
	// Identical text in one post: equal rank and one instant (a post's
	// statement adds its jobs at one now()), so only the job id tells
	// them apart.
	f.postAtOnce(t, f.a.APIKey, searchJob("S1", "Auger Driver", "<p>Grain auger work.</p>"),
		searchJob("S2", "Auger Driver", "<p>Grain auger work.</p>"),
		searchJob("S3", "Auger Driver", "<p>Grain auger work.</p>"))
	var instants int
	if err := f.st.DB().QueryRow(`SELECT count(DISTINCT created_at) FROM jobs WHERE id IN ($1, $2, $3)`,
		f.ids["S1"], f.ids["S2"], f.ids["S3"]).Scan(&instants); err != nil {
		t.Fatal(err)
	}
	byID := []string{"S1", "S2", "S3"}
	slices.SortFunc(byID, func(x, y string) int { return cmp.Compare(f.ids[y], f.ids[x]) }) // higher id first
	if instants != 1 {
		t.Fatalf("one post added S1-S3 at %d instants, not one: the tie of instants below would test nothing", instants)
	}
	// More than a largest page of matches, in account B.
	var pallets []*jobboardv2.JobInput
	for i := range 105 {
		pallets = append(pallets, searchJob(fmt.Sprintf("W%03d", i), "Pallet Jockey", "<p>Warehouse pallet moves.</p>"))
	}
	f.postAtOnce(t, f.b.APIKey, pallets...)
	// A next_page_token of ListJobs: a token of another list.
	list, err := f.jobs.ListJobs(withKey(f.a.APIKey), &jobboardv2.ListJobsRequest{PageSize: 1})
	if err != nil || list.NextPageToken == "" {
		t.Fatalf("ListJobs: %v, next %q", err, list.GetNextPageToken())
	}

	conn := f.conn(t, "127.0.0.1") // for requests in wire form
	posted := jobboardv2.JobSearchOrder_JOB_SEARCH_ORDER_POSTED
	eleven := func(v int32) []int32 { return slices.Repeat([]int32{v}, 11) }
	enums := func(v int32) (d []jobboardv2.DriverType, fr []jobboardv2.FreightType, r []jobboardv2.RouteType,
		e []jobboardv2.EmploymentType, p []jobboardv2.PayFrequency) {
		for _, n := range eleven(v) {
			d, fr = append(d, jobboardv2.DriverType(n)), append(fr, jobboardv2.FreightType(n))
			r, e = append(r, jobboardv2.RouteType(n)), append(e, jobboardv2.EmploymentType(n))
			p = append(p, jobboardv2.PayFrequency(n))
		}
		return
	}
	drivers, freights, routes, jobTypes, pays := enums(2)
	for _, tt := range []struct {
		name string
		req  *jobboardv2.SearchJobsRequest
		// raw is the request's wire form, sent instead of req: text the
		// client's marshalling would refuse.
		raw   []byte
		want  []string // the results, in order; nil: only n is checked
		n     int
		total int64 // total_size; 0: len(want)
		next  bool  // a next page follows
		field string
	}{
		{name: "a word of the requirements alone", req: &jobboardv2.SearchJobsRequest{Query: "doubles"},
			want: []string{"R1"}},
		{name: "a phrase: its words side by side", req: &jobboardv2.SearchJobsRequest{Query: `"box truck"`},
			want: []string{"P1"}},
		// P2 has both words: only the phrase leaves it out.
		{name: "the same words, not a phrase", req: &jobboardv2.SearchJobsRequest{Query: "box truck", OrderBy: posted},
			want: []string{"P2", "P1"}},
		// page_size 0 is the unset page_size of proto3: "20 when unset".
		{name: "page size unset", req: &jobboardv2.SearchJobsRequest{Query: "pallet"}, n: 20, total: 105, next: true},
		{name: "page size 100", req: &jobboardv2.SearchJobsRequest{Query: "pallet", PageSize: 100},
			n: 100, total: 105, next: true},
		// §11 says 1-100 and no more; docs/api.md (AIP-158): "more is 100".
		{name: "page size 101", req: &jobboardv2.SearchJobsRequest{Query: "pallet", PageSize: 101},
			n: 100, total: 105, next: true},
		{name: "11 driver types", req: &jobboardv2.SearchJobsRequest{DriverTypes: drivers}, field: "driver_types"},
		{name: "11 freight types", req: &jobboardv2.SearchJobsRequest{FreightTypes: freights}, field: "freight_types"},
		{name: "11 route types", req: &jobboardv2.SearchJobsRequest{RouteTypes: routes}, field: "route_types"},
		{name: "11 employment types", req: &jobboardv2.SearchJobsRequest{EmploymentTypes: jobTypes},
			field: "employment_types"},
		{name: "11 pay frequencies", req: &jobboardv2.SearchJobsRequest{PayFrequencies: pays}, field: "pay_frequencies"},
		{name: "11 account ids", req: &jobboardv2.SearchJobsRequest{AccountIds: slices.Repeat([]int64{f.a.AccountID}, 11)},
			field: "account_ids"},
		// A driver with no class drives the jobs that ask for none: class
		// None, or no class given.
		{name: "a driver without a license class", req: &jobboardv2.SearchJobsRequest{Query: "forklift", OrderBy: posted,
			LicenseClass: jobboardv2.LicenseClass_LICENSE_CLASS_NONE}, want: []string{"L5", "L4"}},
		{name: "a job of an unknown ZIP code is in no radius", req: &jobboardv2.SearchJobsRequest{Query: "lumper",
			PostalCode: "77002", RadiusMiles: 500}, want: []string{"Z2"}},
		// ... though it is found without one.
		{name: "a job of an unknown ZIP code without a radius", req: &jobboardv2.SearchJobsRequest{Query: "lumper",
			OrderBy: posted}, want: []string{"Z2", "Z1"}},
		{name: "equal rank: newest first", req: &jobboardv2.SearchJobsRequest{Query: "hopper"}, want: []string{"E2", "E1"}},
		// §11: "Ties are always broken by job id"; docs/api.md says which
		// way: "then by job id (higher first)".
		{name: "equal rank and instant: higher id first", req: &jobboardv2.SearchJobsRequest{Query: "auger"},
			want: byID},
		{name: "a page token of ListJobs", req: &jobboardv2.SearchJobsRequest{PageToken: list.NextPageToken},
			field: "page_token"},
		{name: "a page token of ListJobs, with a query", req: &jobboardv2.SearchJobsRequest{Query: "pallet",
			PageToken: list.NextPageToken}, field: "page_token"},
		{name: "a query with a NUL", req: &jobboardv2.SearchJobsRequest{Query: "tank\x00er"}, field: "query"},
		{name: "a query of invalid UTF-8", raw: grpctest.StringField(1, []byte("tank\xffer")), field: "query"},
		{name: "a query cut inside a character", raw: grpctest.StringField(1, []byte("caf\xc3")), field: "query"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var r *jobboardv2.SearchJobsResponse
			var err error
			if tt.raw != nil {
				var out []byte
				err = conn.Invoke(f.internal, jobboardv2.JobSearchService_SearchJobs_FullMethodName, &tt.raw, &out,
					grpc.ForceCodecV2(grpctest.RawCodec{}))
				if err == nil {
					r = &jobboardv2.SearchJobsResponse{}
					err = proto.Unmarshal(out, r)
				}
			} else {
				r, err = f.search.SearchJobs(f.internal, tt.req)
			}
			if tt.field != "" {
				st := status.Convert(err)
				if st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), tt.field) {
					t.Fatalf("got %v, want InvalidArgument naming %s", err, tt.field)
				}
				if fields := badRequestFields(err); !slices.Contains(fields, tt.field) {
					t.Errorf("BadRequest fields %v, want %q", fields, tt.field)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.want != nil {
				if got := refs(r); !slices.Equal(got, tt.want) {
					t.Errorf("got %v, want %v", got, tt.want)
				}
				tt.n = len(tt.want)
			} else if len(r.Results) != tt.n {
				t.Errorf("%d results, want %d", len(r.Results), tt.n)
			}
			total := tt.total
			if total == 0 {
				total = int64(tt.n)
			}
			if r.TotalSize != total || r.TotalSizeIsEstimate || (r.NextPageToken != "") != tt.next {
				t.Errorf("total %d (estimate %v), next %q; want %d exactly and a next page %v",
					r.TotalSize, r.TotalSizeIsEstimate, r.NextPageToken, total, tt.next)
			}
		})
	}
}
