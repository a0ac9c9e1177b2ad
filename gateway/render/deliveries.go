package render

import (
	"github.com/truckjobs/jobboard/gateway/wire"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
)

// writeTestWebhook writes the answer to a test: {"data": {"eventId": ...}}.
func writeTestWebhook(w wire.Writer, r *restv2.TestWebhookResponse) {
	w.BeginObject("test")
	w.BeginObject("data")
	w.String("eventId", r.GetData().GetEventId())
	w.EndObject()
	w.EndObject()
}

// writeWebhookDeliveries writes the deliveries log: {"data": [attempts]},
// every member present, null when there is no status or no error.
func writeWebhookDeliveries(w wire.Writer, r *restv2.ListWebhookDeliveriesResponse) {
	w.BeginObject("deliveries")
	w.BeginList("data")
	for _, d := range r.GetData() {
		w.BeginObject("delivery")
		w.String("eventId", d.GetEventId())
		w.String("eventType", d.GetEventType())
		w.Int("attempt", int64(d.GetAttempt()))
		w.String("attemptedAt", d.GetAttemptedAt())
		w.NullableInt("statusCode", int64Of(d.StatusCode))
		w.NullableString("error", d.Error)
		w.Int("durationMs", d.GetDurationMs())
		w.EndObject()
	}
	w.EndList()
	w.EndObject()
}
