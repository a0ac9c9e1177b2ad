package grpcapi

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/leads"
	"github.com/truckjobs/jobboard/server/natural"
	"github.com/truckjobs/jobboard/server/store"
)

// ListEvents is the feed with an enum type, an int32 limit (0: the
// default; outside 1-1000 refused, as over REST) and next_after in place
// of links.next.
func (g *grpcEvents) ListEvents(ctx context.Context, req *jobboardv2.ListEventsRequest) (*jobboardv2.ListEventsResponse, error) {
	limit := int(req.GetLimit())
	switch {
	case limit == 0:
		limit = leads.DefaultEventLimit
	case limit < 1 || limit > leads.MaxEventLimit:
		return nil, call.InvalidFieldText("limit", fmt.Sprintf("%d is not a number from 1 to %d", limit, leads.MaxEventLimit))
	}
	eventType := ""
	if t := req.GetType(); t != jobboardv2.EventType_EVENT_TYPE_UNSPECIFIED {
		var known bool
		if eventType, known = natural.EventTypes.Label(t); !known {
			return nil, call.InvalidFieldText("type", fmt.Sprintf("%d is not an event type", t))
		}
	}
	events, next, err := g.core.Page(ctx, req.GetAfter(), eventType, limit)
	if err != nil {
		return nil, err
	}
	out := &jobboardv2.ListEventsResponse{Data: make([]*jobboardv2.Event, len(events)), NextAfter: next}
	for i, e := range events {
		if out.Data[i], err = naturalEvent(e); err != nil {
			return nil, call.Internal(ctx, err)
		}
	}
	return out, nil
}

// naturalEvent is an event with its stored JSON data as a Struct.
func naturalEvent(e store.Event) (*jobboardv2.Event, error) {
	data := &structpb.Struct{}
	if err := protojson.Unmarshal(e.Data, data); err != nil {
		return nil, fmt.Errorf("event %s data: %w", e.ID, err)
	}
	eventType, _ := natural.EventTypes.Value(string(e.Type))
	return &jobboardv2.Event{Id: e.ID, Type: eventType, CreatedAt: timestamppb.New(e.CreatedAt), Data: data}, nil
}
