// Command intake-client shows how one of the board's internal services
// uses the Go client package, github.com/truckjobs/jobboard/jobboardclient:
// it dials with the internal token, acts for an account, submits a batch of
// driver applications with DriverIntakeService.SubmitApplications, and
// lists the account's drivers with DriverService.ListDrivers.
//
//	JOBBOARD_INTERNAL_TOKEN=$(cat .data/internal-token) go -C examples/intake-client run . -addr localhost:9090 -account 1
//
// A local server (make run) speaks plaintext; against a deployed one give
// -cacert (or -tls for the system's roots), and -cert and -key to
// authenticate with a client certificate. Running it again stores nothing
// new: the batch is the same applications, matched by e-mail.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/jobboardclient"
)

func main() {
	addr := flag.String("addr", "localhost:9090", "gRPC address of the job board")
	account := flag.Int64("account", 1, "the account the applications are sent to")
	useTLS := flag.Bool("tls", false, "connect with TLS, verifying the server against the system's roots")
	caFile := flag.String("cacert", "", "PEM file of the CA the server's certificate chains to (implies TLS)")
	certFile := flag.String("cert", "", "client certificate (PEM) to authenticate with (implies TLS)")
	keyFile := flag.String("key", "", "the client certificate's key (PEM)")
	flag.Parse()
	o := jobboardclient.Options{
		Plaintext:     !*useTLS && *caFile == "" && *certFile == "",
		CAFile:        *caFile,
		CertFile:      *certFile,
		KeyFile:       *keyFile,
		InternalToken: os.Getenv("JOBBOARD_INTERNAL_TOKEN"),
		WaitConnected: true,
	}
	if o.InternalToken == "" && o.CertFile == "" {
		fmt.Fprintln(os.Stderr, "intake-client: no credentials: set JOBBOARD_INTERNAL_TOKEN or pass -cert and -key")
		os.Exit(2)
	}
	if err := run(*addr, *account, o); err != nil {
		fmt.Fprintln(os.Stderr, "intake-client:", err)
		os.Exit(1)
	}
}

func run(addr string, account int64, o jobboardclient.Options) error {
	// A deadline bounds the connection and every call, retries included.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := jobboardclient.Dial(ctx, addr, o)
	if err != nil {
		return err
	}
	defer conn.Close()
	// Internal callers name the account every call acts for.
	ctx = jobboardclient.ActFor(ctx, account)

	resp, err := conn.Intake.SubmitApplications(ctx, &jobboardv2.SubmitApplicationsRequest{Applications: applications()})
	if err != nil {
		// InvalidArgument names each problem by index and field, such as
		// applications[2].email; nothing of the batch was stored.
		return fmt.Errorf("SubmitApplications: %s: %s", status.Code(err), status.Convert(err).Message())
	}
	fmt.Printf("SubmitApplications: %d applications stored, driver ids %v\n", len(resp.GetDriverIds()), resp.GetDriverIds())

	list, err := conn.Drivers.ListDrivers(ctx, &jobboardv2.ListDriversRequest{LastName: "Intake"})
	if err != nil {
		return fmt.Errorf("ListDrivers: %s: %s", status.Code(err), status.Convert(err).Message())
	}
	fmt.Printf("ListDrivers: %d drivers named Intake\n", len(list.GetDrivers()))
	for _, d := range list.GetDrivers() {
		fmt.Printf("  %d\t%s %s\t%s\t%s, %s\tsent %s\n", d.GetId(), d.GetFirstName(), d.GetLastName(), d.GetEmail(),
			d.GetCity(), d.GetState(), d.GetSent().AsTime().Format(time.RFC3339))
	}
	return nil
}

// applications are three drivers as a migration from another board would
// send them; a real one sends up to 1,000 a call. They are sent now: the
// board refuses one sent more than 5 minutes ahead of its clock.
func applications() []*jobboardv2.DriverApplication {
	sent := timestamppb.New(time.Now().UTC().Truncate(time.Second))
	driver := func(first, email, city, state, zip, phone string) *jobboardv2.DriverApplication {
		return &jobboardv2.DriverApplication{FirstName: first, LastName: "Intake", Address: "100 Terminal Rd",
			City: city, State: state, Zip: zip, Email: email, Phone: phone, DriverType: jobboardv2.DriverType_DRIVER_TYPE_COMPANY_DRIVER,
			Experience: "5", Sent: sent,
			Certifications: []jobboardv2.Certification{jobboardv2.Certification_CERTIFICATION_DOUBLES_TRIPLES,
				jobboardv2.Certification_CERTIFICATION_HAZMAT}}
	}
	return []*jobboardv2.DriverApplication{
		driver("Rosa", "rosa.intake@example.com", "Memphis", "TN", "38103", "901-555-0110"),
		driver("Luis", "luis.intake@example.com", "Laredo", "TX", "78040", "956-555-0111"),
		driver("Amy", "amy.intake@example.com", "Joliet", "IL", "60432", "815-555-0112"),
	}
}
