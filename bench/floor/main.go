// Command floor is the floor of the job retrieve scenario: the least a Go
// server can do to answer GET /jobs/{id} from PostgreSQL. It runs the query
// the service runs, with net/http and database/sql, and writes the row as
// JSON with encoding/json; no authentication, no gateway, no gRPC.
//
//	floor -addr 127.0.0.1:0 -database-url URL -account ID
package main

import (
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"

	"github.com/lib/pq"
)

// The service's query for one job (server/store/jobs.go), column for column.
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

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	dbURL := flag.String("database-url", "", "PostgreSQL URL")
	account := flag.Int64("account", 0, "the account whose jobs are served")
	flag.Parse()
	db, err := sql.Open("postgres", *dbURL)
	if err != nil {
		log.Fatal(err)
	}
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(32)
	// Prepared, as the service prepares its reads: one round trip a query.
	stmt, err := db.Prepare(jobQuery)
	if err != nil {
		log.Fatal(err)
	}
	http.HandleFunc("GET /jobs/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
		if err != nil {
			http.Error(w, "bad id", http.StatusBadRequest)
			return
		}
		var j job
		var employment, route pq.StringArray
		err = stmt.QueryRowContext(r.Context(), *account, id).Scan(&j.ID, &j.ReferenceNumber, &j.Title,
			&j.City, &j.State, &j.PostalCode, &j.DriverType, &j.Preference, &j.FreightType, &j.PayAmountMin,
			&j.PayAmountMax, &j.PayFrequency, &employment, &route, &j.Description, &j.Requirements,
			&j.TwicOnly, &j.LicenseClass, &j.Date)
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
	// The harness reads the address it should call from the first line.
	fmt.Fprintln(os.Stdout, l.Addr().String())
	log.Fatal(http.Serve(l, nil))
}
