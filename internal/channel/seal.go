package channel

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/openvitals/openvitals/internal/event"
	"github.com/openvitals/openvitals/internal/model"
)

// Sealer seals and opens values bound to an owner; *seal.Keyring is one.
type Sealer interface {
	Seal(ctx context.Context, plaintext, aad []byte) ([]byte, error)
	Open(ctx context.Context, sealed, aad []byte) ([]byte, error)
}

// Seal stores t in c sealed for c's website and ID, with what the API shows of it: a URL's
// scheme and host, or the recipients masked. A webhook keeps its secret unless t has a new one.
func Seal(ctx context.Context, keys Sealer, w model.Website, c *model.Channel, t Target) error {
	aad := model.ChannelAAD(w, c.ID)
	plain := t.URL
	c.Shown = Shown(t.URL)
	if c.Kind == Email {
		plain = strings.Join(t.Recipients, "\n")
		c.Shown = MaskRecipients(strings.Join(t.Recipients, ", "))
	}
	sealed, err := keys.Seal(ctx, []byte(plain), aad)
	if err != nil {
		return fmt.Errorf("seal channel target: %w", err)
	}
	c.Target = sealed
	if c.Kind != Webhook {
		c.Secret = nil
		return nil
	}
	if t.Secret != "" {
		if c.Secret, err = keys.Seal(ctx, []byte(t.Secret), aad); err != nil {
			return fmt.Errorf("seal channel secret: %w", err)
		}
	}
	return nil
}

// Open returns a channel's target, opened.
func Open(ctx context.Context, keys Sealer, w model.Website, c model.Channel) (Target, error) {
	aad := model.ChannelAAD(w, c.ID)
	plain, err := keys.Open(ctx, c.Target, aad)
	if err != nil {
		return Target{}, fmt.Errorf("open channel %s: %w", c.ID, err)
	}
	var t Target
	if c.Kind == Email {
		t.Recipients = strings.Split(string(plain), "\n")
	} else {
		t.URL = string(plain)
	}
	if c.Kind == Webhook && len(c.Secret) > 0 {
		secret, err := keys.Open(ctx, c.Secret, aad)
		if err != nil {
			return Target{}, fmt.Errorf("open channel %s secret: %w", c.ID, err)
		}
		t.Secret = string(secret)
	}
	return t, nil
}

// Takes tells whether a channel takes events of type t.
func Takes(c model.Channel, t string) bool {
	return len(c.Events) == 0 || t == event.ChannelTest || t == event.DailyDigest || slices.Contains(c.Events, t) ||
		// A verdict follows up the detection a channel took, in its thread.
		t == event.IncidentVerdict && slices.Contains(c.Events, event.RegressionDetected)
}
