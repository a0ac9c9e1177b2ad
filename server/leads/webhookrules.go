package leads

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/truckjobs/jobboard/domain"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/webhook"
)

// The limits of an endpoint's fields (docs/api.md, Webhook endpoints).
const (
	maxWebhookURL         = 2048
	maxWebhookDescription = 1000
	maxAuthUsername       = 255
	maxAuthSecret         = 1000
)

// subscribableEvents are the types an endpoint may ask for, in the order
// they are stored and answered; webhook.test is sent by the test action
// whatever the subscription.
var subscribableEvents = domain.Names(domain.SubscribableEventTypes())

// checkEndpointURL applies the rules of an import's callbackUrl.
func checkEndpointURL(ctx context.Context, raw string, allowPrivate bool) error {
	if n := utf8.RuneCountInString(raw); n > maxWebhookURL {
		return call.InvalidFieldText("url", fmt.Sprintf("%d characters is longer than the %d allowed", n, maxWebhookURL))
	}
	if err := webhook.CheckURL(ctx, raw, allowPrivate); err != nil {
		return call.InvalidField("url", raw, err.Error())
	}
	return nil
}

// endpointEvents checks a non-empty subscription and returns it without
// repeats, in the order of subscribableEvents. An empty list never comes
// here: REST refuses [] as it decodes the body (an endpoint that wants
// nothing is disabled, not subscribed to nothing), and over gRPC an empty
// list means the field is unset.
func endpointEvents(events []string) ([]string, error) {
	for i, e := range events {
		field := fmt.Sprintf("events[%d]", i)
		if e == string(domain.EventWebhookTest) {
			return nil, call.InvalidField(field, e, "cannot be subscribed to: only the test action sends it, to the endpoint tested")
		}
		if !slices.Contains(subscribableEvents, e) {
			return nil, call.InvalidField(field, e, "is not an event type; allowed: "+strings.Join(subscribableEvents, ", "))
		}
	}
	var out []string
	for _, e := range subscribableEvents {
		if slices.Contains(events, e) {
			out = append(out, e)
		}
	}
	return out, nil
}

// endpointDescription checks a description; "" stands for none.
func endpointDescription(d string) (*string, error) {
	switch {
	case d == "":
		return nil, nil
	case !utf8.ValidString(d):
		return nil, call.InvalidFieldText("description", "is not valid UTF-8")
	case strings.ContainsRune(d, 0):
		return nil, call.InvalidFieldText("description", "must not contain NUL characters")
	}
	if n := utf8.RuneCountInString(d); n > maxWebhookDescription {
		return nil, call.InvalidFieldText("description", fmt.Sprintf("%d characters is longer than the %d allowed", n, maxWebhookDescription))
	}
	return &d, nil
}

// endpointAuth checks credentials; an auth without a type (the REST
// decoder's form of null) stands for none. Passwords and tokens are never
// quoted in a message.
func endpointAuth(a *restv2.WebhookAuthInput) (*store.WebhookAuth, error) {
	if a == nil || a.GetType() == "" {
		return nil, nil
	}
	switch a.GetType() {
	case "basic":
		if a.Token != nil {
			return nil, call.InvalidFieldText("auth.token", "is not allowed with type basic, which takes username and password")
		}
		if err := checkUsername(a.Username); err != nil {
			return nil, err
		}
		if err := checkAuthSecret("auth.password", a.GetPassword(), false); err != nil {
			return nil, err
		}
		return &store.WebhookAuth{Type: "basic", Username: a.Username, Secret: a.GetPassword()}, nil
	case "bearer":
		for _, f := range []struct {
			name string
			set  bool
		}{{"auth.username", a.Username != nil}, {"auth.password", a.Password != nil}} {
			if f.set {
				return nil, call.InvalidFieldText(f.name, "is not allowed with type bearer, which takes token")
			}
		}
		if err := checkAuthSecret("auth.token", a.GetToken(), true); err != nil {
			return nil, err
		}
		return &store.WebhookAuth{Type: "bearer", Secret: a.GetToken()}, nil
	}
	return nil, call.InvalidField("auth.type", a.GetType(), "is not an authentication type; allowed: basic, bearer")
}

func checkUsername(u *string) error {
	const field = "auth.username"
	switch {
	case u == nil || *u == "":
		return call.InvalidFieldText(field, "is required with type basic, 1 to 255 characters")
	case !utf8.ValidString(*u):
		return call.InvalidFieldText(field, "is not valid UTF-8")
	case strings.ContainsRune(*u, ':'):
		return call.InvalidField(field, *u, "must not contain a colon, which separates it from the password")
	case strings.ContainsFunc(*u, isControl):
		return call.InvalidFieldText(field, "must not contain control characters")
	}
	if n := utf8.RuneCountInString(*u); n > maxAuthUsername {
		return call.InvalidFieldText(field, fmt.Sprintf("%d characters is longer than the %d allowed", n, maxAuthUsername))
	}
	return nil
}

// checkAuthSecret checks a password (visibleASCII false: any text without
// control characters, possibly empty) or a bearer token (1 or more visible
// ASCII characters), describing the rule but never the value.
func checkAuthSecret(field, v string, visibleASCII bool) error {
	n := utf8.RuneCountInString(v)
	switch {
	case n > maxAuthSecret:
		return call.InvalidFieldText(field, fmt.Sprintf("%d characters is longer than the %d allowed", n, maxAuthSecret))
	case visibleASCII && n == 0:
		return call.InvalidFieldText(field, "is required with type bearer, 1 to 1,000 visible ASCII characters")
	case visibleASCII && strings.ContainsFunc(v, func(r rune) bool { return r < '!' || r > '~' }):
		return call.InvalidFieldText(field, "must be visible ASCII characters only, without spaces (value not shown)")
	case !utf8.ValidString(v):
		return call.InvalidFieldText(field, "is not valid UTF-8 (value not shown)")
	case strings.ContainsFunc(v, isControl):
		return call.InvalidFieldText(field, "must not contain control characters (value not shown)")
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }
