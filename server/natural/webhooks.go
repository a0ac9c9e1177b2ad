package natural

import (
	"github.com/truckjobs/jobboard/domain"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
)

// The lead events' vocabularies, in the order of their enums. EventTypes
// maps domain.EventTypes onto the gRPC enum.
var (
	EventTypes             = vocabularyOf[jobboardv2.EventType](domain.EventTypes())
	WebhookAuthTypes       = Vocabulary[jobboardv2.WebhookAuthType]{[]string{"basic", "bearer"}}
	WebhookDisabledReasons = Vocabulary[jobboardv2.WebhookDisabledReason]{[]string{"manual", "gone", "failing"}}
)

// WebhookInput is an endpoint as a gRPC caller sends it, in the REST form
// the core validates. Empty strings are unset fields; an enum value outside
// its vocabulary becomes its number as text, which the validation refuses
// naming it. An auth without a type is left for the caller to refuse: to
// the core it would mean none.
func WebhookInput(w *jobboardv2.Webhook) *restv2.WebhookInput {
	out := &restv2.WebhookInput{Url: w.GetUrl(), Events: labels(EventTypes, w.GetEvents())}
	if w.GetDescription() != "" {
		out.Description = new(w.GetDescription())
	}
	if a := w.GetAuth(); a != nil {
		out.Auth = &restv2.WebhookAuthInput{Type: rulesOrEmpty(optionalLabel(WebhookAuthTypes, a.GetType())),
			Username: NonEmpty(a.GetUsername()), Password: NonEmpty(a.GetPassword()), Token: NonEmpty(a.GetToken())}
	}
	return out
}

// Webhook is an endpoint as the core answers it, in natural types.
func Webhook(w *restv2.Webhook) *jobboardv2.Webhook {
	out := &jobboardv2.Webhook{
		Id:          w.GetId(),
		Url:         w.GetUrl(),
		Events:      values(EventTypes, w.GetEvents()),
		Description: w.GetDescription(),
		Enabled:     w.GetEnabled(),
		CreatedAt:   timestamp(w.GetCreatedAt()),
		Secret:      w.GetSecret(),
	}
	if a := w.GetAuth(); a != nil {
		t, _ := WebhookAuthTypes.Value(a.GetType())
		out.Auth = &jobboardv2.WebhookAuth{Type: t, Username: a.GetUsername()}
	}
	if w.DisabledAt != nil {
		out.DisabledAt = timestamp(w.GetDisabledAt())
	}
	out.DisabledReason, _ = WebhookDisabledReasons.Value(w.GetDisabledReason())
	return out
}

// Webhooks maps a list of endpoints.
func Webhooks(in []*restv2.Webhook) []*jobboardv2.Webhook { return each(in, Webhook) }

// WebhookLinks are an endpoint's addresses.
func WebhookLinks(l *restv2.WebhookLinks) *jobboardv2.WebhookLinks {
	if l == nil {
		return nil
	}
	return &jobboardv2.WebhookLinks{Self: l.GetSelf()}
}

// NonEmpty is s, or nil (unset, null on the wire) when it is empty.
func NonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func rulesOrEmpty(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
