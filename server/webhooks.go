package server

import (
	"database/sql"

	"github.com/riverqueue/river"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/server/store"
)

// WebhookService implements jobboard.rest.v2.WebhookService: the account's
// webhook endpoints, their secrets and their deliveries (docs/api.md,
// Events and webhooks).
type WebhookService struct {
	restv2.UnimplementedWebhookServiceServer
	store *store.Store
	// queue carries deliveries: test events and redeliveries are queued
	// in the transaction that asks for them.
	queue *river.Client[*sql.Tx]
	links linkBase
	// allowPrivate lifts the public-address rule on endpoint URLs
	// (JOBBOARD_CALLBACK_ALLOW_PRIVATE), as on callback URLs.
	allowPrivate bool
	// deliveryAttempts is how many times a delivery is tried.
	deliveryAttempts int
}

// EventService implements jobboard.rest.v2.EventService: the account's
// feed of events.
type EventService struct {
	restv2.UnimplementedEventServiceServer
	store *store.Store
	links linkBase
}

// eventMessage is an event in its REST form: the body of its deliveries
// (gateway.RenderJSON writes it) and an item of the feed.
func eventMessage(e store.Event) *restv2.Event {
	return &restv2.Event{Id: e.ID, Type: e.Type, CreatedAt: e.CreatedAt.UTC().Format(importTimeFormat), Data: e.Data}
}
