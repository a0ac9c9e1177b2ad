package gateway_test

import (
	"context"
	"encoding/xml"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/truckjobs/jobboard/gen/openapiclient"
)

// TestGeneratedClient: a client generated from the OpenAPI document
// (gen/openapiclient, by oapi-codegen) calls every REST operation and
// decodes each answer into its generated types. The calls go to a server
// whose JSON answers checkedByOpenAPI also holds against the document, and
// the test fails if an operation of the client is not called here.
func TestGeneratedClient(t *testing.T) {
	a := newAPI(t)
	seedDrivers(a)
	c, err := openapiclient.NewClientWithResponses(a.url, openapiclient.WithRequestEditorFn(
		func(_ context.Context, r *http.Request) error { r.SetBasicAuth(a.key, ""); return nil }))
	if err != nil {
		t.Fatal(err)
	}
	r := &clientRun{t: t, c: c, ctx: context.Background(), called: map[string]bool{}}
	jobs := generatedJobs()
	r.jobsInJSON(jobs)
	r.jobsInXML()
	r.drivers()
	r.imports(jobs[:1])
	r.webhooksAndEvents()
	r.everyOperationCalled()
}

// clientRun is TestGeneratedClient's client, and the operations it called.
type clientRun struct {
	t      *testing.T
	c      *openapiclient.ClientWithResponses
	ctx    context.Context
	called map[string]bool
}

// check records that op was called and fails the test unless the answer
// had the status want and decoded into the generated type.
func (r *clientRun) check(op string, status, want int, decoded bool, body []byte) {
	r.t.Helper()
	r.called[op] = true
	if status != want || !decoded {
		r.t.Errorf("%s: %d (decoded: %v), want %d: %.300s", op, status, decoded, want, body)
	}
}

// checkXML is check for an XML answer, which the client hands over as
// bytes.
func (r *clientRun) checkXML(op string, status, want int, body []byte) {
	r.t.Helper()
	err := xml.Unmarshal(body, new(struct{}))
	r.check(op, status, want, err == nil, body)
}

func xmlBody(s string) io.Reader { return strings.NewReader(s) }

// generatedJobs are three jobs as the generated client's types hold them.
func generatedJobs() []openapiclient.V2JobInput {
	driverType, freight := openapiclient.V2JobInputDriverTypeCompanyDriver, openapiclient.V2JobInputFreightTypeDryVan
	return []openapiclient.V2JobInput{
		{ReferenceNumber: new("GEN1"), Title: new("Generated OTR"), State: new("OH"), DriverType: &driverType,
			FreightType: &freight, Description: new("<p>From the generated client.</p>"),
			EmploymentType: &[]openapiclient.V2JobInputEmploymentType{openapiclient.V2JobInputEmploymentTypeFullTime}},
		{ReferenceNumber: new("GEN2"), Title: new("Generated Local"), State: new("TX"), DriverType: &driverType,
			FreightType: &freight, Description: new("Local.")},
		{ReferenceNumber: new("GEN3"), Title: new("Generated Yard"), State: new("NE"), DriverType: &driverType,
			FreightType: &freight, Description: new("Yard.")},
	}
}

// jobsInJSON posts, lists, reads and deletes jobs at the .json paths.
func (r *clientRun) jobsInJSON(jobs []openapiclient.V2JobInput) {
	post, err := r.c.JobServicePostJobsWithResponse(r.ctx, jobs)
	if err != nil {
		r.t.Fatal(err)
	}
	r.check("JobServicePostJobs", post.StatusCode(), 200, post.JSON200 != nil && post.JSON200.Added == 3, post.Body)
	list, err := r.c.JobServiceListJobsWithResponse(r.ctx, &openapiclient.JobServiceListJobsParams{})
	if err != nil {
		r.t.Fatal(err)
	}
	r.check("JobServiceListJobs", list.StatusCode(), 200, list.JSON200 != nil && len(*list.JSON200) >= 3, list.Body)
	ids := map[string]int64{}
	if list.JSON200 != nil {
		for _, j := range *list.JSON200 {
			ids[j.ReferenceNumber] = j.Id
		}
	}
	page, err := r.c.JobServiceListJobsWithResponse(r.ctx, &openapiclient.JobServiceListJobsParams{PageSize: new(int32(1))})
	if err != nil {
		r.t.Fatal(err)
	}
	r.check("JobServiceListJobs", page.StatusCode(), 200, page.JSON200 != nil && len(*page.JSON200) == 1 &&
		strings.Contains(page.HTTPResponse.Header.Get("Link"), `rel="next"`), page.Body)
	get, err := r.c.JobServiceGetJobWithResponse(r.ctx, ids["GEN1"])
	if err != nil {
		r.t.Fatal(err)
	}
	r.check("JobServiceGetJob", get.StatusCode(), 200, get.JSON200 != nil && get.JSON200.ReferenceNumber == "GEN1" &&
		get.JSON200.EmploymentType != nil && *get.JSON200.EmploymentType == openapiclient.V2JobEmploymentTypeFullTime, get.Body)
	del, err := r.c.JobServiceDeleteJobWithResponse(r.ctx, strconv.FormatInt(ids["GEN1"], 10))
	if err != nil {
		r.t.Fatal(err)
	}
	r.check("JobServiceDeleteJob", del.StatusCode(), 200, del.JSON200 != nil && del.JSON200.Deleted == 1, del.Body)
	dels, err := r.c.JobServiceDeleteJobsWithResponse(r.ctx, []string{strconv.FormatInt(ids["GEN2"], 10), "999999"})
	if err != nil {
		r.t.Fatal(err)
	}
	r.check("JobServiceDeleteJobs", dels.StatusCode(), 200, dels.JSON200 != nil && dels.JSON200.Deleted == 1 &&
		len(dels.JSON200.ErrorMessages.MissingErrors.Errors) == 1, dels.Body)
	byRef, err := r.c.JobServiceDeleteJobByReferenceWithResponse(r.ctx, "GEN3")
	if err != nil {
		r.t.Fatal(err)
	}
	r.check("JobServiceDeleteJobByReference", byRef.StatusCode(), 200, byRef.JSON200 != nil && byRef.JSON200.Deleted == 1, byRef.Body)
	byRefs, err := r.c.JobServiceDeleteJobsByReferenceWithResponse(r.ctx, []string{"GEN1", "NOPE"})
	if err != nil {
		r.t.Fatal(err)
	}
	r.check("JobServiceDeleteJobsByReference", byRefs.StatusCode(), 200, byRefs.JSON200 != nil && byRefs.JSON200.Errors == 2, byRefs.Body)
}

// jobsInXML calls the same operations at the .xml paths, with XML bodies.
func (r *clientRun) jobsInXML() {
	const xmlJob = `<jobs><job><referenceNumber>X1</referenceNumber><title>XML job</title><state>OH</state>` +
		`<driverType>Company Driver</driverType><freightType>Box</freightType><description>x</description></job></jobs>`
	post2, err := r.c.JobServicePostJobs2WithBodyWithResponse(r.ctx, "application/xml", xmlBody(xmlJob))
	if err != nil {
		r.t.Fatal(err)
	}
	r.checkXML("JobServicePostJobs2", post2.StatusCode(), 200, post2.Body)
	list2, err := r.c.JobServiceListJobs2WithResponse(r.ctx, &openapiclient.JobServiceListJobs2Params{})
	if err != nil {
		r.t.Fatal(err)
	}
	r.checkXML("JobServiceListJobs2", list2.StatusCode(), 200, list2.Body)
	var x1 struct {
		Jobs []struct {
			ID              int64  `xml:"id"`
			ReferenceNumber string `xml:"referenceNumber"`
		} `xml:"job"`
	}
	_ = xml.Unmarshal(list2.Body, &x1)
	var x1Num int64
	for _, j := range x1.Jobs {
		if j.ReferenceNumber == "X1" {
			x1Num = j.ID
		}
	}
	x1ID := strconv.FormatInt(x1Num, 10)
	get2, err := r.c.JobServiceGetJob2WithResponse(r.ctx, x1Num)
	if err != nil {
		r.t.Fatal(err)
	}
	r.checkXML("JobServiceGetJob2", get2.StatusCode(), 200, get2.Body)
	del2, err := r.c.JobServiceDeleteJob2WithResponse(r.ctx, x1ID)
	if err != nil {
		r.t.Fatal(err)
	}
	r.checkXML("JobServiceDeleteJob2", del2.StatusCode(), 200, del2.Body)
	dels2, err := r.c.JobServiceDeleteJobs2WithBodyWithResponse(r.ctx, "application/xml", xmlBody(`<jobs><job>`+x1ID+`</job></jobs>`))
	if err != nil {
		r.t.Fatal(err)
	}
	r.checkXML("JobServiceDeleteJobs2", dels2.StatusCode(), 200, dels2.Body)
	byRef2, err := r.c.JobServiceDeleteJobByReference2WithResponse(r.ctx, "X1")
	if err != nil {
		r.t.Fatal(err)
	}
	r.checkXML("JobServiceDeleteJobByReference2", byRef2.StatusCode(), 200, byRef2.Body)
	byRefs2, err := r.c.JobServiceDeleteJobsByReference2WithBodyWithResponse(r.ctx, "application/xml",
		xmlBody(`<jobs><job>X1</job></jobs>`))
	if err != nil {
		r.t.Fatal(err)
	}
	r.checkXML("JobServiceDeleteJobsByReference2", byRefs2.StatusCode(), 200, byRefs2.Body)
}

// drivers lists and reads the seeded drivers, in both formats.
func (r *clientRun) drivers() {
	drivers, err := r.c.DriverServiceListDriversWithResponse(r.ctx, &openapiclient.DriverServiceListDriversParams{Sort: new("name")})
	if err != nil {
		r.t.Fatal(err)
	}
	r.check("DriverServiceListDrivers", drivers.StatusCode(), 200, drivers.JSON200 != nil && len(*drivers.JSON200) == 2 &&
		drivers.HTTPResponse.Header.Get("X-Total-Count") == "2", drivers.Body)
	var driverID int64
	if drivers.JSON200 != nil && len(*drivers.JSON200) > 0 {
		driverID = (*drivers.JSON200)[0].Id
	}
	driver, err := r.c.DriverServiceGetDriverWithResponse(r.ctx, driverID, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	r.check("DriverServiceGetDriver", driver.StatusCode(), 200, driver.JSON200 != nil && driver.JSON200.Id == driverID, driver.Body)
	set, err := r.c.DriverServiceSetDriverStatusWithResponse(r.ctx, driverID, openapiclient.V2DriverStatusInput{
		Status: openapiclient.V2DriverStatusInputStatusRejected, Reason: new(openapiclient.V2DriverStatusInputReasonLicense),
		Note: new("CDL expired")})
	if err != nil {
		r.t.Fatal(err)
	}
	r.check("DriverServiceSetDriverStatus", set.StatusCode(), 200, set.JSON200 != nil &&
		set.JSON200.Data.Status == openapiclient.V2DriverStatusStatusRejected && !set.JSON200.Stale, set.Body)
	status, err := r.c.DriverServiceGetDriverStatusWithResponse(r.ctx, driverID)
	if err != nil {
		r.t.Fatal(err)
	}
	r.check("DriverServiceGetDriverStatus", status.StatusCode(), 200, status.JSON200 != nil &&
		status.JSON200.Data.Reason != nil && *status.JSON200.Data.Reason == openapiclient.V2DriverStatusReasonLicense &&
		len(status.JSON200.Data.History) == 1, status.Body)
	drivers2, err := r.c.DriverServiceListDrivers2WithResponse(r.ctx, &openapiclient.DriverServiceListDrivers2Params{})
	if err != nil {
		r.t.Fatal(err)
	}
	r.checkXML("DriverServiceListDrivers2", drivers2.StatusCode(), 200, drivers2.Body)
	rejected, err := r.c.DriverServiceListDriversWithResponse(r.ctx, &openapiclient.DriverServiceListDriversParams{
		Status: new("rejected"), Include: new("status")})
	if err != nil {
		r.t.Fatal(err)
	}
	r.check("DriverServiceListDrivers status=rejected&include=status", rejected.StatusCode(), 200, rejected.JSON200 != nil &&
		len(*rejected.JSON200) == 1 && (*rejected.JSON200)[0].Id == driverID && (*rejected.JSON200)[0].Status != nil &&
		*(*rejected.JSON200)[0].Status == "rejected", rejected.Body)
	withStatus, err := r.c.DriverServiceGetDriverWithResponse(r.ctx, driverID, &openapiclient.DriverServiceGetDriverParams{Include: new("status")})
	if err != nil {
		r.t.Fatal(err)
	}
	r.check("DriverServiceGetDriver include=status", withStatus.StatusCode(), 200, withStatus.JSON200 != nil &&
		withStatus.JSON200.Status != nil && *withStatus.JSON200.Status == "rejected", withStatus.Body)
	driver2, err := r.c.DriverServiceGetDriver2WithResponse(r.ctx, driverID, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	r.checkXML("DriverServiceGetDriver2", driver2.StatusCode(), 200, driver2.Body)
	batch, err := r.c.DriverServiceSetDriverStatusesWithResponse(r.ctx, openapiclient.V2SetDriverStatusesRequest{
		Statuses: []openapiclient.V2DriverStatusBatchEntry{{DriverId: new(strconv.FormatInt(driverID, 10)), Status: "hired"}}})
	if err != nil {
		r.t.Fatal(err)
	}
	r.check("DriverServiceSetDriverStatuses", batch.StatusCode(), 200, batch.JSON200 != nil && batch.JSON200.Updated == 1, batch.Body)
	erased, err := r.c.DriverServiceDeleteDriverWithResponse(r.ctx, driverID)
	if err != nil {
		r.t.Fatal(err)
	}
	r.check("DriverServiceDeleteDriver", erased.StatusCode(), 204, len(erased.Body) == 0, erased.Body)
}

// imports queues an import of jobs and reads it.
func (r *clientRun) imports(jobs []openapiclient.V2JobInput) {
	imp, err := r.c.JobImportServiceCreateJobImportWithResponse(r.ctx, &openapiclient.JobImportServiceCreateJobImportParams{IdempotencyKey: new("gen-client-1")},
		openapiclient.V2CreateJobImportRequest{Jobs: jobs})
	if err != nil {
		r.t.Fatal(err)
	}
	r.check("JobImportServiceCreateJobImport", imp.StatusCode(), 202, imp.JSON202 != nil && imp.HTTPResponse.Header.Get("Location") != "", imp.Body)
	importID := ""
	if imp.JSON202 != nil {
		importID = imp.JSON202.Data.Id
	}
	// No queue works imports here: the import stays pending, its results
	// null (cmd/jobboard's tests run them to the end).
	pending, err := r.c.JobImportServiceGetJobImportWithResponse(r.ctx, importID)
	if err != nil {
		r.t.Fatal(err)
	}
	r.check("JobImportServiceGetJobImport", pending.StatusCode(), 200, pending.JSON200 != nil &&
		pending.JSON200.Data.Status == openapiclient.Pending && pending.JSON200.Data.Results == nil, pending.Body)
}

// webhooksAndEvents manages an endpoint, tests it, reads the feed and the
// deliveries, redelivers, rotates its secret and deletes it.
func (r *clientRun) webhooksAndEvents() {
	events := []openapiclient.V2WebhookInputEvents{openapiclient.V2WebhookInputEventsDriverApplicationReceived}
	created, err := r.c.WebhookServiceCreateWebhookWithResponse(r.ctx, openapiclient.V2WebhookInput{Url: new("http://1.1.1.1/generated"),
		Events: &events, Auth: &openapiclient.V2WebhookAuthInput{Type: openapiclient.V2WebhookAuthInputTypeBearer, Token: new("t0ken")}})
	if err != nil {
		r.t.Fatal(err)
	}
	r.check("WebhookServiceCreateWebhook", created.StatusCode(), 201, created.JSON201 != nil && created.JSON201.Data.Secret != nil &&
		created.JSON201.Data.Auth != nil && created.JSON201.Data.Auth.Type == openapiclient.V2WebhookAuthTypeBearer, created.Body)
	hookID := ""
	if created.JSON201 != nil {
		hookID = created.JSON201.Data.Id
	}
	hooks, err := r.c.WebhookServiceListWebhooksWithResponse(r.ctx)
	if err != nil {
		r.t.Fatal(err)
	}
	r.check("WebhookServiceListWebhooks", hooks.StatusCode(), 200, hooks.JSON200 != nil && len(hooks.JSON200.Data) == 1, hooks.Body)
	hook, err := r.c.WebhookServiceGetWebhookWithResponse(r.ctx, hookID)
	if err != nil {
		r.t.Fatal(err)
	}
	r.check("WebhookServiceGetWebhook", hook.StatusCode(), 200, hook.JSON200 != nil && hook.JSON200.Data.Secret == nil, hook.Body)
	// What a GET answered, sent back as the change: the request schema
	// holds only what a caller sets.
	changed, err := r.c.WebhookServiceUpdateWebhookWithResponse(r.ctx, hookID, openapiclient.V2WebhookInput{
		Url: new("http://1.1.1.1/changed"), Description: new("generated"), Enabled: new(false)})
	if err != nil {
		r.t.Fatal(err)
	}
	r.check("WebhookServiceUpdateWebhook", changed.StatusCode(), 200, changed.JSON200 != nil && !changed.JSON200.Data.Enabled &&
		changed.JSON200.Data.DisabledReason != nil, changed.Body)
	test, err := r.c.WebhookServiceTestWebhookWithResponse(r.ctx, hookID)
	if err != nil {
		r.t.Fatal(err)
	}
	r.check("WebhookServiceTestWebhook", test.StatusCode(), 422, test.JSON422 != nil, test.Body)
	if _, err := r.c.WebhookServiceUpdateWebhookWithResponse(r.ctx, hookID, openapiclient.V2WebhookInput{Enabled: new(true)}); err != nil {
		r.t.Fatal(err)
	}
	test, err = r.c.WebhookServiceTestWebhookWithResponse(r.ctx, hookID)
	if err != nil {
		r.t.Fatal(err)
	}
	r.check("WebhookServiceTestWebhook", test.StatusCode(), 202, test.JSON202 != nil && test.JSON202.Data.EventId != "", test.Body)
	feed, err := r.c.EventServiceListEventsWithResponse(r.ctx, &openapiclient.EventServiceListEventsParams{Limit: new("1000")})
	if err != nil {
		r.t.Fatal(err)
	}
	r.check("EventServiceListEvents", feed.StatusCode(), 200, feed.JSON200 != nil && len(feed.JSON200.Data) > 0, feed.Body)
	if test.JSON202 != nil {
		redeliver, err := r.c.WebhookServiceRedeliverWebhookEventWithResponse(r.ctx, hookID, test.JSON202.Data.EventId)
		if err != nil {
			r.t.Fatal(err)
		}
		r.check("WebhookServiceRedeliverWebhookEvent", redeliver.StatusCode(), 202, len(redeliver.Body) == 0, redeliver.Body)
	}
	deliveries, err := r.c.WebhookServiceListWebhookDeliveriesWithResponse(r.ctx, hookID, &openapiclient.WebhookServiceListWebhookDeliveriesParams{})
	if err != nil {
		r.t.Fatal(err)
	}
	r.check("WebhookServiceListWebhookDeliveries", deliveries.StatusCode(), 200, deliveries.JSON200 != nil, deliveries.Body)
	rotated, err := r.c.WebhookServiceRotateWebhookSecretWithResponse(r.ctx, hookID)
	if err != nil {
		r.t.Fatal(err)
	}
	r.check("WebhookServiceRotateWebhookSecret", rotated.StatusCode(), 200, rotated.JSON200 != nil && rotated.JSON200.Data.Secret != nil, rotated.Body)
	gone, err := r.c.WebhookServiceDeleteWebhookWithResponse(r.ctx, hookID)
	if err != nil {
		r.t.Fatal(err)
	}
	r.check("WebhookServiceDeleteWebhook", gone.StatusCode(), 204, len(gone.Body) == 0, gone.Body)
}

// everyOperationCalled fails the test for each operation of the generated
// client that was not called.
func (r *clientRun) everyOperationCalled() {
	var missed []string
	client := reflect.TypeOf(r.c)
	for i := range client.NumMethod() {
		name, ok := strings.CutSuffix(client.Method(i).Name, "WithResponse")
		if name, _ = strings.CutSuffix(name, "WithBody"); ok && !r.called[name] && !slices.Contains(missed, name) {
			missed = append(missed, name)
		}
	}
	if len(missed) > 0 {
		r.t.Errorf("operations of the generated client not called: %s", strings.Join(missed, ", "))
	}
}
