package channel

import (
	"net/mail"
	"slices"

	"github.com/openvitals/openvitals/internal/event"
	"github.com/openvitals/openvitals/internal/model"
)

// maxRecipients bounds an email channel's recipients.
const maxRecipients = 10

// Request is a channel's create or update request: the fields sent, nil where absent.
type Request struct {
	Name         *string   `json:"name"`
	Kind         *string   `json:"kind"`
	Events       *[]string `json:"events"`
	Digest       *bool     `json:"digest"`
	URL          *string   `json:"url"`
	Recipients   *[]string `json:"recipients"`
	RotateSecret *bool     `json:"rotateSecret"`
}

// Apply sets the fields present in in over c and returns the target to seal (nil when it does
// not change); on create, name, kind and the target are required. allowPrivate lets a URL name
// a private address (the local service), as CheckURL does.
func (in Request) Apply(c *model.Channel, create, allowPrivate bool) (*Target, error) {
	var errs model.FieldErrors
	if in.Name != nil {
		c.Name = *in.Name
		if msg := model.CheckName(c.Name); msg != "" {
			errs.Add("name", "%s", msg)
		}
	} else if create {
		errs.Add("name", "is required")
	}
	switch {
	case in.Kind != nil && !create && *in.Kind != c.Kind:
		errs.Add("kind", "cannot change: delete the channel and create another")
	case in.Kind != nil:
		c.Kind = *in.Kind
		if !slices.Contains(Kinds, c.Kind) {
			errs.Add("kind", "must be webhook, slack or email")
		}
	case create:
		errs.Add("kind", "is required")
	}
	if in.Events != nil {
		c.Events = nil
		for i, t := range *in.Events {
			if !event.Known(t) {
				errs.Add("events", "[%d] must be one of the event types", i)
			} else if !slices.Contains(c.Events, t) {
				c.Events = append(c.Events, t)
			}
		}
	}
	if in.Digest != nil {
		c.Digest = *in.Digest
	}
	var target *Target
	switch c.Kind {
	case Webhook, Slack:
		if in.Recipients != nil {
			errs.Add("recipients", "only an email channel has recipients")
		}
		if in.URL != nil {
			if msg := CheckURL(*in.URL, allowPrivate); msg != "" {
				errs.Add("url", "%s", msg)
			}
			target = &Target{URL: *in.URL}
		} else if create {
			errs.Add("url", "is required")
		}
	case Email:
		if in.URL != nil {
			errs.Add("url", "an email channel has recipients, not a URL")
		}
		if in.Recipients != nil {
			rs := *in.Recipients
			if len(rs) == 0 || len(rs) > maxRecipients {
				errs.Add("recipients", "must be 1 to %d addresses", maxRecipients)
			}
			for i, addr := range rs {
				a, err := mail.ParseAddress(addr)
				switch {
				case err != nil || a.Address != addr || len(addr) > 254:
					errs.Add("recipients", "[%d] must be an email address such as team@example.com", i)
				case MaskRecipients(addr) == addr:
					// What the API shows, sent back: it would replace the address.
					errs.Add("recipients", "[%d] is masked as the API shows it: send the address in full", i)
				}
			}
			target = &Target{Recipients: rs}
		} else if create {
			errs.Add("recipients", "is required")
		}
	}
	if in.RotateSecret != nil && *in.RotateSecret && c.Kind != Webhook {
		errs.Add("rotateSecret", "only a webhook has a signing secret")
	}
	if !create && in == (Request{}) {
		errs.Add("body", "send at least one of name, events, digest, url, recipients and rotateSecret")
	}
	return target, errs.Err()
}
