package gateway_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/truckjobs/jobboard/domain"
	"github.com/truckjobs/jobboard/gateway"
	"github.com/truckjobs/jobboard/gateway/render"
	"github.com/truckjobs/jobboard/internal/metrics"
	"github.com/truckjobs/jobboard/internal/tracing"
	"github.com/truckjobs/jobboard/server"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/store"
)

// BenchmarkGetJobREST reads one job through the REST gateway in-process,
// bare and wrapped as the server serves it (tracing when on, the access
// log written as JSON, the request metrics): its allocs/op are the
// per-request cost of the HTTP path, free of a load generator's noise.
func BenchmarkGetJobREST(b *testing.B) {
	a := newAPI(b)
	gw := servedGateway(b, a)
	a.post(doc{{"referenceNumber", "R1"}, {"title", "Regional Driver"}, {"state", "TX"},
		{"driverType", "Company Driver"}, {"freightType", "Dry Van"}, {"city", "Dallas"}, {"postalCode", "75201"},
		{"payAmountMin", "0.55"}, {"payAmountMax", "0.68"}, {"payFrequency", "Per Mile"},
		{"employmentType", []string{"Full-Time"}}, {"routeType", []string{"Regional"}},
		{"description", "<p>Home <b>every weekend</b>.</p>"}, {"twicOnly", false}, {"licenseClass", "A"}})
	var id int64
	if err := a.store.DB().Get(&id, `SELECT id FROM jobs WHERE account_id = $1`, a.acct); err != nil {
		b.Fatal(err)
	}
	path := "/api/v2.0/jobs.json/" + strconv.FormatInt(id, 10)
	for _, c := range []struct {
		name    string
		handler http.Handler
	}{
		{"gateway", gw},
		{"served", served(b, gw)},
	} {
		b.Run(c.name, func(b *testing.B) {
			get := func() {
				req := httptest.NewRequest(http.MethodGet, path, nil)
				req.SetBasicAuth(a.key, "")
				rec := httptest.NewRecorder()
				c.handler.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatal(rec.Code, rec.Body.String())
				}
			}
			get()
			for b.Loop() {
				get()
			}
		})
	}
}

// servedGateway is a gateway on services of its own over a's database,
// without the tests' OpenAPI check of every answer: the server remembers
// keys in use (WatchKeys), and so does this gateway.
func servedGateway(b *testing.B, a *api) http.Handler {
	svcs, err := server.NewServices(a.store, server.Config{RenderCallback: render.JSON})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	wait, err := svcs.Auth.WatchKeys(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cancel(); wait() })
	gw, err := gateway.New(ctx, gateway.Config{Jobs: svcs.Jobs, Drivers: svcs.Drivers, Imports: svcs.Imports,
		Webhooks: svcs.Webhooks, Events: svcs.Events, Authenticate: svcs.Auth.AuthenticateKey, Boundary: call.Boundary})
	if err != nil {
		b.Fatal(err)
	}
	return gw
}

// served wraps gw as the server serves it: tracing when on, the access log
// written as JSON (here to nowhere, where the server's goes to stderr),
// the request metrics.
func served(b *testing.B, gw http.Handler) http.Handler {
	prev := slog.Default()
	b.Cleanup(func() { slog.SetDefault(prev) })
	slog.SetDefault(slog.New(tracing.LogHandler(slog.NewJSONHandler(io.Discard, nil))))
	return tracing.HTTPHandler(gateway.AccessLog(gw, metrics.New().ObserveHTTP))
}

// BenchmarkListJobsREST reads an account's whole list of 10,000 jobs as
// jobs.json, served: bench scenario 3's request without the network.
// 51.6-53.3 ms, where BenchmarkListJobsSelect took 36.2-39.4 ms in the
// same run.
func BenchmarkListJobsREST(b *testing.B) {
	a, h := listedJobs(b)
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodGet, "/api/v2.0/jobs.json", nil)
		req.SetBasicAuth(a.key, "")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatal(rec.Code, rec.Body.String())
		}
	}
}

// BenchmarkListJobsSelect is BenchmarkListJobsREST's floor: the same jobs
// selected by the store, as bench scenario 3 takes it.
func BenchmarkListJobsSelect(b *testing.B) {
	a, _ := listedJobs(b)
	b.ReportAllocs()
	for b.Loop() {
		if jobs, err := a.store.ListJobs(context.Background(), a.acct); err != nil || len(jobs) != 10_000 {
			b.Fatal(len(jobs), err)
		}
	}
}

// listedJobs is an account of 10,000 jobs, and the gateway that serves it.
func listedJobs(b *testing.B) (*api, http.Handler) {
	a := newAPI(b)
	h := served(b, servedGateway(b, a))
	ctx := context.Background()
	for chunk := range 10 {
		jobs := make([]store.JobFields, 1000)
		for i := range jobs {
			ref := fmt.Sprintf("L%05d", chunk*1000+i)
			jobs[i] = store.JobFields{ReferenceNumber: ref, Title: "Regional Driver " + ref, City: new("Dallas"),
				State: "TX", PostalCode: new("75201"), DriverType: "Company Driver", FreightType: "Dry Van",
				Description:  "<p>Home <b>every weekend</b>. Late-model trucks, paid orientation, weekly direct deposit.</p><ul><li>No touch</li></ul>",
				Requirements: new("<ul><li>Class A CDL</li></ul>"),
				PayMin:       new(domain.Cents(55)), PayMax: new(domain.Cents(68)), PayFrequency: new(domain.PayFrequency("Per Mile")),
				EmploymentType: []domain.EmploymentType{"Full-Time"}, RouteType: []domain.RouteType{"Regional"}}
		}
		if _, err := a.store.UpsertJobs(ctx, a.acct, jobs, store.UpsertOptions{MaxActive: 20_000, Today: fixedNow}); err != nil {
			b.Fatal(err)
		}
	}
	// Statistics that know the account's jobs, as autovacuum leaves them:
	// without, the pages are planned as a sort of every job after each.
	if _, err := a.store.DB().ExecContext(ctx, "ANALYZE jobs"); err != nil {
		b.Fatal(err)
	}
	return a, h
}
