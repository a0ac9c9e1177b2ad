package gateway_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/server/leads"

	"github.com/truckjobs/jobboard/gateway"
	"github.com/truckjobs/jobboard/gateway/render"
	"github.com/truckjobs/jobboard/server"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func TestMain(m *testing.M) { storetest.Main(m) }

// fixedNow dates every job the tests add.
var fixedNow = time.Date(2026, 11, 2, 14, 5, 9, 0, time.UTC)

// api is a REST gateway over a fresh database with one account.
type api struct {
	t       testing.TB
	handler http.Handler // the gateway, for calls without a network in between
	url     string
	key     string
	store   *store.Store
	acct    int64
	// outbox writes the events of applications stored directly.
	outbox *leads.Outbox
	// services are the services behind the gateway (startQueue runs their imports).
	services *server.Services
}

func newAPI(t testing.TB) *api {
	t.Helper()
	st := storetest.Store(t)
	svcs, err := server.NewServices(st, server.Config{Now: func() time.Time { return fixedNow }, RenderCallback: render.JSON})
	if err != nil {
		t.Fatal(err)
	}
	h, err := gateway.New(context.Background(), gateway.Config{Jobs: svcs.Jobs, Drivers: svcs.Drivers,
		Imports: svcs.Imports, Webhooks: svcs.Webhooks, Events: svcs.Events, Authenticate: svcs.Auth.AuthenticateKey, Boundary: call.Boundary})
	if err != nil {
		t.Fatal(err)
	}
	// Every JSON answer the tests get is checked against the OpenAPI
	// document, so that it tells what the service does.
	h = checkedByOpenAPI(t, h)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	creds := storetest.NewAccount(t, st, "Acme Freight")
	return &api{t: t, handler: h, url: srv.URL, key: creds.APIKey, store: st, acct: creds.AccountID, outbox: svcs.Outbox, services: svcs}
}

// do sends a request with the account's key as HTTP Basic user name.
func (a *api) do(method, path, body string) *http.Response {
	a.t.Helper()
	return a.doAs(a.key, method, path, body)
}

func (a *api) doAs(key, method, path, body string) *http.Response {
	a.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, a.url+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	if key != "" {
		req.SetBasicAuth(key, "")
	}
	if body != "" {
		// What curl -d sends: the suffix, not this, decides the format.
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	return resp
}

// post posts jobs in JSON and fails the test on any reported problem.
func (a *api) post(jobs ...doc) {
	a.t.Helper()
	resp := a.do("POST", "/api/v2.0/jobs.json", encodeJobs("json", jobs))
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var sum struct{ Errors int }
	if err := json.Unmarshal(body, &sum); err != nil || resp.StatusCode != 200 || sum.Errors != 0 {
		a.t.Fatalf("seed post: %d %s", resp.StatusCode, body)
	}
}

// doc is a job as a client writes it: ordered fields whose values are
// strings, numbers, booleans, nil or string lists.
type doc []field

type field struct {
	name  string
	value any
}

// encodeJobs writes docs as a JSON array or a jobs XML document.
func encodeJobs(format string, jobs []doc) string {
	var b strings.Builder
	if format == "json" {
		b.WriteString("[")
		for i, d := range jobs {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("{")
			for k, f := range d {
				if k > 0 {
					b.WriteString(",")
				}
				name, _ := json.Marshal(f.name)
				value, _ := json.Marshal(f.value)
				b.Write(name)
				b.WriteString(":")
				b.Write(value)
			}
			b.WriteString("}")
		}
		b.WriteString("]")
		return b.String()
	}
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n<jobs>")
	for _, d := range jobs {
		b.WriteString("<job>")
		for _, f := range d {
			switch v := f.value.(type) {
			case []string:
				for _, item := range v {
					fmt.Fprintf(&b, "<%s>%s</%s>", f.name, xmlEscape(item), f.name)
				}
			case nil:
				fmt.Fprintf(&b, "<%s/>", f.name)
			case bool:
				if v {
					fmt.Fprintf(&b, "<%s>1</%s>", f.name, f.name)
				} else {
					fmt.Fprintf(&b, "<%s/>", f.name)
				}
			case string:
				if f.name == "description" || f.name == "requirements" {
					fmt.Fprintf(&b, "<%s><![CDATA[%s]]></%s>", f.name, v, f.name)
				} else {
					fmt.Fprintf(&b, "<%s>%s</%s>", f.name, xmlEscape(v), f.name)
				}
			default:
				fmt.Fprintf(&b, "<%s>%v</%s>", f.name, v, f.name)
			}
		}
		b.WriteString("</job>")
	}
	b.WriteString("</jobs>")
	return b.String()
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// encodeList writes a delete body: a JSON array of values or a jobs XML
// document with one job element per value.
func encodeList(format string, values ...any) string {
	if format == "json" {
		b, _ := json.Marshal(values)
		return string(b)
	}
	var b strings.Builder
	b.WriteString("<jobs>")
	for _, v := range values {
		fmt.Fprintf(&b, "<job>%v</job>", v)
	}
	b.WriteString("</jobs>")
	return b.String()
}

// checkGolden compares status, content type and body with testdata/NAME.
func checkGolden(t *testing.T, name string, resp *http.Response) {
	t.Helper()
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("HTTP %d\nContent-Type: %s\n", resp.StatusCode, resp.Header.Get("Content-Type"))
	for _, h := range []string{"WWW-Authenticate", "Allow", "X-Total-Count", "Link", "X-Ignored-Parameters"} {
		if v := resp.Header.Get(h); v != "" {
			got += h + ": " + regexp.MustCompile(`127\.0\.0\.1:\d+`).ReplaceAllString(v, "HOST") + "\n"
		}
	}
	got += "\n" + string(body)
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./gateway -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
	for _, h := range []string{"Grpc-Metadata-Content-Type", "Grpc-Metadata-Authorization"} {
		if resp.Header.Get(h) != "" {
			t.Errorf("%s: response leaks header %s", name, h)
		}
	}
}
