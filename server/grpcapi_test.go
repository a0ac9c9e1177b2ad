package server

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
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
	if _, err := f.svcs.Jobs.PostJobs(ContextWithCaller(context.Background(), Caller{AccountID: f.a.AccountID}),
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
