// Command grpc-client shows how an employer's system uses the job board's
// gRPC API: it posts one job with JobService.PostJobs, then lists the
// account's active jobs with JobService.ListJobs.
//
//	JOBBOARD_API_KEY=jb_live_... go -C examples/grpc-client run . -addr localhost:9090
//
// The API key may also be given with -key; the environment keeps it out of
// the process list and shell history.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
)

func main() {
	addr := flag.String("addr", "localhost:9090", "gRPC address of the job board")
	key := flag.String("key", os.Getenv("JOBBOARD_API_KEY"), "account API key (default $JOBBOARD_API_KEY)")
	useTLS := flag.Bool("tls", false, "connect with TLS, verifying the server against the system's roots (for anything but a local server)")
	ref := flag.String("ref", "GRPC100", "reference number of the job to post; posting it again updates the same job")
	flag.Parse()
	if *key == "" {
		fmt.Fprintln(os.Stderr, "grpc-client: no API key: set JOBBOARD_API_KEY or pass -key")
		os.Exit(2)
	}
	if err := run(*addr, *key, *useTLS, *ref); err != nil {
		fmt.Fprintln(os.Stderr, "grpc-client:", err)
		os.Exit(1)
	}
}

func run(addr, key string, useTLS bool, ref string) error {
	// A local development server (make run) speaks plaintext; a deployed one
	// sits behind TLS. The key is a bearer token, so never send it over
	// plaintext across a network.
	transport := insecure.NewCredentials()
	if useTLS {
		transport = credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12})
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(transport))
	if err != nil {
		return fmt.Errorf("connect to %s: %w", addr, err)
	}
	defer conn.Close()
	jobs := jobboardv2.NewJobServiceClient(conn)

	// Every call carries the key as `authorization: Bearer <key>` metadata;
	// it selects the account the call acts on. A deadline keeps a call from
	// hanging on an unreachable server.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+key)

	post, err := postJob(ctx, jobs, ref)
	if err != nil {
		return err
	}
	active, err := activeJobs(ctx, jobs)
	if err != nil {
		return err
	}
	printJobs(active)
	if post.GetErrors() > 0 {
		return errors.New("the job was not saved; see the problems above")
	}
	return nil
}

// postJob posts one sample job under ref and prints the summary.
func postJob(ctx context.Context, jobs jobboardv2.JobServiceClient, ref string) (*jobboardv2.PostJobsResponse, error) {
	// Fields have natural types: enums for the closed vocabularies, pay in
	// cents, a bool for twicOnly. The service still checks every rule (the
	// state code, the ZIP form, the HTML) and reports each problem in the
	// response. Optional text is a pointer, so proto.String wraps it.
	post, err := jobs.PostJobs(ctx, &jobboardv2.PostJobsRequest{Jobs: []*jobboardv2.JobInput{{
		ReferenceNumber:   ref,
		Title:             "Dedicated Dry Van Driver",
		City:              proto.String("Columbus"),
		State:             "OH",
		PostalCode:        proto.String("43215"),
		DriverType:        jobboardv2.DriverType_DRIVER_TYPE_COMPANY_DRIVER,
		FreightType:       jobboardv2.FreightType_FREIGHT_TYPE_DRY_VAN,
		PayAmountMinCents: proto.Int64(140000),
		PayAmountMaxCents: proto.Int64(165000),
		PayFrequency:      jobboardv2.PayFrequency_PAY_FREQUENCY_WEEKLY,
		EmploymentType:    []jobboardv2.EmploymentType{jobboardv2.EmploymentType_EMPLOYMENT_TYPE_FULL_TIME},
		RouteType:         []jobboardv2.RouteType{jobboardv2.RouteType_ROUTE_TYPE_DEDICATED},
		Description:       "<p>Home <b>every night</b>; no-touch freight.</p>",
		LicenseClass:      jobboardv2.LicenseClass_LICENSE_CLASS_A,
	}}})
	if err != nil {
		return nil, callError("PostJobs", err)
	}
	// A post with problems still succeeds as a call: the summary counts what
	// was saved and lists every problem, and only the jobs with a problem
	// were left out.
	fmt.Printf("PostJobs %s: added %d, updated %d, unchanged %d, errors %d\n",
		ref, post.GetAdded(), post.GetUpdated(), post.GetUnchanged(), post.GetErrors())
	em := post.GetErrorMessages()
	for _, list := range []*jobboardv2.ErrorList{em.GetMissingErrors(), em.GetInvalidErrors(), em.GetDuplicationErrors(), em.GetLimitErrors()} {
		for _, e := range list.GetErrors() {
			fmt.Printf("  problem: job %d: %s\n", e.GetIndex(), e.GetMessage())
		}
	}
	for _, v := range post.GetIgnoredValues() {
		fmt.Printf("  ignored: job %d: %s\n", v.GetIndex(), v.GetMessage())
	}
	return post, nil
}

// activeJobs lists the account's active jobs. The list comes a page at a
// time: follow next_page_token to the end.
func activeJobs(ctx context.Context, jobs jobboardv2.JobServiceClient) ([]*jobboardv2.Job, error) {
	var active []*jobboardv2.Job
	req := &jobboardv2.ListJobsRequest{PageSize: 500}
	for {
		page, err := jobs.ListJobs(ctx, req)
		if err != nil {
			return nil, callError("ListJobs", err)
		}
		active = append(active, page.GetJobs()...)
		if page.GetNextPageToken() == "" {
			return active, nil
		}
		req.PageToken = page.GetNextPageToken()
	}
}

func printJobs(active []*jobboardv2.Job) {
	fmt.Printf("ListJobs: %d active jobs\n", len(active))
	for _, j := range active {
		where := j.GetState()
		if j.City != nil { // optional fields are pointers: nil when not given
			where = j.GetCity() + ", " + where
		}
		fmt.Printf("  %d\t%s\t%s\t%s\n", j.GetId(), j.GetReferenceNumber(), j.GetTitle(), where)
	}
}

// callError names the failed call with its gRPC code: Unauthenticated is a
// missing or wrong key, InvalidArgument a request the service refused as a
// whole, Unavailable a server that cannot be reached (worth a retry).
func callError(method string, err error) error {
	st := status.Convert(err)
	return fmt.Errorf("%s: %s: %s", method, st.Code(), st.Message())
}
