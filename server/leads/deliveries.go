package leads

import (
	"context"
	"fmt"
	"slices"

	"github.com/riverqueue/river"

	"github.com/truckjobs/jobboard/domain"
	"github.com/truckjobs/jobboard/server/store"
)

// deliveryArgs is the queue job that delivers one event to one endpoint.
// Generation is the endpoint's when the delivery was queued; under any
// other the delivery is dropped, so retries pending when the endpoint was
// disabled never resume once it is enabled again.
type deliveryArgs struct {
	// EventID and EndpointID are UUIDs, as stored.
	EventID    string `json:"event_id"`
	EndpointID string `json:"endpoint_id"`
	Generation int    `json:"generation"`
	// Action is "test" or "redeliver" for a delivery a client asked for,
	// empty for one the outbox queued: an endpoint has at most
	// MaxQueuedActions of the first kind queued (store.QueuedEndpointActions
	// counts them by these JSON names).
	Action string `json:"action,omitempty"`
}

// Kind names the queue job.
func (deliveryArgs) Kind() string { return "webhook_delivery" }

// deliveryJobAttempts is the River attempts of a delivery job: a ceiling
// only, above any schedule; the worker ends a delivery after the last
// attempt of its own schedule (webhook.RetryPolicy.LastAttempt).
const deliveryJobAttempts = 100

// DeliveryQueue is the queue deliveries wait in, apart from imports and
// their callbacks, so that slow receivers never hold an import back.
const DeliveryQueue = "webhooks"

// queueDeliveries queues, in tx, one delivery of each event to each
// enabled endpoint of the event's account subscribed to its type, each
// tried as the worker's schedule says. Test events go to their one endpoint
// (the test action queues them), never through here.
func queueDeliveries(ctx context.Context, client *store.Queue, tx *store.Tx, events []store.Event) error {
	targets := map[int64][]store.DeliveryTarget{}
	var jobs []river.InsertManyParams
	for _, e := range events {
		if e.Type == domain.EventWebhookTest {
			continue
		}
		endpoints, seen := targets[e.AccountID]
		if !seen {
			var err error
			if endpoints, err = tx.DeliveryTargets(ctx, e.AccountID); err != nil {
				return err
			}
			targets[e.AccountID] = endpoints
		}
		eventUUID, _ := store.ParseEventID(e.ID)
		for _, t := range endpoints {
			if !slices.Contains(t.EventTypes, string(e.Type)) {
				continue
			}
			jobs = append(jobs, river.InsertManyParams{
				Args:       deliveryArgs{EventID: eventUUID, EndpointID: t.EndpointID, Generation: t.Generation},
				InsertOpts: &river.InsertOpts{Queue: DeliveryQueue, MaxAttempts: deliveryJobAttempts},
			})
		}
	}
	if len(jobs) == 0 {
		return nil
	}
	if _, err := client.InsertManyFastTx(ctx, tx.SQL(), jobs); err != nil {
		return fmt.Errorf("queue deliveries: %w", err)
	}
	return nil
}
