package render

import (
	"testing"

	"google.golang.org/protobuf/proto"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
)

// An event's data is written as the text it was stored as, byte for byte,
// whatever its key order or spacing; the envelope around it is the API's.
func TestRenderEvent(t *testing.T) {
	tests := []struct {
		name string
		msg  proto.Message
		want string
	}{
		{"one event", &restv2.Event{Id: "evt_0123", Type: "webhook.test", CreatedAt: "2026-11-23T10:15:30.123456Z",
			Data: []byte(`{"webhookId":"we_1", "z": 1, "a": [1.50, "x"]}` + "\n")},
			`{"id":"evt_0123","type":"webhook.test","createdAt":"2026-11-23T10:15:30.123456Z","data":{"webhookId":"we_1", "z": 1, "a": [1.50, "x"]}}` + "\n"},
		{"empty page", &restv2.ListEventsResponse{Links: &restv2.EventLinks{Next: "http://h/api/v2.0/events?after=evt_9"}},
			`{"data":[],"links":{"next":"http://h/api/v2.0/events?after=evt_9"}}` + "\n"},
		{"page", &restv2.ListEventsResponse{Data: []*restv2.Event{
			{Id: "evt_1", Type: "job_import.completed", CreatedAt: "c1", Data: []byte(`{"id":"u"}`)},
			{Id: "evt_2", Type: "driver.application.received", CreatedAt: "c2", Data: []byte(`{"id":7}`)}},
			Links: &restv2.EventLinks{Next: "n"}},
			`{"data":[{"id":"evt_1","type":"job_import.completed","createdAt":"c1","data":{"id":"u"}},` +
				`{"id":"evt_2","type":"driver.application.received","createdAt":"c2","data":{"id":7}}],"links":{"next":"n"}}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := JSON(tt.msg)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
