package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
)

// batchApplicant is the i-th of a batch of valid applications; tag keeps
// the e-mail addresses of different batches apart.
func batchApplicant(tag string, i int) *jobboardv2.DriverApplication {
	return &jobboardv2.DriverApplication{FirstName: "Bea", LastName: fmt.Sprintf("Batch%d", i), Address: "9 Yard Rd",
		City: "Joliet", State: "IL", Zip: "60432", Email: fmt.Sprintf("bea.%s.%d@example.com", tag, i),
		Phone: "815-555-0100", DriverType: jobboardv2.DriverType_DRIVER_TYPE_COMPANY_DRIVER, Experience: "3",
		Sent:           timestamppb.New(time.Date(2026, 10, 1, 8, 0, 0, 0, time.UTC)),
		Certifications: []jobboardv2.Certification{jobboardv2.Certification_CERTIFICATION_HAZMAT}}
}

func batchOf(tag string, n int) []*jobboardv2.DriverApplication {
	apps := make([]*jobboardv2.DriverApplication, n)
	for i := range apps {
		apps[i] = batchApplicant(tag, i)
	}
	return apps
}

// TestSubmitApplications: the batch intake over a real connection to the
// server on a real database: a batch is stored and seen by its account
// only, a retried batch stores nothing twice, a batch with one bad
// application or too many applications stores nothing, and only internal
// callers may send one.
func TestSubmitApplications(t *testing.T) {
	env := migratedEnv(t)
	a, b := createAccount(t, env, "Batch Carrier A"), createAccount(t, env, "Batch Carrier B")
	svc := startService(t, env)
	conn := svc.grpcConn()
	intake := jobboardv2.NewDriverIntakeServiceClient(conn)
	drivers := jobboardv2.NewDriverServiceClient(conn)
	internal := withKey(internalToken)
	total := func(t *testing.T, key string) int64 {
		t.Helper()
		list, err := drivers.ListDrivers(withKey(key), &jobboardv2.ListDriversRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return list.TotalSize
	}

	var ids []int64
	t.Run("stored for its account only", func(t *testing.T) {
		resp, err := intake.SubmitApplications(internal, &jobboardv2.SubmitApplicationsRequest{AccountId: a.ID, Applications: batchOf("a", 40)})
		if err != nil || len(resp.DriverIds) != 40 {
			t.Fatalf("SubmitApplications: %v %v", resp, err)
		}
		ids = resp.DriverIds
		if n := total(t, a.APIKey); n != 40 {
			t.Errorf("account A lists %d drivers, want 40", n)
		}
		if n := total(t, b.APIKey); n != 0 {
			t.Errorf("account B lists %d drivers, want 0", n)
		}
		got, err := drivers.GetDriver(withKey(a.APIKey), &jobboardv2.GetDriverRequest{Id: ids[7]})
		if err != nil || got.Driver.LastName != "Batch7" || got.Driver.Email != "bea.a.7@example.com" || !slices.Equal(got.Driver.Certifications, []jobboardv2.Certification{jobboardv2.Certification_CERTIFICATION_HAZMAT}) {
			t.Errorf("GetDriver of the 8th: %v %v", got, err)
		}
		if _, err := drivers.GetDriver(withKey(b.APIKey), &jobboardv2.GetDriverRequest{Id: ids[7]}); status.Code(err) != codes.NotFound {
			t.Errorf("GetDriver as B: %v, want NotFound", err)
		}
	})

	t.Run("a retried batch stores nothing twice", func(t *testing.T) {
		resp, err := intake.SubmitApplications(internal, &jobboardv2.SubmitApplicationsRequest{AccountId: a.ID, Applications: batchOf("a", 40)})
		if err != nil || !slices.Equal(resp.GetDriverIds(), ids) {
			t.Fatalf("the same batch again: %v %v, want the same ids %v", resp, err, ids)
		}
		if n := total(t, a.APIKey); n != 40 {
			t.Errorf("account A lists %d drivers after the retry, want 40", n)
		}
	})

	t.Run("one bad application stores nothing", func(t *testing.T) {
		apps := batchOf("bad", 40)
		apps[12].Email = "x"
		apps[30].Zip = "6043"
		_, err := intake.SubmitApplications(internal, &jobboardv2.SubmitApplicationsRequest{AccountId: a.ID, Applications: apps})
		msg := status.Convert(err).Message()
		if status.Code(err) != codes.InvalidArgument ||
			msg != `applications[12].email: "x" is not an e-mail address; applications[30].zip: "6043" is not a ZIP code (12345 or 12345-6789)` {
			t.Errorf("got %v, want InvalidArgument naming applications[12].email and applications[30].zip", err)
		}
		apps = batchOf("bad", 40)
		apps[3].JobApplications = []*jobboardv2.JobApplicationInput{{Reference: "NOPE"}}
		_, err = intake.SubmitApplications(internal, &jobboardv2.SubmitApplicationsRequest{AccountId: a.ID, Applications: apps})
		if want := `applications[3].job_applications[0].reference: "NOPE" is not the reference number of one of the account's jobs`; status.Code(err) != codes.InvalidArgument || status.Convert(err).Message() != want {
			t.Errorf("unknown job: %v, want %q", err, want)
		}
		if n := total(t, a.APIKey); n != 40 {
			t.Errorf("account A lists %d drivers, want the 40 of before", n)
		}
	})

	t.Run("too many or none refused", func(t *testing.T) {
		_, err := intake.SubmitApplications(internal, &jobboardv2.SubmitApplicationsRequest{AccountId: a.ID, Applications: batchOf("many", 1001)})
		if status.Code(err) != codes.InvalidArgument || !strings.HasPrefix(status.Convert(err).Message(), "applications: holds 1001 applications; one call takes at most 1000") {
			t.Errorf("1,001 applications: %v", err)
		}
		_, err = intake.SubmitApplications(internal, &jobboardv2.SubmitApplicationsRequest{AccountId: a.ID})
		if status.Code(err) != codes.InvalidArgument || !strings.HasPrefix(status.Convert(err).Message(), "applications: is required") {
			t.Errorf("no applications: %v", err)
		}
		if n := total(t, a.APIKey); n != 40 {
			t.Errorf("account A lists %d drivers, want the 40 of before", n)
		}
	})

	t.Run("x-account-id", func(t *testing.T) {
		forB := metadata.AppendToOutgoingContext(internal, "x-account-id", fmt.Sprint(b.ID))
		_, err := intake.SubmitApplications(forB, &jobboardv2.SubmitApplicationsRequest{AccountId: a.ID, Applications: batchOf("b", 2)})
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("account_id A with x-account-id B: %v, want InvalidArgument", err)
		}
		if _, err := intake.SubmitApplications(forB, &jobboardv2.SubmitApplicationsRequest{Applications: batchOf("b", 2)}); err != nil {
			t.Errorf("x-account-id B alone: %v", err)
		}
		if n := total(t, b.APIKey); n != 2 {
			t.Errorf("account B lists %d drivers, want 2", n)
		}
	})

	t.Run("the size limit is 16 MiB", func(t *testing.T) {
		// 1,000 applications of some 2.2 KB: over the 1 MiB of other
		// methods, within SubmitApplications' own limit.
		apps := batchOf("large", 1000)
		for _, app := range apps { // two fields near their 1,000 characters
			app.FreightExperience = new(strings.Repeat("Flatbed, step deck, oversize. ", 33))
			app.FreightPreferences = new(strings.Repeat("Reefer, tanker, dry van, LTL. ", 33))
		}
		forB := metadata.AppendToOutgoingContext(internal, "x-account-id", fmt.Sprint(b.ID))
		if _, err := intake.SubmitApplications(forB, &jobboardv2.SubmitApplicationsRequest{Applications: apps}); err != nil {
			t.Errorf("1,000 applications of 2.2 KB: %v", err)
		}
		for _, app := range apps {
			*app.FreightExperience = strings.Repeat("x", 17_000)
		}
		_, err := intake.SubmitApplications(forB, &jobboardv2.SubmitApplicationsRequest{Applications: apps})
		if status.Code(err) != codes.ResourceExhausted || !strings.HasPrefix(status.Convert(err).Message(), "SubmitApplications takes at most 16 MiB") {
			t.Errorf("1,000 applications of 17 KB: %v, want ResourceExhausted naming 16 MiB", err)
		}
	})

	t.Run("only internal callers", func(t *testing.T) {
		req := &jobboardv2.SubmitApplicationsRequest{AccountId: a.ID, Applications: batchOf("key", 2)}
		if _, err := intake.SubmitApplications(withKey(a.APIKey), req); status.Code(err) != codes.PermissionDenied {
			t.Errorf("an employer key: %v, want PermissionDenied", err)
		}
		if _, err := intake.SubmitApplications(context.Background(), req); status.Code(err) != codes.Unauthenticated {
			t.Errorf("no credentials: %v, want Unauthenticated", err)
		}
		if n := total(t, a.APIKey); n != 40 {
			t.Errorf("account A lists %d drivers, want the 40 of before", n)
		}
	})
}
