package grpcapi

import (
	"context"
	"strconv"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/server/natural"
	"github.com/truckjobs/jobboard/server/store"
)

func (g *grpcWebhooks) TestWebhook(ctx context.Context, req *jobboardv2.TestWebhookRequest) (*jobboardv2.TestWebhookResponse, error) {
	resp, err := g.core.TestWebhook(ctx, &restv2.TestWebhookRequest{Id: req.GetId()})
	if err != nil {
		return nil, err
	}
	return &jobboardv2.TestWebhookResponse{EventId: resp.GetData().GetEventId()}, nil
}

func (g *grpcWebhooks) RedeliverWebhookEvent(ctx context.Context, req *jobboardv2.RedeliverWebhookEventRequest) (*jobboardv2.RedeliverWebhookEventResponse, error) {
	_, err := g.core.RedeliverWebhookEvent(ctx, &restv2.RedeliverWebhookEventRequest{Id: req.GetId(), EventId: req.GetEventId()})
	if err != nil {
		return nil, err
	}
	return &jobboardv2.RedeliverWebhookEventResponse{}, nil
}

// ListWebhookDeliveries answers the attempts in natural types; a limit of
// 0 is the default.
func (g *grpcWebhooks) ListWebhookDeliveries(ctx context.Context, req *jobboardv2.ListWebhookDeliveriesRequest) (*jobboardv2.ListWebhookDeliveriesResponse, error) {
	limit := ""
	if req.GetLimit() != 0 {
		limit = strconv.Itoa(int(req.GetLimit()))
	}
	attempts, err := g.core.Deliveries(ctx, req.GetId(), limit)
	if err != nil {
		return nil, err
	}
	out := make([]*jobboardv2.WebhookDelivery, len(attempts))
	for i, a := range attempts {
		d := &jobboardv2.WebhookDelivery{EventId: store.EventID(a.EventID), EventType: eventTypeOf(string(a.EventType)),
			Attempt: int32(a.Attempt), AttemptedAt: timestamppb.New(a.AttemptedAt),
			Duration: durationpb.New(time.Duration(a.DurationMS) * time.Millisecond)}
		if a.StatusCode != nil {
			d.StatusCode = new(int32(*a.StatusCode))
		}
		if a.Error != nil {
			d.Error = *a.Error
		}
		out[i] = d
	}
	return &jobboardv2.ListWebhookDeliveriesResponse{Data: out}, nil
}

// eventTypeOf is the enum value of an event type's text, UNSPECIFIED for
// a type the service no longer knows.
func eventTypeOf(t string) jobboardv2.EventType {
	v, _ := natural.EventTypes.Value(t)
	return v
}
