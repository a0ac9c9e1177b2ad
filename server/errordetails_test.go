package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/truckjobs/jobboard/internal/grpctest"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
)

// TestEveryInvalidArgumentHasDetails: the services make InvalidArgument
// only through package call, so none goes without its BadRequest.
func TestEveryInvalidArgumentHasDetails(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(src), "codes.InvalidArgument") {
			t.Errorf("%s makes an InvalidArgument of its own: use call.InvalidField or call.InvalidArgument", name)
		}
	}
}

// TestGRPCErrorDetails: over a real connection, each kind of invalid
// request comes back with a BadRequest naming the field, the value and the
// rule, and a rate-limited call with its RetryInfo.
func TestGRPCErrorDetails(t *testing.T) {
	f := newGRPCFixture(t, Config{InternalToken: "internal-secret", RateLimit: 0.01, RateBurst: 20})
	conn := f.conn(t, "127.0.0.1")
	ctx := withKey(f.a.APIKey)
	drivers := jobboardv2.NewDriverServiceClient(conn)
	jobs := jobboardv2.NewJobServiceClient(conn)
	job, err := proto.Marshal(input("A1"))
	if err != nil {
		t.Fatal(err)
	}
	number := func(m proto.Message, name protoreflect.Name) protowire.Number {
		return m.ProtoReflect().Descriptor().Fields().ByName(name).Number()
	}
	title, list := number(&jobboardv2.JobInput{}, "title"), number(&jobboardv2.PostJobsRequest{}, "jobs")
	badJob := append(job, grpctest.StringField(title, []byte("Dr\xffver"))...) // sent again: the last one counts
	posts := append(grpctest.StringField(list, job), grpctest.StringField(list, badJob)...)
	firstName := number(&jobboardv2.ListDriversRequest{}, "first_name")
	intakeC := jobboardv2.NewDriverIntakeServiceClient(conn)
	internal := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer internal-secret")
	for _, tt := range []struct {
		name string
		call func() error
		want string
	}{
		{"a filter", func() error {
			_, err := drivers.ListDrivers(ctx, &jobboardv2.ListDriversRequest{State: "ZZ"})
			return err
		}, `state | "ZZ" is not valid; allowed: the two-letter code of a US state or DC`},
		{"a filter the core names otherwise", func() error {
			_, err := drivers.ListDrivers(ctx, &jobboardv2.ListDriversRequest{LivesWithinRadiusMiles: 600, LivesWithinZip: "75001"})
			return err
		}, `lives_within_radius_miles | "600" is not valid; allowed: a whole number of miles from 1 to 500`},
		{"text that is not UTF-8", func() error {
			return listDriversRaw(ctx, conn, grpctest.StringField(firstName, []byte("Ann\xc3")))
		}, `first_name | "Ann\xc3" is not valid; values must be UTF-8 text without NUL characters`},
		{"a field of the second job", func() error {
			var out []byte
			return conn.Invoke(ctx, jobboardv2.JobService_PostJobs_FullMethodName, &posts, &out, grpc.ForceCodecV2(grpctest.RawCodec{}))
		}, `jobs[1].title | "Dr\xffver" is not valid; values must be UTF-8 text without NUL characters`},
		{"a page size", func() error {
			_, err := jobs.ListJobs(ctx, &jobboardv2.ListJobsRequest{PageSize: -1})
			return err
		}, "page_size | -1 is negative; a page holds 1-1000 jobs"},
		{"typed fields of a batch's application", func() error {
			good := patApplication("pat@example.com", "1 Alpha Rd", "Omaha", "NE", "68102", "none", "AlphaCo", "2026-01-10T10:00:00Z")
			bad := patApplication("kim@example.com", "1 Alpha Rd", "Omaha", "NE", "68102", "none", "AlphaCo", "2026-01-10T10:00:00Z")
			bad.DriverType, bad.Sent = 9, nil
			bad.Certifications = []jobboardv2.Certification{jobboardv2.Certification_CERTIFICATION_UNSPECIFIED}
			_, err := intakeC.SubmitApplications(internal, &jobboardv2.SubmitApplicationsRequest{
				AccountId: f.a.AccountID, Applications: []*jobboardv2.DriverApplication{good, bad}})
			return err
		}, `applications[1].driver_type | "9" is not one of Owner Operator, Company Driver, Student` + "\n" +
			`applications[1].certifications | "CERTIFICATION_UNSPECIFIED" is not one of T, H, N, X` + "\n" +
			`applications[1].sent | is required`},
		{"one application's certification", func() error {
			app := patApplication("pat@example.com", "1 Alpha Rd", "Omaha", "NE", "68102", "none", "AlphaCo", "2026-01-10T10:00:00Z")
			app.Certifications = append(app.Certifications, 7)
			_, err := intakeC.SubmitApplication(internal, &jobboardv2.SubmitApplicationRequest{AccountId: f.a.AccountID, Application: app})
			return err
		}, `application.certifications | "7" is not one of T, H, N, X`},
		{"an application without an account", func() error {
			app := patApplication("pat@example.com", "1 Alpha Rd", "Omaha", "NE", "68102", "none", "AlphaCo", "2026-01-10T10:00:00Z")
			_, err := intakeC.SubmitApplication(internal, &jobboardv2.SubmitApplicationRequest{Application: app})
			return err
		}, `account_id | is required`},
		{"an x-account-id", func() error {
			internal := metadata.AppendToOutgoingContext(context.Background(),
				"authorization", "Bearer internal-secret", "x-account-id", "abc")
			_, err := drivers.ListDrivers(internal, &jobboardv2.ListDriversRequest{})
			return err
		}, `x-account-id | "abc" is not an account id (a positive integer)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if status.Code(err) != codes.InvalidArgument || strings.Join(grpctest.Violations(err), "\n") != tt.want {
				t.Errorf("got %v with violations %q, want InvalidArgument with %q", err, grpctest.Violations(err), tt.want)
			}
		})
	}
	t.Run("a rate limit", func(t *testing.T) {
		var err error
		for range 30 {
			if _, err = jobs.ListJobs(ctx, &jobboardv2.ListJobsRequest{}); status.Code(err) == codes.ResourceExhausted {
				break
			}
		}
		var retry *errdetails.RetryInfo
		for _, d := range status.Convert(err).Details() {
			if r, ok := d.(*errdetails.RetryInfo); ok {
				retry = r
			}
		}
		if status.Code(err) != codes.ResourceExhausted || retry.GetRetryDelay().AsDuration() <= 0 {
			t.Errorf("over the rate limit: %v with details %v, want ResourceExhausted with a RetryInfo", err, status.Convert(err).Details())
		}
	})
}
