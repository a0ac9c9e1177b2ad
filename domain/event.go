package domain

import "slices"

// EventType names what a lead event reports (docs/api.md, Events). The
// values are the words the API shows and the store keeps.
type EventType string

// The event types.
const (
	// EventApplicationReceived is a driver's application, as the intake
	// stored it.
	EventApplicationReceived EventType = "driver.application.received"
	// EventImportCompleted is a job import that finished, by its run or by
	// its failure.
	EventImportCompleted EventType = "job_import.completed"
	// EventWebhookTest is the event a webhook endpoint's test action sends
	// to that endpoint alone.
	EventWebhookTest EventType = "webhook.test"
	// EventStatusChanged is a change of a driver's lead status: the
	// employer's, or a new application's from a driver who had withdrawn.
	EventStatusChanged EventType = "driver.status.changed"
)

// eventTypes are the event types in the order of the gRPC EventType enum.
var eventTypes = []EventType{EventApplicationReceived, EventImportCompleted, EventWebhookTest, EventStatusChanged}

// EventTypes returns every event type the service knows, in the order of
// the gRPC EventType enum: the feed's type filter and the enum read it.
func EventTypes() []EventType { return slices.Clone(eventTypes) }

// SubscribableEventTypes returns the event types an endpoint may subscribe
// to, in the same order: all but webhook.test, which only the test action
// sends, to the endpoint tested.
func SubscribableEventTypes() []EventType {
	return slices.DeleteFunc(EventTypes(), func(t EventType) bool { return t == EventWebhookTest })
}
