package server

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/server/leads"
)

// TestGRPCWebhooks calls each endpoint method over a real gRPC connection
// in natural types: enums for event types, auth types and reasons,
// timestamps, and an update_mask for partial updates.
func TestGRPCWebhooks(t *testing.T) {
	f := newGRPCFixture(t, Config{AllowPrivateCallbacks: true})
	hooks := jobboardv2.NewWebhookServiceClient(f.conn(t, "127.0.0.1"))
	ctx := withKey(f.a.APIKey)
	const token = "grpc-token-never-shown"
	created, err := hooks.CreateWebhook(ctx, &jobboardv2.CreateWebhookRequest{Webhook: &jobboardv2.Webhook{
		Url:    "http://127.0.0.1:9/hook",
		Events: []jobboardv2.EventType{jobboardv2.EventType_EVENT_TYPE_JOB_IMPORT_COMPLETED},
		Auth:   &jobboardv2.WebhookAuth{Type: jobboardv2.WebhookAuthType_WEBHOOK_AUTH_TYPE_BEARER, Token: token},
	}})
	if err != nil {
		t.Fatal(err)
	}
	w := created.GetData()
	if !strings.HasPrefix(w.GetId(), "we_") || !strings.HasPrefix(w.GetSecret(), "whsec_") || !w.GetEnabled() ||
		w.GetCreatedAt() == nil || w.GetDisabledAt() != nil ||
		len(w.GetEvents()) != 1 || w.GetEvents()[0] != jobboardv2.EventType_EVENT_TYPE_JOB_IMPORT_COMPLETED ||
		w.GetAuth().GetType() != jobboardv2.WebhookAuthType_WEBHOOK_AUTH_TYPE_BEARER || w.GetAuth().GetToken() != "" ||
		!strings.HasSuffix(created.GetLinks().GetSelf(), "/api/v2.0/webhooks/"+w.GetId()) {
		t.Errorf("CreateWebhook: %v", created)
	}
	id := w.GetId()
	list, err := hooks.ListWebhooks(ctx, &jobboardv2.ListWebhooksRequest{})
	if err != nil || len(list.GetData()) != 1 || list.GetData()[0].GetId() != id || list.GetData()[0].GetSecret() != "" {
		t.Errorf("ListWebhooks: %v %v", list, err)
	}
	if other, err := hooks.ListWebhooks(withKey(f.b.APIKey), &jobboardv2.ListWebhooksRequest{}); err != nil || len(other.GetData()) != 0 {
		t.Errorf("B's ListWebhooks: %v %v", other, err)
	}

	updated, err := hooks.UpdateWebhook(ctx, &jobboardv2.UpdateWebhookRequest{Id: id,
		Webhook:    &jobboardv2.Webhook{Description: "CRM", Enabled: false, Url: "ignored: not in the mask"},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"description", "enabled", "auth"}}})
	u := updated.GetData()
	if err != nil || u.GetDescription() != "CRM" || u.GetEnabled() || u.GetDisabledAt() == nil || u.GetAuth() != nil ||
		u.GetDisabledReason() != jobboardv2.WebhookDisabledReason_WEBHOOK_DISABLED_REASON_MANUAL || u.GetUrl() != "http://127.0.0.1:9/hook" {
		t.Errorf("UpdateWebhook: %v %v", updated, err)
	}
	for _, c := range []struct {
		name  string
		req   *jobboardv2.UpdateWebhookRequest
		field string
	}{
		{"no mask", &jobboardv2.UpdateWebhookRequest{Id: id, Webhook: &jobboardv2.Webhook{Description: "x"}}, "update_mask"},
		{"unknown path", &jobboardv2.UpdateWebhookRequest{Id: id, Webhook: &jobboardv2.Webhook{},
			UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"secret"}}}, "update_mask"},
		{"auth without type", &jobboardv2.UpdateWebhookRequest{Id: id, Webhook: &jobboardv2.Webhook{Auth: &jobboardv2.WebhookAuth{Token: token}},
			UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"auth"}}}, "webhook.auth.type"},
		{"bad url", &jobboardv2.UpdateWebhookRequest{Id: id, Webhook: &jobboardv2.Webhook{Url: "ftp://x"},
			UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"url"}}}, "webhook.url"},
		{"test event", &jobboardv2.UpdateWebhookRequest{Id: id, Webhook: &jobboardv2.Webhook{Events: []jobboardv2.EventType{jobboardv2.EventType_EVENT_TYPE_WEBHOOK_TEST}},
			UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"events"}}}, "webhook.events[0]"},
	} {
		_, err := hooks.UpdateWebhook(ctx, c.req)
		if status.Code(err) != codes.InvalidArgument || violationField(err) != c.field || strings.Contains(err.Error(), token) {
			t.Errorf("UpdateWebhook %s: %v (field %q), want InvalidArgument naming %s", c.name, err, violationField(err), c.field)
		}
	}

	got, err := hooks.GetWebhook(ctx, &jobboardv2.GetWebhookRequest{Id: id})
	if err != nil || got.GetData().GetDescription() != "CRM" || got.GetData().GetSecret() != "" {
		t.Errorf("GetWebhook: %v %v", got, err)
	}
	rotated, err := hooks.RotateWebhookSecret(ctx, &jobboardv2.RotateWebhookSecretRequest{Id: id})
	if s := rotated.GetData().GetSecret(); err != nil || !strings.HasPrefix(s, "whsec_") || s == w.GetSecret() {
		t.Errorf("RotateWebhookSecret: %v %v", rotated, err)
	}
	if _, err := hooks.DeleteWebhook(withKey(f.b.APIKey), &jobboardv2.DeleteWebhookRequest{Id: id}); status.Code(err) != codes.NotFound {
		t.Errorf("B's DeleteWebhook: %v", err)
	}
	if _, err := hooks.DeleteWebhook(ctx, &jobboardv2.DeleteWebhookRequest{Id: id}); err != nil {
		t.Errorf("DeleteWebhook: %v", err)
	}
	if _, err := hooks.GetWebhook(ctx, &jobboardv2.GetWebhookRequest{Id: id}); status.Code(err) != codes.NotFound {
		t.Errorf("GetWebhook after delete: %v", err)
	}
}

// violationField is the field the first BadRequest violation of err names.
func violationField(err error) string {
	if fields := badRequestFields(err); len(fields) > 0 {
		return fields[0]
	}
	return ""
}

// TestGRPCQueuedActionsLimit: over gRPC too, the 11th test or redeliver
// action queued on an endpoint is FailedPrecondition (422 over REST)
// naming the endpoint, the count and the limit.
func TestGRPCQueuedActionsLimit(t *testing.T) {
	f := newGRPCFixture(t, Config{AllowPrivateCallbacks: true})
	hooks := jobboardv2.NewWebhookServiceClient(f.conn(t, "127.0.0.1"))
	ctx := withKey(f.a.APIKey)
	created, err := hooks.CreateWebhook(ctx, &jobboardv2.CreateWebhookRequest{Webhook: &jobboardv2.Webhook{Url: "http://127.0.0.1:9/hook"}})
	if err != nil {
		t.Fatal(err)
	}
	id := created.GetData().GetId()
	var eventID string
	for i := range leads.MaxQueuedActions {
		resp, err := hooks.TestWebhook(ctx, &jobboardv2.TestWebhookRequest{Id: id})
		if err != nil {
			t.Fatalf("test %d: %v", i+1, err)
		}
		eventID = resp.GetEventId()
	}
	want := "webhook endpoint " + id + " has 10 test or redeliver deliveries queued, the most it may have at once (10); " +
		"ask again once one has been delivered or given up"
	_, err = hooks.TestWebhook(ctx, &jobboardv2.TestWebhookRequest{Id: id})
	if status.Code(err) != codes.FailedPrecondition || status.Convert(err).Message() != want {
		t.Errorf("11th TestWebhook: %v, want FailedPrecondition %q", err, want)
	}
	_, err = hooks.RedeliverWebhookEvent(ctx, &jobboardv2.RedeliverWebhookEventRequest{Id: id, EventId: eventID})
	if status.Code(err) != codes.FailedPrecondition || status.Convert(err).Message() != want {
		t.Errorf("RedeliverWebhookEvent past the limit: %v, want FailedPrecondition %q", err, want)
	}
}
