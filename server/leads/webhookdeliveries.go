package leads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/riverqueue/river"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/truckjobs/jobboard/domain"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/store"
)

// The deliveries log's page: 1 to maxDeliveriesPage attempts, 100 unless
// asked.
const (
	defaultDeliveriesPage = 100
	maxDeliveriesPage     = 1000
)

// errEndpointDisabled is a test or redelivery asked of a disabled endpoint.
var errEndpointDisabled = errors.New("webhook endpoint disabled")

// MaxQueuedActions is how many test and redeliver actions one endpoint may
// have queued (not yet delivered or given up) at once (docs/api.md 7): a
// client cannot pile deliveries to a receiver that never answers.
const MaxQueuedActions = 10

// The actions a client asks for, as deliveryArgs.Action names them.
const (
	actionTest      = "test"
	actionRedeliver = "redeliver"
)

// tooManyQueued is an action asked of an endpoint that has
// MaxQueuedActions queued already.
type tooManyQueued struct {
	// queued is how many the endpoint has.
	queued int
}

func (e tooManyQueued) Error() string {
	return fmt.Sprintf("%d actions queued", e.queued)
}

// TestWebhook writes a webhook.test event and queues its delivery to the
// endpoint, and only to it, in one transaction, unless the endpoint has
// MaxQueuedActions queued.
func (s *WebhookService) TestWebhook(ctx context.Context, req *restv2.TestWebhookRequest) (*restv2.TestWebhookResponse, error) {
	caller, err := call.From(ctx)
	if err != nil {
		return nil, err
	}
	var event store.Event
	err = s.store.InTx(ctx, func(tx *store.Tx) error {
		target, enabled, err := tx.AccountEndpoint(ctx, caller.AccountID, req.GetId())
		if err != nil {
			return err
		}
		if !enabled {
			return errEndpointDisabled
		}
		if err := roomForAction(ctx, tx, target); err != nil {
			return err
		}
		data, err := json.Marshal(map[string]string{"webhookId": store.EndpointID(target.EndpointID)})
		if err != nil {
			return err
		}
		events, err := tx.InsertEvents(ctx, caller.AccountID, []store.NewEvent{{Type: domain.EventWebhookTest, Data: data}})
		if err != nil {
			return err
		}
		event = events[0]
		return s.queueAction(ctx, tx, event.ID, target, actionTest)
	})
	if err != nil {
		return nil, s.endpointError(ctx, err, req.GetId(), "test")
	}
	return &restv2.TestWebhookResponse{Data: &restv2.TestWebhookEvent{EventId: event.ID}}, nil
}

// RedeliverWebhookEvent queues a new delivery of one of the account's
// events to the endpoint, with the event's id as webhook-id again. Any of
// its events will do, one created while the endpoint was disabled too.
func (s *WebhookService) RedeliverWebhookEvent(ctx context.Context, req *restv2.RedeliverWebhookEventRequest) (*restv2.RedeliverWebhookEventResponse, error) {
	caller, err := call.From(ctx)
	if err != nil {
		return nil, err
	}
	var eventMissing bool
	err = s.store.InTx(ctx, func(tx *store.Tx) error {
		target, enabled, err := tx.AccountEndpoint(ctx, caller.AccountID, req.GetId())
		if err != nil {
			return err
		}
		event, err := tx.AccountEvent(ctx, caller.AccountID, req.GetEventId())
		if err != nil {
			eventMissing = errors.Is(err, store.ErrNotFound)
			return err
		}
		if !enabled {
			return errEndpointDisabled
		}
		if err := testedElsewhere(event, target); err != nil {
			return err
		}
		if err := roomForAction(ctx, tx, target); err != nil {
			return err
		}
		return s.queueAction(ctx, tx, event.ID, target, actionRedeliver)
	})
	if eventMissing {
		return nil, status.Errorf(codes.NotFound, "event %s not found", call.Quoted(req.GetEventId()))
	}
	var elsewhere otherEndpointsTest
	if errors.As(err, &elsewhere) {
		return nil, status.Errorf(codes.FailedPrecondition,
			"event %s is a webhook.test of endpoint %s and is delivered only to it, not to %s",
			req.GetEventId(), elsewhere.endpoint, req.GetId())
	}
	if err != nil {
		return nil, s.endpointError(ctx, err, req.GetId(), "redeliver events")
	}
	return &restv2.RedeliverWebhookEventResponse{}, nil
}

// otherEndpointsTest is a redelivery of a webhook.test event to an
// endpoint other than the one it tested.
type otherEndpointsTest struct {
	// endpoint is the public id of the endpoint the event tested.
	endpoint string
}

func (e otherEndpointsTest) Error() string {
	return "webhook.test event of endpoint " + e.endpoint
}

// testedElsewhere refuses to send a webhook.test event to any endpoint but
// the one it tested (docs/api.md, Webhook endpoints): its data names that endpoint.
func testedElsewhere(event store.Event, target store.DeliveryTarget) error {
	if event.Type != domain.EventWebhookTest {
		return nil
	}
	var data struct {
		WebhookID string `json:"webhookId"`
	}
	if err := json.Unmarshal(event.Data, &data); err != nil {
		return fmt.Errorf("webhook.test event %s: %w", event.ID, err)
	}
	if data.WebhookID != store.EndpointID(target.EndpointID) {
		return otherEndpointsTest{endpoint: data.WebhookID}
	}
	return nil
}

// roomForAction takes the lock of the endpoint's actions for the rest of
// tx and refuses one more when it has MaxQueuedActions queued already
// (tooManyQueued). The action's delivery must be queued in tx.
func roomForAction(ctx context.Context, tx *store.Tx, target store.DeliveryTarget) error {
	queued, err := tx.QueuedEndpointActions(ctx, deliveryArgs{}.Kind(), target.EndpointID)
	if err != nil {
		return err
	}
	if queued >= MaxQueuedActions {
		return tooManyQueued{queued: queued}
	}
	return nil
}

// queueAction queues, in tx, the delivery an action asked for: the event
// with public id eventID to target, tried as often as any delivery.
func (s *WebhookService) queueAction(ctx context.Context, tx *store.Tx, eventID string, target store.DeliveryTarget, action string) error {
	eventUUID, _ := store.ParseEventID(eventID)
	args := deliveryArgs{EventID: eventUUID, EndpointID: target.EndpointID, Generation: target.Generation, Action: action}
	if _, err := s.queue.InsertTx(ctx, tx.SQL(), args, &river.InsertOpts{Queue: DeliveryQueue, MaxAttempts: deliveryJobAttempts}); err != nil {
		return fmt.Errorf("queue delivery: %w", err)
	}
	return nil
}

// endpointError is the answer to an action on the endpoint id that failed
// with err: NotFound for an endpoint the account does not have,
// FailedPrecondition (422) for a disabled one and for one with
// MaxQueuedActions queued.
func (s *WebhookService) endpointError(ctx context.Context, err error, id, action string) error {
	var full tooManyQueued
	switch {
	case errors.Is(err, store.ErrNotFound):
		return status.Errorf(codes.NotFound, "webhook endpoint %s not found", call.Quoted(id))
	case errors.Is(err, errEndpointDisabled):
		return status.Errorf(codes.FailedPrecondition,
			"webhook endpoint %s is disabled; enable it first (PATCH /api/v2.0/webhooks/%s with {\"enabled\": true}) to %s", id, id, action)
	case errors.As(err, &full):
		return status.Errorf(codes.FailedPrecondition,
			"webhook endpoint %s has %d test or redeliver deliveries queued, the most it may have at once (%d); ask again once one has been delivered or given up",
			id, full.queued, MaxQueuedActions)
	}
	return call.Internal(ctx, err)
}

// ListWebhookDeliveries lists the endpoint's latest delivery attempts,
// newest first.
func (s *WebhookService) ListWebhookDeliveries(ctx context.Context, req *restv2.ListWebhookDeliveriesRequest) (*restv2.ListWebhookDeliveriesResponse, error) {
	attempts, err := s.Deliveries(ctx, req.GetId(), req.GetLimit())
	if err != nil {
		return nil, err
	}
	out := make([]*restv2.WebhookDelivery, len(attempts))
	for i, a := range attempts {
		out[i] = &restv2.WebhookDelivery{EventId: store.EventID(a.EventID), EventType: string(a.EventType), Attempt: int32(a.Attempt),
			AttemptedAt: call.Time(a.AttemptedAt), StatusCode: int32Of(a.StatusCode),
			Error: a.Error, DurationMs: int64(a.DurationMS)}
	}
	return &restv2.ListWebhookDeliveriesResponse{Data: out}, nil
}

// Deliveries reads the attempts ListWebhookDeliveries answers; limit is
// the query parameter's text.
func (s *WebhookService) Deliveries(ctx context.Context, id, limit string) ([]store.WebhookAttempt, error) {
	n, err := call.LimitParam(limit, defaultDeliveriesPage, maxDeliveriesPage)
	if err != nil {
		return nil, err
	}
	return call.AccountRecord(ctx, func() string { return "webhook endpoint " + call.Quoted(id) }, func(accountID int64) ([]store.WebhookAttempt, error) {
		return s.store.WebhookAttempts(ctx, accountID, id, n)
	})
}

func int32Of(p *int) *int32 {
	if p == nil {
		return nil
	}
	v := int32(*p)
	return &v
}
