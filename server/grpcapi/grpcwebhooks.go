package grpcapi

import (
	"context"
	"strings"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/leads"
	"github.com/truckjobs/jobboard/server/natural"
)

// grpcWebhooks serves jobboard.v2.WebhookService over the core the REST
// gateway calls, converting to and from the natural types.
type grpcWebhooks struct {
	jobboardv2.UnimplementedWebhookServiceServer
	core *leads.WebhookService
}

// grpcEvents serves jobboard.v2.EventService over the core the REST
// gateway calls.
type grpcEvents struct {
	jobboardv2.UnimplementedEventServiceServer
	core *leads.EventService
}

// inWebhook names the core's fields as a gRPC caller does: inside webhook.
func inWebhook(err error) error {
	return call.RenameFields(err, func(field string) string { return "webhook." + field })
}

func (g *grpcWebhooks) CreateWebhook(ctx context.Context, req *jobboardv2.CreateWebhookRequest) (*jobboardv2.CreateWebhookResponse, error) {
	if err := checkAuthType(req.GetWebhook().GetAuth()); err != nil {
		return nil, err
	}
	resp, err := g.core.CreateWebhook(ctx, &restv2.CreateWebhookRequest{Webhook: natural.WebhookInput(req.GetWebhook())})
	if err != nil {
		return nil, inWebhook(err)
	}
	return &jobboardv2.CreateWebhookResponse{Data: natural.Webhook(resp.GetData()), Links: natural.WebhookLinks(resp.GetLinks())}, nil
}

// checkAuthType refuses credentials without a type, which the core would
// take for none.
func checkAuthType(a *jobboardv2.WebhookAuth) error {
	if a != nil && a.GetType() == jobboardv2.WebhookAuthType_WEBHOOK_AUTH_TYPE_UNSPECIFIED {
		return call.InvalidFieldText("webhook.auth.type", "is required: WEBHOOK_AUTH_TYPE_BASIC or WEBHOOK_AUTH_TYPE_BEARER; leave auth unset for none")
	}
	return nil
}

func (g *grpcWebhooks) ListWebhooks(ctx context.Context, _ *jobboardv2.ListWebhooksRequest) (*jobboardv2.ListWebhooksResponse, error) {
	resp, err := g.core.ListWebhooks(ctx, &restv2.ListWebhooksRequest{})
	if err != nil {
		return nil, err
	}
	return &jobboardv2.ListWebhooksResponse{Data: natural.Webhooks(resp.GetData())}, nil
}

func (g *grpcWebhooks) GetWebhook(ctx context.Context, req *jobboardv2.GetWebhookRequest) (*jobboardv2.GetWebhookResponse, error) {
	resp, err := g.core.GetWebhook(ctx, &restv2.GetWebhookRequest{Id: req.GetId()})
	if err != nil {
		return nil, err
	}
	return &jobboardv2.GetWebhookResponse{Data: natural.Webhook(resp.GetData()), Links: natural.WebhookLinks(resp.GetLinks())}, nil
}

func (g *grpcWebhooks) UpdateWebhook(ctx context.Context, req *jobboardv2.UpdateWebhookRequest) (*jobboardv2.UpdateWebhookResponse, error) {
	body, err := maskedWebhook(req)
	if err != nil {
		return nil, err
	}
	resp, err := g.core.UpdateWebhook(ctx, &restv2.UpdateWebhookRequest{Id: req.GetId(), Webhook: body})
	if err != nil {
		return nil, inWebhook(err)
	}
	return &jobboardv2.UpdateWebhookResponse{Data: natural.Webhook(resp.GetData()), Links: natural.WebhookLinks(resp.GetLinks())}, nil
}

// updatablePaths are the update_mask paths UpdateWebhook takes.
var updatablePaths = []string{"url", "events", "description", "auth", "enabled"}

// maskedWebhook is the REST body of an update: the fields update_mask names,
// in the core's form (description "" clears it, an auth without a type
// removes the credentials).
func maskedWebhook(req *jobboardv2.UpdateWebhookRequest) (*restv2.WebhookInput, error) {
	paths := req.GetUpdateMask().GetPaths()
	if len(paths) == 0 {
		return nil, call.InvalidFieldText("update_mask", "is empty; name the fields to change: "+strings.Join(updatablePaths, ", "))
	}
	w := req.GetWebhook()
	in := natural.WebhookInput(w)
	out := &restv2.WebhookInput{}
	for _, p := range paths {
		switch p {
		case "url":
			if w.GetUrl() == "" {
				return nil, call.InvalidFieldText("webhook.url", `"" must be an absolute http or https URL`)
			}
			out.Url = in.Url
		case "events":
			if len(w.GetEvents()) == 0 {
				return nil, call.InvalidFieldText("webhook.events", "is empty; name at least one event type")
			}
			out.Events = in.Events
		case "description":
			out.Description = new(w.GetDescription())
		case "auth":
			if err := checkAuthType(w.GetAuth()); err != nil {
				return nil, err
			}
			out.Auth = in.Auth
			if out.Auth == nil {
				out.Auth = &restv2.WebhookAuthInput{} // no type: remove
			}
		case "enabled":
			out.Enabled = &w.Enabled
		default:
			return nil, call.InvalidField("update_mask", p, "is not a field UpdateWebhook changes; allowed: "+strings.Join(updatablePaths, ", "))
		}
	}
	return out, nil
}

func (g *grpcWebhooks) DeleteWebhook(ctx context.Context, req *jobboardv2.DeleteWebhookRequest) (*jobboardv2.DeleteWebhookResponse, error) {
	if _, err := g.core.DeleteWebhook(ctx, &restv2.DeleteWebhookRequest{Id: req.GetId()}); err != nil {
		return nil, err
	}
	return &jobboardv2.DeleteWebhookResponse{}, nil
}

func (g *grpcWebhooks) RotateWebhookSecret(ctx context.Context, req *jobboardv2.RotateWebhookSecretRequest) (*jobboardv2.RotateWebhookSecretResponse, error) {
	resp, err := g.core.RotateWebhookSecret(ctx, &restv2.RotateWebhookSecretRequest{Id: req.GetId()})
	if err != nil {
		return nil, err
	}
	return &jobboardv2.RotateWebhookSecretResponse{Data: natural.Webhook(resp.GetData()), Links: natural.WebhookLinks(resp.GetLinks())}, nil
}
