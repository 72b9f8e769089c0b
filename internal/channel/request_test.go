package channel

import (
	"errors"
	"slices"
	"testing"

	"github.com/openvitals/openvitals/internal/event"
	"github.com/openvitals/openvitals/internal/model"
)

// TestRequestApply: a channel's rules without a table: what a create needs, every bad field
// named at once, the target to seal only when it changes, the kind fixed once made.
func TestRequestApply(t *testing.T) {
	str := func(s string) *string { return &s }
	fields := func(err error) []string {
		var inv *model.InvalidError
		if !errors.As(err, &inv) {
			t.Fatalf("%v, want *model.InvalidError", err)
		}
		var out []string
		for _, f := range inv.Fields {
			out = append(out, f.Field)
		}
		return out
	}
	var c model.Channel
	_, err := Request{}.Apply(&c, true, false)
	if got := fields(err); !slices.Equal(got, []string{"name", "kind"}) {
		t.Errorf("empty create refuses %q, want name and kind", got)
	}
	_, err = Request{Kind: str(Email), URL: str("https://hooks.example.com/x"), Events: &[]string{"nonsense"}}.Apply(&c, true, false)
	if got := fields(err); !slices.Equal(got, []string{"name", "events", "url", "recipients"}) {
		t.Errorf("bad email create refuses %q", got)
	}

	c = model.Channel{}
	events := []string{event.Types[0], event.Types[0]}
	target, err := Request{Name: str("ops"), Kind: str(Webhook), URL: str("https://hooks.example.com/x"), Events: &events}.Apply(&c, true, false)
	if err != nil || target == nil || target.URL != "https://hooks.example.com/x" || c.Kind != Webhook || len(c.Events) != 1 {
		t.Fatalf("webhook create: %v, target %+v, channel %+v", err, target, c)
	}
	if target, err := (Request{Name: str("ops 2")}).Apply(&c, false, false); err != nil || target != nil || c.Name != "ops 2" {
		t.Errorf("rename: %v, target %+v (want none), name %q", err, target, c.Name)
	}
	_, err = Request{Kind: str(Slack)}.Apply(&c, false, false)
	if got := fields(err); !slices.Equal(got, []string{"kind"}) {
		t.Errorf("changing the kind refuses %q, want kind", got)
	}
	_, err = Request{}.Apply(&c, false, false)
	if got := fields(err); !slices.Equal(got, []string{"body"}) {
		t.Errorf("empty update refuses %q, want body", got)
	}
}
