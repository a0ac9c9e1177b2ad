package gateway_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/truckjobs/jobboard/gateway"
	"github.com/truckjobs/jobboard/gateway/render"
	"github.com/truckjobs/jobboard/internal/metrics"
	"github.com/truckjobs/jobboard/internal/tracing"
	"github.com/truckjobs/jobboard/server"
	"github.com/truckjobs/jobboard/server/call"
)

// BenchmarkGetJobREST reads one job through the REST gateway in-process,
// bare and wrapped as the server serves it (tracing when on, the access
// log written as JSON, the request metrics): its allocs/op are the
// per-request cost of the HTTP path, free of a load generator's noise.
func BenchmarkGetJobREST(b *testing.B) {
	a := newAPI(b)
	// The server remembers keys in use (WatchKeys); so does this gateway,
	// on services of its own over the same database.
	svcs, err := server.NewServices(a.store, server.Config{RenderCallback: render.JSON})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	wait, err := svcs.Auth.WatchKeys(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { cancel(); wait() }()
	gw, err := gateway.New(ctx, gateway.Config{Jobs: svcs.Jobs, Drivers: svcs.Drivers, Imports: svcs.Imports,
		Webhooks: svcs.Webhooks, Events: svcs.Events, Authenticate: svcs.Auth.AuthenticateKey, Boundary: call.Boundary})
	if err != nil {
		b.Fatal(err)
	}
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
	// The server's access log is JSON on stderr; here the same encoding
	// goes nowhere.
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(tracing.LogHandler(slog.NewJSONHandler(io.Discard, nil))))
	for _, c := range []struct {
		name    string
		handler http.Handler
	}{
		{"gateway", gw},
		{"served", tracing.HTTPHandler(gateway.AccessLog(gw, metrics.New().ObserveHTTP))},
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
