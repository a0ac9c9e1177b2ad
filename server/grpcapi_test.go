package server

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/truckjobs/jobboard/server/grpcapi"

	"github.com/truckjobs/jobboard/server/drivers"

	"github.com/truckjobs/jobboard/server/jobs"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/intake"
)

// naturalJob is a valid job in the gRPC form.
func naturalJob(ref string) *jobboardv2.JobInput {
	return &jobboardv2.JobInput{ReferenceNumber: ref, Title: "OTR Driver", State: "tx",
		DriverType: jobboardv2.DriverType_DRIVER_TYPE_COMPANY_DRIVER, FreightType: jobboardv2.FreightType_FREIGHT_TYPE_DRY_VAN,
		PayAmountMinCents: proto.Int64(1850), PayAmountMaxCents: proto.Int64(2275),
		PayFrequency:   jobboardv2.PayFrequency_PAY_FREQUENCY_HOURLY,
		EmploymentType: []jobboardv2.EmploymentType{jobboardv2.EmploymentType_EMPLOYMENT_TYPE_FULL_TIME, jobboardv2.EmploymentType_EMPLOYMENT_TYPE_PERMANENT},
		RouteType:      []jobboardv2.RouteType{jobboardv2.RouteType_ROUTE_TYPE_OTR},
		Description:    "<p>Home weekly.</p>", TwicOnly: true, LicenseClass: jobboardv2.LicenseClass_LICENSE_CLASS_A}
}

// TestGRPCNaturalTypes posts, reads and deletes jobs over a real gRPC
// connection with natural types, and reads what REST stored in any case.
func TestGRPCNaturalTypes(t *testing.T) {
	f := newGRPCFixture(t, Config{})
	jobs := jobboardv2.NewJobServiceClient(f.conn(t, "127.0.0.1"))
	ctx := withKey(f.a.APIKey)
	bad := naturalJob("BAD1")
	bad.PayAmountMinCents = proto.Int64(-5)
	post, err := jobs.PostJobs(ctx, &jobboardv2.PostJobsRequest{Jobs: []*jobboardv2.JobInput{naturalJob("G1"), bad}})
	if err != nil || post.Added != 1 || post.Errors != 1 {
		t.Fatalf("PostJobs: %v %v", post, err)
	}
	if e := post.ErrorMessages.InvalidErrors.Errors[0]; e.GetField() != "payAmountMinCents" || e.GetValue() != "-5" || e.GetIndex() != 1 {
		t.Errorf("the entry of a negative amount: %v", e)
	}
	// A grpcurl caller writes JSON: numbers and bools as such, enums by name.
	var fromJSON jobboardv2.PostJobsRequest
	if err := protojson.Unmarshal([]byte(`{"jobs": [{"referenceNumber": "G2", "title": "Local", "state": "OH",
		"driverType": "DRIVER_TYPE_STUDENT", "freightType": "FREIGHT_TYPE_TANKER", "payAmountMinCents": 900,
		"twicOnly": false, "description": "d"}]}`), &fromJSON); err != nil {
		t.Fatal(err)
	}
	if post, err := jobs.PostJobs(ctx, &fromJSON); err != nil || post.Added != 1 {
		t.Fatalf("PostJobs from JSON: %v %v", post, err)
	}
	// REST accepts labels in any case; what it stores reads as enum values.
	rest := &restv2.JobInput{ReferenceNumber: proto.String("R1"), Title: proto.String("t"), State: proto.String("MO"),
		DriverType: proto.String("owner OPERATOR"), FreightType: proto.String("car hauler"), Description: proto.String("d"),
		Preference: proto.String("lease purchase team solo"), LicenseClass: proto.String("none"),
		PayAmountMin: proto.String("18.5"), TwicOnly: proto.String("1")}
	if _, err := f.svcs.Jobs.PostJobs(call.WithCaller(context.Background(), call.Caller{AccountID: f.a.AccountID}),
		&restv2.PostJobsRequest{Jobs: []*restv2.JobInput{rest}}); err != nil {
		t.Fatal(err)
	}
	list, err := jobs.ListJobs(ctx, &jobboardv2.ListJobsRequest{})
	if err != nil || len(list.Jobs) != 3 || list.NextPageToken != "" {
		t.Fatalf("ListJobs: %v %v", list, err)
	}
	want := &jobboardv2.Job{Id: list.Jobs[0].Id, Date: list.Jobs[0].Date, ReferenceNumber: "G1", Title: "OTR Driver", State: "TX",
		DriverType: jobboardv2.DriverType_DRIVER_TYPE_COMPANY_DRIVER, FreightType: jobboardv2.FreightType_FREIGHT_TYPE_DRY_VAN,
		PayAmountMinCents: proto.Int64(1850), PayAmountMaxCents: proto.Int64(2275), PayFrequency: jobboardv2.PayFrequency_PAY_FREQUENCY_HOURLY,
		EmploymentType: naturalJob("").EmploymentType, RouteType: naturalJob("").RouteType, Description: "<p>Home weekly.</p>",
		TwicOnly: true, LicenseClass: jobboardv2.LicenseClass_LICENSE_CLASS_A}
	got, err := jobs.GetJob(ctx, &jobboardv2.GetJobRequest{Id: list.Jobs[0].Id})
	if err != nil || !proto.Equal(got.Job, want) || !proto.Equal(list.Jobs[0], want) {
		t.Errorf("GetJob: %v %v\nwant %v", got, err, want)
	}
	r := list.Jobs[2]
	if r.DriverType != jobboardv2.DriverType_DRIVER_TYPE_OWNER_OPERATOR || r.FreightType != jobboardv2.FreightType_FREIGHT_TYPE_CAR_HAULER ||
		r.Preference != jobboardv2.Preference_PREFERENCE_LEASE_PURCHASE_TEAM_SOLO || r.LicenseClass != jobboardv2.LicenseClass_LICENSE_CLASS_NONE ||
		r.GetPayAmountMinCents() != 1850 || !r.TwicOnly {
		t.Errorf("the job REST posted, read over gRPC: %v", r)
	}
	del, err := jobs.DeleteJobs(ctx, &jobboardv2.DeleteJobsRequest{Ids: []int64{list.Jobs[1].Id, 0}})
	if err != nil || del.Summary.Deleted != 1 || len(del.Summary.ErrorMessages.MissingErrors.Errors) != 1 {
		t.Errorf("DeleteJobs: %v %v", del, err)
	}
}

// TestGRPCJobProblemsInItsOwnWords: a post's entries over gRPC name the
// natural fields and show what was sent as sent (cents, enum numbers),
// and the rules' words follow: the largest amount is said in cents.
func TestGRPCJobProblemsInItsOwnWords(t *testing.T) {
	f := newGRPCFixture(t, Config{})
	client := jobboardv2.NewJobServiceClient(f.conn(t, "127.0.0.1"))
	negative, huge, above, unknown := naturalJob("N1"), naturalJob("H1"), naturalJob("A1"), naturalJob("U1")
	negative.PayAmountMinCents = proto.Int64(-5)
	huge.PayAmountMinCents, huge.PayAmountMaxCents = nil, proto.Int64(100_000_001)
	above.PayAmountMinCents, above.PayAmountMaxCents = proto.Int64(2000), proto.Int64(1999)
	unknown.DriverType = 9
	post, err := client.PostJobs(withKey(f.a.APIKey), &jobboardv2.PostJobsRequest{Jobs: []*jobboardv2.JobInput{negative, huge, above, unknown}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range post.GetErrorMessages().GetInvalidErrors().GetErrors() {
		got = append(got, fmt.Sprintf("%d %s %s | %s", e.GetIndex(), e.GetField(), e.GetValue(), e.GetMessage()))
	}
	want := []string{
		`0 payAmountMinCents -5 | payAmountMinCents: "-5" must not be negative`,
		`1 payAmountMaxCents 100000001 | payAmountMaxCents: "100000001" must be at most 100000000`,
		`2 payAmountMinCents 2000 | payAmountMinCents: "2000" is greater than payAmountMaxCents "1999"`,
		`3 driverType 9 | driverType: "9" is not one of Owner Operator, Company Driver, Student`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("invalid entries (-want +got):\n%s", diff)
	}
}

// TestGRPCMissingIDs: an id left unset is the caller's mistake, named.
func TestGRPCMissingIDs(t *testing.T) {
	f := newGRPCFixture(t, Config{})
	conn := f.conn(t, "127.0.0.1")
	ctx := withKey(f.a.APIKey)
	jobs, drivers := jobboardv2.NewJobServiceClient(conn), jobboardv2.NewDriverServiceClient(conn)
	imports := jobboardv2.NewJobImportServiceClient(conn)
	calls := map[string]func() error{
		"GetJob":       func() error { _, err := jobs.GetJob(ctx, &jobboardv2.GetJobRequest{}); return err },
		"DeleteJob":    func() error { _, err := jobs.DeleteJob(ctx, &jobboardv2.DeleteJobRequest{}); return err },
		"GetDriver":    func() error { _, err := drivers.GetDriver(ctx, &jobboardv2.GetDriverRequest{}); return err },
		"GetJobImport": func() error { _, err := imports.GetJobImport(ctx, &jobboardv2.GetJobImportRequest{}); return err },
	}
	for name, call := range calls {
		st := status.Convert(call())
		if st.Code() != codes.InvalidArgument || !strings.HasPrefix(st.Message(), "id: ") {
			t.Errorf("%s without an id: %v, want InvalidArgument naming id", name, st)
		}
	}
	if _, err := jobs.GetJob(ctx, &jobboardv2.GetJobRequest{Id: 12345}); status.Code(err) != codes.NotFound {
		t.Errorf("GetJob of an id that does not exist: %v", err)
	}
}

// TestGRPCListJobsPaging reads every job once, and refuses tokens that are
// altered, foreign or not the service's.
func TestGRPCListJobsPaging(t *testing.T) {
	f := newGRPCFixture(t, Config{})
	jobs := jobboardv2.NewJobServiceClient(f.conn(t, "127.0.0.1"))
	ctx := withKey(f.a.APIKey)
	var in []*jobboardv2.JobInput
	for i := range 250 {
		in = append(in, naturalJob(fmt.Sprintf("P%d", i)))
	}
	if post, err := jobs.PostJobs(ctx, &jobboardv2.PostJobsRequest{Jobs: in}); err != nil || post.Added != 250 {
		t.Fatalf("PostJobs: %v %v", post.GetErrorMessages(), err)
	}
	seen := map[int64]bool{}
	var tokens []string
	req := &jobboardv2.ListJobsRequest{PageSize: 100}
	for {
		page, err := jobs.ListJobs(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range page.Jobs {
			if seen[j.Id] {
				t.Errorf("job %d read twice", j.Id)
			}
			seen[j.Id] = true
		}
		if page.NextPageToken == "" {
			break
		}
		tokens = append(tokens, page.NextPageToken)
		req.PageToken = page.NextPageToken
	}
	if len(seen) != 250 || len(tokens) != 2 {
		t.Errorf("%d jobs in %d pages, want 250 in 3", len(seen), len(tokens)+1)
	}
	token := tokens[0]
	swap := byte('A')
	if token[2] == 'A' {
		swap = 'B'
	}
	altered := token[:2] + string(swap) + token[3:] // the position's bytes, not the signature's
	for name, c := range map[string]struct {
		key, token string
	}{
		"altered":       {f.a.APIKey, altered},
		"another's":     {f.b.APIKey, token},
		"a plain id":    {f.a.APIKey, "100"},
		"not base64url": {f.a.APIKey, "%%%"},
	} {
		_, err := jobs.ListJobs(withKey(c.key), &jobboardv2.ListJobsRequest{PageToken: c.token})
		if st := status.Convert(err); st.Code() != codes.InvalidArgument || !strings.HasPrefix(st.Message(), "page_token: ") {
			t.Errorf("%s token: %v, want InvalidArgument naming page_token", name, err)
		}
	}
}

// TestGRPCListDriversPaging: in every order, pages read every driver once
// in the order of one big page; a token only works for the account, the
// filters and the order it was answered for.
func TestGRPCListDriversPaging(t *testing.T) {
	f := newGRPCFixture(t, Config{})
	states, types := []string{"MO", "TX", "OH"}, []string{"Student", "Company Driver", "Owner Operator"}
	var apps []*intake.Application
	for i := range 23 {
		// Repeated last names, states, types and times make ties that the id must break.
		apps = append(apps, applicant(fmt.Sprintf("Ann%d", i), []string{"Lee", "Diaz", "Ng", "Lee"}[i%4], states[i%3], "64801",
			types[i%3], "2", fmt.Sprintf("2026-10-%02dT08:00:00Z", 1+i%5)))
	}
	if _, err := drivers.ImportApplications(context.Background(), f.st, testOutbox(t, f.st), f.a.AccountID, apps); err != nil {
		t.Fatal(err)
	}
	drivers := jobboardv2.NewDriverServiceClient(f.conn(t, "127.0.0.1"))
	ctx := withKey(f.a.APIKey)
	readAll := func(req *jobboardv2.ListDriversRequest, total int64) ([]int64, []string) {
		var ids []int64
		var tokens []string
		for {
			page, err := drivers.ListDrivers(ctx, req)
			if err != nil {
				t.Fatalf("%v: %v", req, err)
			}
			if page.TotalSize != total {
				t.Errorf("total_size %d, want %d", page.TotalSize, total)
			}
			for _, d := range page.Drivers {
				ids = append(ids, d.Id)
			}
			if page.NextPageToken == "" {
				return ids, tokens
			}
			tokens = append(tokens, page.NextPageToken)
			req = proto.CloneOf(req)
			req.PageToken = page.NextPageToken
		}
	}
	orders := jobboardv2.DriverOrder(0).Descriptor().Values()
	for i := range orders.Len() {
		for _, desc := range []bool{false, true} {
			order := jobboardv2.DriverOrder(orders.Get(i).Number())
			whole, _ := readAll(&jobboardv2.ListDriversRequest{Order: order, Descending: desc, PageSize: 100}, 23)
			paged, tokens := readAll(&jobboardv2.ListDriversRequest{Order: order, Descending: desc, PageSize: 4}, 23)
			if len(whole) != 23 || fmt.Sprint(paged) != fmt.Sprint(whole) || len(tokens) != 5 {
				t.Errorf("%s descending=%t: pages %v (%d tokens), one page %v", order, desc, paged, len(tokens), whole)
			}
		}
	}
	_, tokens := readAll(&jobboardv2.ListDriversRequest{State: "MO", PageSize: 3}, 8)
	refused := map[string]struct {
		key string
		req *jobboardv2.ListDriversRequest
	}{
		"other filters":   {f.a.APIKey, &jobboardv2.ListDriversRequest{State: "TX", PageSize: 3}},
		"another order":   {f.a.APIKey, &jobboardv2.ListDriversRequest{State: "MO", Order: jobboardv2.DriverOrder_DRIVER_ORDER_NAME}},
		"another account": {f.b.APIKey, &jobboardv2.ListDriversRequest{State: "MO", PageSize: 3}},
	}
	for name, c := range refused {
		c.req.PageToken = tokens[0]
		_, err := drivers.ListDrivers(withKey(c.key), c.req)
		if st := status.Convert(err); st.Code() != codes.InvalidArgument || !strings.HasPrefix(st.Message(), "page_token: ") {
			t.Errorf("a token with %s: %v, want InvalidArgument naming page_token", name, err)
		}
	}
	for field, req := range map[string]*jobboardv2.ListDriversRequest{
		"lives_within_radius_miles": {LivesWithinRadiusMiles: 10},
		"min_experience_years":      {MinExperienceYears: proto.Float64(1.7)},
		"state":                     {State: "XX"},
		"page_size":                 {PageSize: -1},
	} {
		_, err := drivers.ListDrivers(ctx, req)
		if st := status.Convert(err); st.Code() != codes.InvalidArgument || !strings.HasPrefix(st.Message(), field+": ") {
			t.Errorf("%v: %v, want InvalidArgument naming %s", req, err, field)
		}
	}
	// Another page size is allowed: the token holds a place, not a page number.
	if _, err := drivers.ListDrivers(ctx, &jobboardv2.ListDriversRequest{State: "MO", PageSize: 50, PageToken: tokens[0]}); err != nil {
		t.Errorf("the token with another page size: %v", err)
	}
}

// TestGRPCReadsAFullAccount: a client with gRPC's default settings (4 MiB
// received at most) reads an account at its 10,000-job limit, with
// 5,000-character descriptions, page by page, each job once.
func TestGRPCReadsAFullAccount(t *testing.T) {
	if testing.Short() {
		t.Skip("posts 50 MB of jobs")
	}
	f := newGRPCFixture(t, Config{})
	core := call.WithCaller(context.Background(), call.Caller{AccountID: f.a.AccountID})
	description := strings.Repeat("Drive the lane, load and unload. ", 5000/33+1)[:5000]
	for batch := range jobs.MaxActiveJobs / 1000 {
		in := make([]*restv2.JobInput, 1000)
		for i := range in {
			in[i] = input(fmt.Sprintf("F%d", batch*1000+i))
			in[i].Description = &description
		}
		if post, err := f.svcs.Jobs.PostJobs(core, &restv2.PostJobsRequest{Jobs: in}); err != nil || post.Added != 1000 {
			t.Fatalf("post %d: %v %v", batch, post.GetErrors(), err)
		}
	}
	jobsClient := jobboardv2.NewJobServiceClient(f.conn(t, "127.0.0.1"))
	seen := map[int64]bool{}
	req := &jobboardv2.ListJobsRequest{PageSize: 1000}
	pages, largest := 0, 0
	for {
		page, err := jobsClient.ListJobs(withKey(f.a.APIKey), req)
		if err != nil {
			t.Fatalf("page %d: %v", pages+1, err)
		}
		pages++
		largest = max(largest, proto.Size(page))
		for _, j := range page.Jobs {
			if seen[j.Id] || len(j.Description) != 5000 {
				t.Fatalf("job %d read twice, or cut", j.Id)
			}
			seen[j.Id] = true
		}
		if page.NextPageToken == "" {
			break
		}
		req.PageToken = page.NextPageToken
	}
	t.Logf("figures: %d jobs of 5,000 characters in %d pages, the largest %d bytes", len(seen), pages, largest)
	if len(seen) != jobs.MaxActiveJobs || largest > 4<<20 {
		t.Errorf("%d jobs read, the largest page %d bytes", len(seen), largest)
	}
}

// TestGRPCListDriversPageBytes: drivers whose texts are large (no field
// length is limited) come in pages cut under grpcapi.DriversPageBytes, each driver
// once, so a client with gRPC's 4 MiB default reads them all.
func TestGRPCListDriversPageBytes(t *testing.T) {
	f := newGRPCFixture(t, Config{})
	// The longest text fields the intake takes, in 4-byte characters: some
	// 20 KB a row, so 1,000 rows would be 20 MB.
	long := strings.Repeat("\U0001D11E", drivers.MaxApplicationText)
	const count = 250
	var apps []*intake.Application
	for i := range count {
		app := applicant(fmt.Sprintf("Big%d", i), "Lee", "MO", "64801", "Student", "2", "2026-10-01T08:00:00Z")
		app.Address, app.City, app.Address2 = long, long, &long
		app.FirstName = fmt.Sprintf("%03d", i) + long[:len(long)-12]
		app.LastName = long
		apps = append(apps, app)
	}
	if _, err := drivers.ImportApplications(context.Background(), f.st, testOutbox(t, f.st), f.a.AccountID, apps); err != nil {
		t.Fatal(err)
	}
	client := jobboardv2.NewDriverServiceClient(f.conn(t, "127.0.0.1"))
	seen := map[int64]bool{}
	req := &jobboardv2.ListDriversRequest{PageSize: 1000}
	var sizes []int
	for {
		page, err := client.ListDrivers(withKey(f.a.APIKey), req)
		if err != nil {
			t.Fatalf("page %d: %v", len(sizes)+1, err)
		}
		sizes = append(sizes, len(page.Drivers))
		if proto.Size(page) > grpcapi.DriversPageBytes+32*1024 {
			t.Errorf("page %d: %d bytes", len(sizes), proto.Size(page))
		}
		for _, d := range page.Drivers {
			if seen[d.Id] {
				t.Fatalf("driver %d read twice", d.Id)
			}
			seen[d.Id] = true
		}
		if page.NextPageToken == "" {
			break
		}
		req.PageToken = page.NextPageToken
	}
	if len(seen) != count || len(sizes) < 2 {
		t.Errorf("read %d drivers in pages of %v, want %d in more than one page", len(seen), sizes, count)
	}
}
