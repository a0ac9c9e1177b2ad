package leads

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/webhook"
)

// WebhookService implements jobboard.rest.v2.WebhookService: the account's
// webhook endpoints, their secrets and their deliveries (docs/api.md,
// Events and webhooks).
type WebhookService struct {
	restv2.UnimplementedWebhookServiceServer
	store *store.Store
	// queue carries deliveries: test events and redeliveries are queued
	// in the transaction that asks for them.
	queue *store.Queue
	links call.Links
	// allowPrivate lifts the public-address rule on endpoint URLs
	// (JOBBOARD_CALLBACK_ALLOW_PRIVATE), as on callback URLs.
	allowPrivate bool
}

// EventService implements jobboard.rest.v2.EventService: the account's
// feed of events.
type EventService struct {
	restv2.UnimplementedEventServiceServer
	store *store.Store
	links call.Links
}

// eventMessage is an event in its REST form: the body of its deliveries
// (gateway/render.JSON writes it) and an item of the feed.
func eventMessage(e store.Event) *restv2.Event {
	return &restv2.Event{Id: e.ID, Type: string(e.Type), CreatedAt: call.Time(e.CreatedAt), Data: e.Data}
}

// CreateWebhook adds an endpoint with a fresh secret, which this answer
// and RotateWebhookSecret's are the only ones to show.
func (s *WebhookService) CreateWebhook(ctx context.Context, req *restv2.CreateWebhookRequest) (*restv2.CreateWebhookResponse, error) {
	caller, err := call.From(ctx)
	if err != nil {
		return nil, err
	}
	e, err := s.newEndpoint(ctx, req.GetWebhook())
	if err != nil {
		return nil, err
	}
	created, err := s.store.CreateWebhookEndpoint(ctx, caller.AccountID, e)
	if errors.Is(err, store.ErrTooManyEndpoints) {
		return nil, status.Errorf(codes.FailedPrecondition,
			"an account may have at most %d webhook endpoints; delete one before adding another", store.MaxWebhookEndpoints)
	}
	if err != nil {
		return nil, call.Internal(ctx, err)
	}
	return &restv2.CreateWebhookResponse{Data: webhookMessage(created, true), Links: s.webhookLinks(ctx, created)}, nil
}

// newEndpoint validates the body of a create.
func (s *WebhookService) newEndpoint(ctx context.Context, w *restv2.WebhookInput) (store.NewWebhookEndpoint, error) {
	e := store.NewWebhookEndpoint{URL: w.GetUrl(), Events: subscribableEvents, Secret: webhook.NewSecret()}
	if w.GetUrl() == "" {
		return e, call.InvalidFieldText("url", "is required: the absolute http or https address deliveries are POSTed to")
	}
	if err := checkEndpointURL(ctx, w.GetUrl(), s.allowPrivate); err != nil {
		return e, err
	}
	var err error
	if len(w.GetEvents()) > 0 {
		if e.Events, err = endpointEvents(w.GetEvents()); err != nil {
			return e, err
		}
	}
	if e.Description, err = endpointDescription(w.GetDescription()); err != nil {
		return e, err
	}
	if e.Auth, err = endpointAuth(w.GetAuth()); err != nil {
		return e, err
	}
	e.Disabled = w.Enabled != nil && !w.GetEnabled()
	return e, nil
}

// ListWebhooks returns the account's endpoints, oldest first.
func (s *WebhookService) ListWebhooks(ctx context.Context, _ *restv2.ListWebhooksRequest) (*restv2.ListWebhooksResponse, error) {
	caller, err := call.From(ctx)
	if err != nil {
		return nil, err
	}
	endpoints, err := s.store.WebhookEndpoints(ctx, caller.AccountID)
	if err != nil {
		return nil, call.Internal(ctx, err)
	}
	resp := &restv2.ListWebhooksResponse{Data: make([]*restv2.Webhook, len(endpoints))}
	for i, e := range endpoints {
		resp.Data[i] = webhookMessage(e, false)
	}
	return resp, nil
}

// GetWebhook returns one endpoint, without its secret.
func (s *WebhookService) GetWebhook(ctx context.Context, req *restv2.GetWebhookRequest) (*restv2.GetWebhookResponse, error) {
	e, err := s.endpoint(ctx, req.GetId(), s.store.WebhookEndpoint)
	if err != nil {
		return nil, err
	}
	return &restv2.GetWebhookResponse{Data: webhookMessage(e, false), Links: s.webhookLinks(ctx, e)}, nil
}

// UpdateWebhook changes the fields the body has.
func (s *WebhookService) UpdateWebhook(ctx context.Context, req *restv2.UpdateWebhookRequest) (*restv2.UpdateWebhookResponse, error) {
	change, err := s.endpointChange(ctx, req.GetWebhook())
	if err != nil {
		return nil, err
	}
	e, err := s.endpoint(ctx, req.GetId(), func(ctx context.Context, accountID int64, id string) (store.WebhookEndpoint, error) {
		return s.store.UpdateWebhookEndpoint(ctx, accountID, id, change)
	})
	if err != nil {
		return nil, err
	}
	return &restv2.UpdateWebhookResponse{Data: webhookMessage(e, false), Links: s.webhookLinks(ctx, e)}, nil
}

// endpointChange validates the body of an update: url and events are
// changed when given; description and auth when present, null ("" and an
// auth without a type, as the REST decoder passes them) clearing them.
func (s *WebhookService) endpointChange(ctx context.Context, w *restv2.WebhookInput) (store.WebhookEndpointChange, error) {
	var c store.WebhookEndpointChange
	var err error
	if w.GetUrl() != "" {
		if err := checkEndpointURL(ctx, w.GetUrl(), s.allowPrivate); err != nil {
			return c, err
		}
		c.URL = &w.Url
	}
	if len(w.GetEvents()) > 0 {
		if c.Events, err = endpointEvents(w.GetEvents()); err != nil {
			return c, err
		}
	}
	if w.Description != nil {
		c.SetDescription = true
		if c.Description, err = endpointDescription(w.GetDescription()); err != nil {
			return c, err
		}
	}
	if w.Auth != nil {
		c.SetAuth = true
		if c.Auth, err = endpointAuth(w.GetAuth()); err != nil {
			return c, err
		}
	}
	c.Enabled = w.Enabled
	return c, nil
}

// DeleteWebhook removes an endpoint; its pending deliveries stop.
func (s *WebhookService) DeleteWebhook(ctx context.Context, req *restv2.DeleteWebhookRequest) (*restv2.DeleteWebhookResponse, error) {
	_, err := s.endpoint(ctx, req.GetId(), func(ctx context.Context, accountID int64, id string) (store.WebhookEndpoint, error) {
		return store.WebhookEndpoint{}, s.store.DeleteWebhookEndpoint(ctx, accountID, id)
	})
	if err != nil {
		return nil, err
	}
	return &restv2.DeleteWebhookResponse{}, nil
}

// RotateWebhookSecret gives an endpoint a new secret and shows it; the old
// one signs beside it for store.SecretOverlap.
func (s *WebhookService) RotateWebhookSecret(ctx context.Context, req *restv2.RotateWebhookSecretRequest) (*restv2.RotateWebhookSecretResponse, error) {
	secret := webhook.NewSecret()
	e, err := s.endpoint(ctx, req.GetId(), func(ctx context.Context, accountID int64, id string) (store.WebhookEndpoint, error) {
		return s.store.RotateEndpointSecret(ctx, accountID, id, secret)
	})
	if err != nil {
		return nil, err
	}
	return &restv2.RotateWebhookSecretResponse{Data: webhookMessage(e, true), Links: s.webhookLinks(ctx, e)}, nil
}

// endpoint runs op on an endpoint of the calling account named by its
// public id. A malformed id is NotFound, as another account's is.
func (s *WebhookService) endpoint(ctx context.Context, publicID string,
	op func(ctx context.Context, accountID int64, id string) (store.WebhookEndpoint, error)) (store.WebhookEndpoint, error) {
	return call.AccountRecord(ctx, func() string { return "webhook endpoint " + call.Quoted(publicID) }, func(accountID int64) (store.WebhookEndpoint, error) {
		id, ok := store.ParseEndpointID(publicID)
		if !ok {
			return store.WebhookEndpoint{}, store.ErrNotFound
		}
		return op(ctx, accountID, id)
	})
}

func (s *WebhookService) webhookLinks(ctx context.Context, e store.WebhookEndpoint) *restv2.WebhookLinks {
	return &restv2.WebhookLinks{Self: s.links.Base(ctx) + "/api/v2.0/webhooks/" + store.EndpointID(e.ID)}
}

// webhookMessage is an endpoint in its REST form; the secret only when
// withSecret, and the password or token never.
func webhookMessage(e store.WebhookEndpoint, withSecret bool) *restv2.Webhook {
	msg := &restv2.Webhook{
		Id:             store.EndpointID(e.ID),
		Url:            e.URL,
		Events:         append([]string{}, e.Events...),
		Description:    e.Description,
		Enabled:        e.Enabled,
		CreatedAt:      call.Time(e.CreatedAt),
		DisabledReason: e.DisabledReason,
	}
	if e.AuthType != nil {
		msg.Auth = &restv2.WebhookAuth{Type: *e.AuthType, Username: e.AuthUsername}
	}
	if e.DisabledAt != nil {
		msg.DisabledAt = new(call.Time(*e.DisabledAt))
	}
	if withSecret {
		msg.Secret = &e.Secret
	}
	return msg
}
