package render

import (
	"github.com/truckjobs/jobboard/gateway/wire"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
)

// writeWebhookAnswer writes one endpoint wrapped with its address:
// {"data": endpoint, "links": {"self": ...}}.
func writeWebhookAnswer(w wire.Writer, e *restv2.Webhook, links *restv2.WebhookLinks) {
	w.BeginObject("webhook")
	writeWebhook(w, "data", e)
	w.BeginObject("links")
	w.String("self", links.GetSelf())
	w.EndObject()
	w.EndObject()
}

// writeWebhookList writes {"data": [endpoints]}.
func writeWebhookList(w wire.Writer, list *restv2.ListWebhooksResponse) {
	w.BeginObject("webhooks")
	w.BeginList("data")
	for _, e := range list.GetData() {
		writeWebhook(w, "webhook", e)
	}
	w.EndList()
	w.EndObject()
}

// writeWebhook writes an endpoint with every field, null when unset. Of its
// credentials only the type and the user name are ever written.
func writeWebhook(w wire.Writer, name string, e *restv2.Webhook) {
	w.BeginObject(name)
	w.String("id", e.GetId())
	w.String("url", e.GetUrl())
	w.BeginList("events")
	for _, t := range e.GetEvents() {
		w.String("event", t)
	}
	w.EndList()
	w.NullableString("description", e.Description)
	if a := e.GetAuth(); a == nil {
		w.NullableString("auth", nil)
	} else {
		w.BeginObject("auth")
		w.String("type", a.GetType())
		w.NullableString("username", a.Username)
		w.EndObject()
	}
	w.Bool("enabled", e.GetEnabled())
	w.String("createdAt", e.GetCreatedAt())
	w.NullableString("disabledAt", e.DisabledAt)
	w.NullableString("disabledReason", e.DisabledReason)
	w.NullableString("secret", e.Secret)
	w.EndObject()
}
