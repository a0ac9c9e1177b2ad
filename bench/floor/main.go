// Command floor is the floor of the job retrieve scenario: the least a Go
// server can do to answer GET /jobs/{id} from PostgreSQL. It runs the query
// the service runs, with net/http and database/sql, and writes the row as
// JSON with encoding/json; no authentication, no gateway, no gRPC.
//
// It also serves the least a grpc-go server can do for the same call,
// jobboard.v2.JobService/GetJob with the same query and no interceptors,
// so that gRPC can be compared with a floor loaded by the same client (h2load).
//
//	floor -addr 127.0.0.1:0 -grpc-addr 127.0.0.1:0 -database-url URL -account ID [-debug-addr 127.0.0.1:0]
//
// It prints "HTTP_ADDR GRPC_ADDR" on its first line once it listens, and
// DEBUG_ADDR after them with -debug-addr: Go's profiler, on a listener of
// its own, so the bench can set the floor's CPU beside the service's.
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"strconv"

	"github.com/lib/pq"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/truckjobs/jobboard/domain"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/server/natural"
)

// The service's query for one job (server/store/jobs.go): the same row and
// columns, but for the pay, which the floor reads as the text REST shows
// ("0.55") where the service reads cents and writes them back as that text.
const jobQuery = `SELECT id, reference_number, title, city, state, postal_code, driver_type, preference,
	freight_type, pay_amount_min::text, pay_amount_max::text, pay_frequency, employment_type, route_type,
	description, requirements, twic_only, license_class, to_char(posted_on, 'YYYY-MM-DD')
	FROM jobs WHERE account_id = $1 AND id = $2 AND deleted_at IS NULL`

type job struct {
	ID              int64   `json:"id"`
	Date            string  `json:"date"`
	ReferenceNumber string  `json:"referenceNumber"`
	Title           string  `json:"title"`
	City            *string `json:"city"`
	State           string  `json:"state"`
	PostalCode      *string `json:"postalCode"`
	DriverType      string  `json:"driverType"`
	Preference      *string `json:"preference"`
	FreightType     string  `json:"freightType"`
	PayAmountMin    *string `json:"payAmountMin"`
	PayAmountMax    *string `json:"payAmountMax"`
	PayFrequency    *string `json:"payFrequency"`
	EmploymentType  *string `json:"employmentType"`
	RouteType       *string `json:"routeType"`
	Description     string  `json:"description"`
	Requirements    *string `json:"requirements"`
	TwicOnly        bool    `json:"twicOnly"`
	LicenseClass    *string `json:"licenseClass"`
}

// readJob runs the query for one job.
func readJob(ctx context.Context, stmt *sql.Stmt, account, id int64) (job, []string, []string, error) {
	var j job
	var employment, route pq.StringArray
	err := stmt.QueryRowContext(ctx, account, id).Scan(&j.ID, &j.ReferenceNumber, &j.Title,
		&j.City, &j.State, &j.PostalCode, &j.DriverType, &j.Preference, &j.FreightType, &j.PayAmountMin,
		&j.PayAmountMax, &j.PayFrequency, &employment, &route, &j.Description, &j.Requirements,
		&j.TwicOnly, &j.LicenseClass, &j.Date)
	return j, employment, route, err
}

// grpcFloor answers GetJob and nothing else.
type grpcFloor struct {
	jobboardv2.UnimplementedJobServiceServer
	stmt    *sql.Stmt
	account int64
}

func (f *grpcFloor) GetJob(ctx context.Context, req *jobboardv2.GetJobRequest) (*jobboardv2.GetJobResponse, error) {
	j, employment, route, err := readJob(ctx, f.stmt, f.account, req.GetId())
	if errors.Is(err, sql.ErrNoRows) {
		return nil, status.Error(codes.NotFound, "not found")
	}
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	out := &jobboardv2.Job{
		Id: j.ID, Date: j.Date, ReferenceNumber: j.ReferenceNumber, Title: j.Title, City: j.City,
		State: j.State, PostalCode: j.PostalCode, DriverType: enumOf(natural.DriverTypes, &j.DriverType),
		Preference: enumOf(natural.Preferences, j.Preference), FreightType: enumOf(natural.FreightTypes, &j.FreightType),
		PayFrequency: enumOf(natural.PayFrequencies, j.PayFrequency), Description: j.Description,
		Requirements: j.Requirements, TwicOnly: j.TwicOnly, LicenseClass: enumOf(natural.LicenseClasses, j.LicenseClass),
	}
	for _, e := range employment {
		out.EmploymentType = append(out.EmploymentType, enumOf(natural.EmploymentTypes, &e))
	}
	for _, r := range route {
		out.RouteType = append(out.RouteType, enumOf(natural.RouteTypes, &r))
	}
	if j.PayAmountMin != nil {
		out.PayAmountMinCents = proto.Int64(int64(domain.ParseCents(*j.PayAmountMin)))
	}
	if j.PayAmountMax != nil {
		out.PayAmountMaxCents = proto.Int64(int64(domain.ParseCents(*j.PayAmountMax)))
	}
	return &jobboardv2.GetJobResponse{Job: out}, nil
}

// enumOf is the enum value of an optional label.
func enumOf[E ~int32](v natural.Vocabulary[E], label *string) E {
	if label == nil {
		return 0
	}
	e, _ := v.Value(*label)
	return e
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	grpcAddr := flag.String("grpc-addr", "127.0.0.1:0", "gRPC listen address")
	dbURL := flag.String("database-url", "", "PostgreSQL URL")
	account := flag.Int64("account", 0, "the account whose jobs are served")
	debugAddr := flag.String("debug-addr", "", "listen address of Go's profiler; empty: none")
	flag.Parse()
	db, err := sql.Open("postgres", *dbURL)
	if err != nil {
		log.Fatal(err)
	}
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(32)
	// Prepared: one round trip a query, planned once per connection, the
	// least the database can do for this read, as the service does on a
	// direct connection. Through PgBouncer in transaction mode the service
	// sends it unprepared in one batch instead, at the cost of a parse and
	// a plan each time (bench scenario 8).
	stmt, err := db.Prepare(jobQuery)
	if err != nil {
		log.Fatal(err)
	}
	// A mux of its own: importing net/http/pprof registers the profiler on
	// the default one.
	jobs := http.NewServeMux()
	jobs.HandleFunc("GET /jobs/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
		if err != nil {
			http.Error(w, "bad id", http.StatusBadRequest)
			return
		}
		j, employment, route, err := readJob(r.Context(), stmt, *account, id)
		if errors.Is(err, sql.ErrNoRows) {
			http.NotFound(w, r)
			return
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		// REST shows the first value of each list, as the service does.
		if len(employment) > 0 {
			j.EmploymentType = &employment[0]
		}
		if len(route) > 0 {
			j.RouteType = &route[0]
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_ = json.NewEncoder(w).Encode(j)
	})
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	gl, err := net.Listen("tcp", *grpcAddr)
	if err != nil {
		log.Fatal(err)
	}
	gs := grpc.NewServer()
	jobboardv2.RegisterJobServiceServer(gs, &grpcFloor{stmt: stmt, account: *account})
	go func() { log.Fatal(gs.Serve(gl)) }()
	addrs := []any{l.Addr().String(), gl.Addr().String()}
	if *debugAddr != "" {
		dl, err := net.Listen("tcp", *debugAddr)
		if err != nil {
			log.Fatal(err)
		}
		debug := http.NewServeMux()
		debug.HandleFunc("/debug/pprof/profile", pprof.Profile)
		go func() { log.Fatal(http.Serve(dl, debug)) }()
		addrs = append(addrs, dl.Addr().String())
	}
	// The harness reads the addresses it should call from the first line.
	fmt.Fprintln(os.Stdout, addrs...)
	log.Fatal(http.Serve(l, jobs))
}
