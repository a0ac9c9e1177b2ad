package decode

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/truckjobs/jobboard/domain"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
)

// A webhook body is read strictly, unlike the API's older resources: an
// unknown member is refused rather than ignored, so that a misspelt
// "evnets" cannot silently subscribe an endpoint to everything.
var (
	webhookKeys     = []string{"url", "events", "description", "auth", "enabled"}
	webhookAuthKeys = []string{"type", "username", "password", "token"}
)

// WebhookShape is the refusal of a webhook body that is not the object an
// endpoint is written as, empty included.
const WebhookShape = `the body must be a JSON object: {"url": "...", "events": [...], "description": "...", "auth": {...}, "enabled": true}`

// jsonWebhook reads an endpoint's body (create and update), keeping absent
// and null apart as UpdateWebhookRequest says: "description": null becomes
// an empty description and "auth": null an auth without a type, both of
// which clear the field; null for url, events or enabled is refused.
func jsonWebhook(dec *jsontext.Decoder, m *restv2.WebhookInput) error {
	return jsonObject(dec, WebhookShape, webhookKeys, "", func(name string) error {
		var err error
		switch name {
		case "url":
			if m.Url, err = jsonText(dec, "url"); err == nil && m.Url == "" {
				err = errors.New(`url: "" must be an absolute http or https URL`)
			}
		case "events":
			m.Events, err = jsonEventList(dec)
		case "description":
			if dec.PeekKind() == 'n' {
				_, err = dec.ReadToken()
				m.Description = new(string)
				return err
			}
			var d string
			d, err = jsonText(dec, "description")
			m.Description = &d
		case "auth":
			m.Auth, err = jsonWebhookAuth(dec)
		case "enabled":
			m.Enabled, err = jsonBool(dec, "enabled")
		}
		return err
	})
}

// jsonWebhookAuth reads credentials; null is an auth without a type.
func jsonWebhookAuth(dec *jsontext.Decoder) (*restv2.WebhookAuthInput, error) {
	a := &restv2.WebhookAuthInput{}
	if dec.PeekKind() == 'n' {
		_, err := dec.ReadToken()
		return a, err
	}
	const shape = `auth: must be an object: {"type": "basic", "username": "...", "password": "..."} or {"type": "bearer", "token": "..."}, or null for none`
	sawType := false
	err := jsonObject(dec, shape, webhookAuthKeys, "auth.", func(name string) error {
		v, err := jsonText(dec, "auth."+name)
		switch name {
		case "type":
			sawType, a.Type = true, v
			if err == nil && v == "" {
				err = errors.New(`auth.type: "" is not an authentication type; allowed: basic, bearer`)
			}
		case "username":
			a.Username = &v
		case "password":
			a.Password = &v
		case "token":
			a.Token = &v
		}
		return err
	})
	if err == nil && !sawType {
		err = errors.New("auth.type: is required: basic or bearer")
	}
	return a, err
}

// jsonObject reads an object whose member names must be among keys,
// calling member for each; prefix names the object's members in messages.
func jsonObject(dec *jsontext.Decoder, notObject string, keys []string, prefix string, member func(name string) error) error {
	if dec.PeekKind() != '{' {
		if _, err := dec.ReadValue(); err != nil {
			return err
		}
		return errors.New(notObject)
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	var named uint64 // the keys named so far, by index
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		name := tok.String()
		k := slices.Index(keys, name)
		if k < 0 {
			return fmt.Errorf("%s%s: unknown field; allowed: %s", prefix, quoteName(name), strings.Join(keys, ", "))
		}
		if named&(1<<k) != 0 {
			return repeatedMemberError(prefix, name)
		}
		named |= 1 << k
		if err := member(name); err != nil {
			return err
		}
	}
	_, err := dec.ReadToken() // the closing }
	return err
}

// jsonEventList reads a non-empty array of strings.
func jsonEventList(dec *jsontext.Decoder) ([]string, error) {
	if k := dec.PeekKind(); k != '[' {
		return nil, fmt.Errorf("events: must be an array of event types, got %s", kindName(k))
	}
	var out []string
	err := jsonArray(dec, "", eventListLimit, func(i int) error {
		v, err := jsonText(dec, fmt.Sprintf("events[%d]", i))
		out = append(out, v)
		return err
	})
	if err == nil && len(out) == 0 {
		err = errors.New("events: [] is empty; name at least one of " + strings.Join(subscribable, ", ") +
			", or leave events out for all of them")
	}
	return out, err
}

// subscribable are the event types an endpoint may name, and
// eventListLimit the bound of the list, whose refusal counts them.
var (
	subscribable   = domain.Names(domain.SubscribableEventTypes())
	eventListLimit = itemLimit{max: 100,
		refusal: "events: more than 100 items; there are only " + spelledOut(len(subscribable)) + " event types to subscribe to"}
)

// jsonText reads a string member; any other kind of value, null included,
// is refused naming the field.
func jsonText(dec *jsontext.Decoder, field string) (string, error) {
	if k := dec.PeekKind(); k != '"' {
		if _, err := dec.ReadValue(); err != nil {
			return "", err
		}
		return "", fmt.Errorf("%s: must be a string, got %s", field, kindName(k))
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return "", err
	}
	return tok.String(), nil
}

// jsonBool reads a true or false member.
func jsonBool(dec *jsontext.Decoder, field string) (*bool, error) {
	k := dec.PeekKind()
	if _, err := dec.ReadValue(); err != nil {
		return nil, err
	}
	if k != 't' && k != 'f' {
		return nil, fmt.Errorf("%s: must be true or false, got %s", field, kindName(k))
	}
	b := k == 't'
	return &b, nil
}

// kindName is a JSON value's kind in words.
// spelledOut writes a count below ten as a word, as the messages that
// count a list of the service's own read best; larger counts as digits.
func spelledOut(n int) string {
	if words := []string{"no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}; n >= 0 && n < len(words) {
		return words[n]
	}
	return strconv.Itoa(n)
}

func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return "no value"
}

// quoteName quotes a member name for a message, cut to 100 characters.
func quoteName(name string) string {
	if len(name) > 100 {
		name = name[:100] + "..."
	}
	return fmt.Sprintf("%q", name)
}
