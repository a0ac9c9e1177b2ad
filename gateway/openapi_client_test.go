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
	ctx := context.Background()
	c, err := openapiclient.NewClientWithResponses(a.url, openapiclient.WithRequestEditorFn(
		func(_ context.Context, r *http.Request) error { r.SetBasicAuth(a.key, ""); return nil }))
	if err != nil {
		t.Fatal(err)
	}
	called := map[string]bool{}
	// check records that op was called and fails the test unless the
	// answer had the status want and decoded into the generated type.
	check := func(op string, status, want int, decoded bool, body []byte) {
		t.Helper()
		called[op] = true
		if status != want || !decoded {
			t.Errorf("%s: %d (decoded: %v), want %d: %.300s", op, status, decoded, want, body)
		}
	}
	// checkXML is check for an XML answer, which the client hands over as
	// bytes.
	checkXML := func(op string, status, want int, body []byte) {
		t.Helper()
		err := xml.Unmarshal(body, new(struct{}))
		check(op, status, want, err == nil, body)
	}
	str := func(s string) *string { return &s }
	xmlBody := func(s string) io.Reader { return strings.NewReader(s) }

	// Jobs, in JSON.
	driverType, freight := openapiclient.V2JobInputDriverTypeCompanyDriver, openapiclient.V2JobInputFreightTypeDryVan
	jobs := []openapiclient.V2JobInput{
		{ReferenceNumber: str("GEN1"), Title: str("Generated OTR"), State: str("OH"), DriverType: &driverType,
			FreightType: &freight, Description: str("<p>From the generated client.</p>"),
			EmploymentType: &[]openapiclient.V2JobInputEmploymentType{openapiclient.V2JobInputEmploymentTypeFullTime}},
		{ReferenceNumber: str("GEN2"), Title: str("Generated Local"), State: str("TX"), DriverType: &driverType,
			FreightType: &freight, Description: str("Local.")},
		{ReferenceNumber: str("GEN3"), Title: str("Generated Yard"), State: str("NE"), DriverType: &driverType,
			FreightType: &freight, Description: str("Yard.")},
	}
	post, err := c.JobServicePostJobsWithResponse(ctx, jobs)
	if err != nil {
		t.Fatal(err)
	}
	check("JobServicePostJobs", post.StatusCode(), 200, post.JSON200 != nil && post.JSON200.Added == 3, post.Body)
	list, err := c.JobServiceListJobsWithResponse(ctx, &openapiclient.JobServiceListJobsParams{})
	if err != nil {
		t.Fatal(err)
	}
	check("JobServiceListJobs", list.StatusCode(), 200, list.JSON200 != nil && len(*list.JSON200) >= 3, list.Body)
	ids := map[string]int64{}
	if list.JSON200 != nil {
		for _, j := range *list.JSON200 {
			ids[j.ReferenceNumber] = j.Id
		}
	}
	page, err := c.JobServiceListJobsWithResponse(ctx, &openapiclient.JobServiceListJobsParams{PageSize: new(int32(1))})
	if err != nil {
		t.Fatal(err)
	}
	check("JobServiceListJobs", page.StatusCode(), 200, page.JSON200 != nil && len(*page.JSON200) == 1 &&
		strings.Contains(page.HTTPResponse.Header.Get("Link"), `rel="next"`), page.Body)
	get, err := c.JobServiceGetJobWithResponse(ctx, strconv.FormatInt(ids["GEN1"], 10))
	if err != nil {
		t.Fatal(err)
	}
	check("JobServiceGetJob", get.StatusCode(), 200, get.JSON200 != nil && get.JSON200.ReferenceNumber == "GEN1" &&
		get.JSON200.EmploymentType != nil && *get.JSON200.EmploymentType == openapiclient.V2JobEmploymentTypeFullTime, get.Body)
	del, err := c.JobServiceDeleteJobWithResponse(ctx, strconv.FormatInt(ids["GEN1"], 10))
	if err != nil {
		t.Fatal(err)
	}
	check("JobServiceDeleteJob", del.StatusCode(), 200, del.JSON200 != nil && del.JSON200.Deleted == 1, del.Body)
	dels, err := c.JobServiceDeleteJobsWithResponse(ctx, []string{strconv.FormatInt(ids["GEN2"], 10), "999999"})
	if err != nil {
		t.Fatal(err)
	}
	check("JobServiceDeleteJobs", dels.StatusCode(), 200, dels.JSON200 != nil && dels.JSON200.Deleted == 1 &&
		len(dels.JSON200.ErrorMessages.MissingErrors.Errors) == 1, dels.Body)
	byRef, err := c.JobServiceDeleteJobByReferenceWithResponse(ctx, "GEN3")
	if err != nil {
		t.Fatal(err)
	}
	check("JobServiceDeleteJobByReference", byRef.StatusCode(), 200, byRef.JSON200 != nil && byRef.JSON200.Deleted == 1, byRef.Body)
	byRefs, err := c.JobServiceDeleteJobsByReferenceWithResponse(ctx, []string{"GEN1", "NOPE"})
	if err != nil {
		t.Fatal(err)
	}
	check("JobServiceDeleteJobsByReference", byRefs.StatusCode(), 200, byRefs.JSON200 != nil && byRefs.JSON200.Errors == 2, byRefs.Body)

	// Jobs, in XML: the same operations at the .xml paths.
	const xmlJob = `<jobs><job><referenceNumber>X1</referenceNumber><title>XML job</title><state>OH</state>` +
		`<driverType>Company Driver</driverType><freightType>Box</freightType><description>x</description></job></jobs>`
	post2, err := c.JobServicePostJobs2WithBodyWithResponse(ctx, "application/xml", xmlBody(xmlJob))
	if err != nil {
		t.Fatal(err)
	}
	checkXML("JobServicePostJobs2", post2.StatusCode(), 200, post2.Body)
	list2, err := c.JobServiceListJobs2WithResponse(ctx, &openapiclient.JobServiceListJobs2Params{})
	if err != nil {
		t.Fatal(err)
	}
	checkXML("JobServiceListJobs2", list2.StatusCode(), 200, list2.Body)
	var x1 struct {
		Jobs []struct {
			ID              int64  `xml:"id"`
			ReferenceNumber string `xml:"referenceNumber"`
		} `xml:"job"`
	}
	_ = xml.Unmarshal(list2.Body, &x1)
	x1ID := ""
	for _, j := range x1.Jobs {
		if j.ReferenceNumber == "X1" {
			x1ID = strconv.FormatInt(j.ID, 10)
		}
	}
	get2, err := c.JobServiceGetJob2WithResponse(ctx, x1ID)
	if err != nil {
		t.Fatal(err)
	}
	checkXML("JobServiceGetJob2", get2.StatusCode(), 200, get2.Body)
	del2, err := c.JobServiceDeleteJob2WithResponse(ctx, x1ID)
	if err != nil {
		t.Fatal(err)
	}
	checkXML("JobServiceDeleteJob2", del2.StatusCode(), 200, del2.Body)
	dels2, err := c.JobServiceDeleteJobs2WithBodyWithResponse(ctx, "application/xml", xmlBody(`<jobs><job>`+x1ID+`</job></jobs>`))
	if err != nil {
		t.Fatal(err)
	}
	checkXML("JobServiceDeleteJobs2", dels2.StatusCode(), 200, dels2.Body)
	byRef2, err := c.JobServiceDeleteJobByReference2WithResponse(ctx, "X1")
	if err != nil {
		t.Fatal(err)
	}
	checkXML("JobServiceDeleteJobByReference2", byRef2.StatusCode(), 200, byRef2.Body)
	byRefs2, err := c.JobServiceDeleteJobsByReference2WithBodyWithResponse(ctx, "application/xml",
		xmlBody(`<jobs><job>X1</job></jobs>`))
	if err != nil {
		t.Fatal(err)
	}
	checkXML("JobServiceDeleteJobsByReference2", byRefs2.StatusCode(), 200, byRefs2.Body)

	// Drivers.
	drivers, err := c.DriverServiceListDriversWithResponse(ctx, &openapiclient.DriverServiceListDriversParams{Sort: str("name")})
	if err != nil {
		t.Fatal(err)
	}
	check("DriverServiceListDrivers", drivers.StatusCode(), 200, drivers.JSON200 != nil && len(*drivers.JSON200) == 2 &&
		drivers.HTTPResponse.Header.Get("X-Total-Count") == "2", drivers.Body)
	driverID := ""
	if drivers.JSON200 != nil && len(*drivers.JSON200) > 0 {
		driverID = strconv.FormatInt((*drivers.JSON200)[0].Id, 10)
	}
	driver, err := c.DriverServiceGetDriverWithResponse(ctx, driverID)
	if err != nil {
		t.Fatal(err)
	}
	check("DriverServiceGetDriver", driver.StatusCode(), 200, driver.JSON200 != nil && strconv.FormatInt(driver.JSON200.Id, 10) == driverID, driver.Body)
	drivers2, err := c.DriverServiceListDrivers2WithResponse(ctx, &openapiclient.DriverServiceListDrivers2Params{})
	if err != nil {
		t.Fatal(err)
	}
	checkXML("DriverServiceListDrivers2", drivers2.StatusCode(), 200, drivers2.Body)
	driver2, err := c.DriverServiceGetDriver2WithResponse(ctx, driverID)
	if err != nil {
		t.Fatal(err)
	}
	checkXML("DriverServiceGetDriver2", driver2.StatusCode(), 200, driver2.Body)

	// Imports.
	imp, err := c.JobImportServiceCreateJobImportWithResponse(ctx, &openapiclient.JobImportServiceCreateJobImportParams{IdempotencyKey: str("gen-client-1")},
		openapiclient.V2CreateJobImportRequest{Jobs: jobs[:1]})
	if err != nil {
		t.Fatal(err)
	}
	check("JobImportServiceCreateJobImport", imp.StatusCode(), 202, imp.JSON202 != nil && imp.HTTPResponse.Header.Get("Location") != "", imp.Body)
	importID := ""
	if imp.JSON202 != nil {
		importID = imp.JSON202.Data.Id
	}
	// No queue works imports here: the import stays pending, its results
	// null (cmd/jobboard's tests run them to the end).
	pending, err := c.JobImportServiceGetJobImportWithResponse(ctx, importID)
	if err != nil {
		t.Fatal(err)
	}
	check("JobImportServiceGetJobImport", pending.StatusCode(), 200, pending.JSON200 != nil &&
		pending.JSON200.Data.Status == openapiclient.Pending && pending.JSON200.Data.Results == nil, pending.Body)

	// Webhook endpoints, the feed and the deliveries.
	events := []openapiclient.V2WebhookInputEvents{openapiclient.V2WebhookInputEventsDriverApplicationReceived}
	created, err := c.WebhookServiceCreateWebhookWithResponse(ctx, openapiclient.V2WebhookInput{Url: str("http://1.1.1.1/generated"),
		Events: &events, Auth: &openapiclient.V2WebhookAuthInput{Type: openapiclient.V2WebhookAuthInputTypeBearer, Token: str("t0ken")}})
	if err != nil {
		t.Fatal(err)
	}
	check("WebhookServiceCreateWebhook", created.StatusCode(), 201, created.JSON201 != nil && created.JSON201.Data.Secret != nil &&
		created.JSON201.Data.Auth != nil && created.JSON201.Data.Auth.Type == openapiclient.V2WebhookAuthTypeBearer, created.Body)
	hookID := ""
	if created.JSON201 != nil {
		hookID = created.JSON201.Data.Id
	}
	hooks, err := c.WebhookServiceListWebhooksWithResponse(ctx)
	if err != nil {
		t.Fatal(err)
	}
	check("WebhookServiceListWebhooks", hooks.StatusCode(), 200, hooks.JSON200 != nil && len(hooks.JSON200.Data) == 1, hooks.Body)
	hook, err := c.WebhookServiceGetWebhookWithResponse(ctx, hookID)
	if err != nil {
		t.Fatal(err)
	}
	check("WebhookServiceGetWebhook", hook.StatusCode(), 200, hook.JSON200 != nil && hook.JSON200.Data.Secret == nil, hook.Body)
	// What a GET answered, sent back as the change: the request schema
	// holds only what a caller sets.
	changed, err := c.WebhookServiceUpdateWebhookWithResponse(ctx, hookID, openapiclient.V2WebhookInput{
		Url: str("http://1.1.1.1/changed"), Description: str("generated"), Enabled: new(false)})
	if err != nil {
		t.Fatal(err)
	}
	check("WebhookServiceUpdateWebhook", changed.StatusCode(), 200, changed.JSON200 != nil && !changed.JSON200.Data.Enabled &&
		changed.JSON200.Data.DisabledReason != nil, changed.Body)
	test, err := c.WebhookServiceTestWebhookWithResponse(ctx, hookID)
	if err != nil {
		t.Fatal(err)
	}
	check("WebhookServiceTestWebhook", test.StatusCode(), 422, test.JSON422 != nil, test.Body)
	if _, err := c.WebhookServiceUpdateWebhookWithResponse(ctx, hookID, openapiclient.V2WebhookInput{Enabled: new(true)}); err != nil {
		t.Fatal(err)
	}
	test, err = c.WebhookServiceTestWebhookWithResponse(ctx, hookID)
	if err != nil {
		t.Fatal(err)
	}
	check("WebhookServiceTestWebhook", test.StatusCode(), 202, test.JSON202 != nil && test.JSON202.Data.EventId != "", test.Body)
	feed, err := c.EventServiceListEventsWithResponse(ctx, &openapiclient.EventServiceListEventsParams{Limit: str("1000")})
	if err != nil {
		t.Fatal(err)
	}
	check("EventServiceListEvents", feed.StatusCode(), 200, feed.JSON200 != nil && len(feed.JSON200.Data) > 0, feed.Body)
	if test.JSON202 != nil {
		redeliver, err := c.WebhookServiceRedeliverWebhookEventWithResponse(ctx, hookID, test.JSON202.Data.EventId)
		if err != nil {
			t.Fatal(err)
		}
		check("WebhookServiceRedeliverWebhookEvent", redeliver.StatusCode(), 202, len(redeliver.Body) == 0, redeliver.Body)
	}
	deliveries, err := c.WebhookServiceListWebhookDeliveriesWithResponse(ctx, hookID, &openapiclient.WebhookServiceListWebhookDeliveriesParams{})
	if err != nil {
		t.Fatal(err)
	}
	check("WebhookServiceListWebhookDeliveries", deliveries.StatusCode(), 200, deliveries.JSON200 != nil, deliveries.Body)
	rotated, err := c.WebhookServiceRotateWebhookSecretWithResponse(ctx, hookID)
	if err != nil {
		t.Fatal(err)
	}
	check("WebhookServiceRotateWebhookSecret", rotated.StatusCode(), 200, rotated.JSON200 != nil && rotated.JSON200.Data.Secret != nil, rotated.Body)
	gone, err := c.WebhookServiceDeleteWebhookWithResponse(ctx, hookID)
	if err != nil {
		t.Fatal(err)
	}
	check("WebhookServiceDeleteWebhook", gone.StatusCode(), 204, len(gone.Body) == 0, gone.Body)

	// Every operation of the generated client was called above.
	var missed []string
	client := reflect.TypeOf(c)
	for i := range client.NumMethod() {
		name, ok := strings.CutSuffix(client.Method(i).Name, "WithResponse")
		if name, _ = strings.CutSuffix(name, "WithBody"); ok && !called[name] && !slices.Contains(missed, name) {
			missed = append(missed, name)
		}
	}
	if len(missed) > 0 {
		t.Errorf("operations of the generated client not called: %s", strings.Join(missed, ", "))
	}
}
