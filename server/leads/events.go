package leads

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/natural"
	"github.com/truckjobs/jobboard/server/store"
)

// Feed page sizes (docs/api.md, Events feed).
const (
	DefaultEventLimit = 100
	MaxEventLimit     = 1000
	// eventPageBytes bounds the event data of one page: a page of 1000
	// large drivers would otherwise be 100 MB and more, and over gRPC past
	// the 4 MiB a client with default settings takes (docs/api.md 7.3). The
	// page then holds fewer events than limit; links.next and next_after
	// go on from its last one.
	eventPageBytes = 2 << 20
)

// eventQuery is a checked feed request.
type eventQuery struct {
	after     string // as given, evt_...; empty for the oldest kept
	afterSeq  int64
	eventType string // empty for every type
	limit     int
}

// ListEvents answers a page of the calling account's feed with the
// address of the following one.
func (s *EventService) ListEvents(ctx context.Context, req *restv2.ListEventsRequest) (*restv2.ListEventsResponse, error) {
	limit, err := call.LimitParam(req.GetLimit(), DefaultEventLimit, MaxEventLimit)
	if err != nil {
		return nil, err
	}
	events, q, err := s.page(ctx, req.GetAfter(), req.GetType(), limit)
	if err != nil {
		return nil, err
	}
	out := &restv2.ListEventsResponse{Data: make([]*restv2.Event, len(events))}
	for i, e := range events {
		out.Data[i] = eventMessage(e)
	}
	next := url.Values{}
	if after := nextAfter(q, events); after != "" {
		next.Set("after", after)
	}
	if req.GetType() != "" {
		next.Set("type", req.GetType())
	}
	if req.GetLimit() != "" {
		next.Set("limit", req.GetLimit())
	}
	link := s.links.Base(ctx) + "/api/v2.0/events"
	if len(next) > 0 {
		link += "?" + next.Encode()
	}
	out.Links = &restv2.EventLinks{Next: link}
	return out, nil
}

// Page reads a page of the calling account's feed for the gRPC API: at
// most limit events after after, of eventType unless it is "", and where
// the page after it starts.
func (s *EventService) Page(ctx context.Context, after, eventType string, limit int) ([]store.Event, string, error) {
	events, q, err := s.page(ctx, after, eventType, limit)
	if err != nil {
		return nil, "", err
	}
	return events, nextAfter(q, events), nil
}

// page checks a feed request of the calling account and reads its events.
func (s *EventService) page(ctx context.Context, after, eventType string, limit int) ([]store.Event, eventQuery, error) {
	q := eventQuery{after: after, eventType: eventType, limit: limit}
	caller, err := call.From(ctx)
	if err != nil {
		return nil, q, err
	}
	if _, known := natural.EventTypes.Value(eventType); eventType != "" && !known {
		types := natural.EventTypes.Labels()
		return nil, q, call.InvalidField("type", eventType, fmt.Sprintf("is not an event type: %s or %s",
			strings.Join(types[:len(types)-1], ", "), types[len(types)-1]))
	}
	if after != "" {
		// Malformed, unknown, another account's or cleaned up: one
		// answer, so it never tells another account's ids from unknown ones.
		unknown := call.InvalidField("after", after, "is not one of the account's events (events are kept 30 days)")
		id, ok := store.ParseEventID(after)
		if !ok {
			return nil, q, unknown
		}
		q.afterSeq, err = s.store.EventSeq(ctx, caller.AccountID, id)
		if errors.Is(err, store.ErrNotFound) {
			return nil, q, unknown
		}
		if err != nil {
			return nil, q, call.Internal(ctx, err)
		}
	}
	events, err := s.store.EventFeed(ctx, caller.AccountID, q.afterSeq, eventType, limit, eventPageBytes)
	if err != nil {
		return nil, q, call.Internal(ctx, err)
	}
	return events, q, nil
}

// nextAfter is where the page after events starts: its last event, or
// the request's own position when it is empty.
func nextAfter(q eventQuery, events []store.Event) string {
	if len(events) == 0 {
		return q.after
	}
	return events[len(events)-1].ID
}
