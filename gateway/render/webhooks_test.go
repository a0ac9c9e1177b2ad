package render

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/truckjobs/jobboard/gateway/wire"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
)

// The webhook answers, byte for byte: every member present, null when
// unset, an endpoint's credentials as their type and user name only.
func TestRenderWebhooks(t *testing.T) {
	full := &restv2.Webhook{Id: "we_1", Url: "https://h.example/hook", Events: []string{"driver.application.received", "job_import.completed"},
		Description: new("Leads <to> CRM & co"), Auth: &restv2.WebhookAuth{Type: "basic", Username: new("crm")}, Enabled: true,
		CreatedAt: "2026-11-23T10:15:30Z", DisabledAt: new("2026-11-24T00:00:00Z"), DisabledReason: new("failing"), Secret: new("whsec_x")}
	bare := &restv2.Webhook{Id: "we_2", Url: "https://h.example/2", CreatedAt: "c"}
	links := &restv2.WebhookLinks{Self: "http://h/api/v2.0/webhooks/we_1"}
	const fullJSON = `{"id":"we_1","url":"https://h.example/hook","events":["driver.application.received","job_import.completed"],` +
		`"description":"Leads <to> CRM & co","auth":{"type":"basic","username":"crm"},"enabled":true,"createdAt":"2026-11-23T10:15:30Z",` +
		`"disabledAt":"2026-11-24T00:00:00Z","disabledReason":"failing","secret":"whsec_x"}`
	const bareJSON = `{"id":"we_2","url":"https://h.example/2","events":[],"description":null,"auth":null,"enabled":false,"createdAt":"c",` +
		`"disabledAt":null,"disabledReason":null,"secret":null}`
	tests := []struct {
		name string
		msg  proto.Message
		want string
	}{
		{"created", &restv2.CreateWebhookResponse{Data: full, Links: links},
			`{"data":` + fullJSON + `,"links":{"self":"http://h/api/v2.0/webhooks/we_1"}}`},
		{"read", &restv2.GetWebhookResponse{Data: bare, Links: links},
			`{"data":` + bareJSON + `,"links":{"self":"http://h/api/v2.0/webhooks/we_1"}}`},
		{"updated", &restv2.UpdateWebhookResponse{Data: bare, Links: links},
			`{"data":` + bareJSON + `,"links":{"self":"http://h/api/v2.0/webhooks/we_1"}}`},
		{"secret rotated", &restv2.RotateWebhookSecretResponse{Data: full, Links: links},
			`{"data":` + fullJSON + `,"links":{"self":"http://h/api/v2.0/webhooks/we_1"}}`},
		{"list", &restv2.ListWebhooksResponse{Data: []*restv2.Webhook{full, bare}}, `{"data":[` + fullJSON + `,` + bareJSON + `]}`},
		{"empty list", &restv2.ListWebhooksResponse{}, `{"data":[]}`},
		{"test", &restv2.TestWebhookResponse{Data: &restv2.TestWebhookEvent{EventId: "evt_1"}}, `{"data":{"eventId":"evt_1"}}`},
		{"deliveries", &restv2.ListWebhookDeliveriesResponse{Data: []*restv2.WebhookDelivery{
			{EventId: "evt_1", EventType: "webhook.test", Attempt: 2, AttemptedAt: "a", StatusCode: new(int32(503)), DurationMs: 120},
			{EventId: "evt_2", EventType: "webhook.test", Attempt: 1, AttemptedAt: "b", Error: new("dial tcp: refused")}}},
			`{"data":[{"eventId":"evt_1","eventType":"webhook.test","attempt":2,"attemptedAt":"a","statusCode":503,"error":null,"durationMs":120},` +
				`{"eventId":"evt_2","eventType":"webhook.test","attempt":1,"attemptedAt":"b","statusCode":null,"error":"dial tcp: refused","durationMs":0}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := JSON(tt.msg)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want+"\n" {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestWalkNamesXMLAndRefusesWhatRESTCannotSay: a walked answer names its
// XML elements after its message and its lists' items, and a field with
// no text form in the REST API (an enum) is an error, not a guess.
func TestWalkNamesXMLAndRefusesWhatRESTCannotSay(t *testing.T) {
	got, err := Message(wire.XML, &restv2.ListWebhooksResponse{Data: []*restv2.Webhook{{Id: "we_1", Events: []string{"webhook.test"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `<listWebhooks><data><webhook><id>we_1</id><url/><events><event>webhook.test</event></events>`; !strings.Contains(string(got), want) {
		t.Errorf("XML %s\nwant it to hold %s", got, want)
	}
	if _, err := Message(wire.JSON, &jobboardv2.Job{DriverType: jobboardv2.DriverType_DRIVER_TYPE_STUDENT}); err == nil ||
		!strings.Contains(err.Error(), "jobboard.v2.Job.driver_type, a enum") {
		t.Errorf("an enum field: %v", err)
	}
}
