package api

import (
	"context"
	"net/http"
	"time"

	"github.com/openvitals/openvitals/internal/channel"
	"github.com/openvitals/openvitals/internal/model"
)

// Notifications queues a channel's test notification.
type Notifications interface {
	EnqueueSample(ctx context.Context, w model.Website, channel string) error
}

// FailingAfter is how long a channel's deliveries must have failed for it to show as failing
// (channels stored before their failures were counted); model.ChannelFailingAfter failures in
// a row make it failing sooner.
const FailingAfter = 24 * time.Hour

// channelJSON is a channel as the API shows it: its URL masked, its secret never (but once,
// at creation and rotation, in Secret).
type channelJSON struct {
	ID           string     `json:"id"`
	Name         string     `json:"name"`
	Kind         string     `json:"kind"`
	Events       []string   `json:"events"`
	Digest       bool       `json:"digest"`
	URL          string     `json:"url,omitempty"`
	Recipients   string     `json:"recipients,omitempty"`
	Status       string     `json:"status"`
	FailingSince *time.Time `json:"failingSince,omitempty"`
	Failures     int        `json:"failures"`
	CreatedAt    time.Time  `json:"createdAt"`
	Secret       string     `json:"secret,omitempty"`
}

func (s *Server) toChannelJSON(c model.Channel, secret string) channelJSON {
	out := channelJSON{ID: c.ID, Name: c.Name, Kind: c.Kind, Events: c.Events, Digest: c.Digest, Status: "active",
		CreatedAt: c.Created.UTC(), Secret: secret}
	if out.Events == nil {
		out.Events = []string{}
	}
	if c.Kind == channel.Email {
		out.Recipients = channel.MaskRecipients(c.Shown)
	} else {
		out.URL = c.Shown
	}
	if !c.FailingSince.IsZero() {
		since := c.FailingSince.UTC()
		out.FailingSince = &since
		out.Failures = c.Failures
		if c.Failing() || s.now().Sub(since) >= FailingAfter {
			out.Status = "failing"
		}
	}
	return out
}

// channel reads a channel; one stored when recipients were kept in the clear beside the
// sealed target has them masked at rest as it is read.
func (s *Server) channel(ctx context.Context, site model.Website, id string) (model.Channel, error) {
	c, err := s.store.Channel(ctx, site, id)
	if err == nil {
		s.maskAtRest(ctx, site, &c)
	}
	return c, err
}

// channels reads a website's channels, as channel does.
func (s *Server) channels(ctx context.Context, site model.Website) ([]model.Channel, error) {
	cs, err := s.store.Channels(ctx, site)
	for i := range cs {
		s.maskAtRest(ctx, site, &cs[i])
	}
	return cs, err
}

// maskAtRest masks the recipients an email channel stored before they were masked holds in
// the clear, in c and in the table. A failure to write leaves the table's for the next read.
func (s *Server) maskAtRest(ctx context.Context, site model.Website, c *model.Channel) {
	if c.Kind != channel.Email {
		return
	}
	masked := channel.MaskRecipients(c.Shown)
	if masked == c.Shown {
		return
	}
	if err := s.store.ReplaceChannelShown(ctx, site, c.ID, c.Shown, masked); err != nil {
		s.log.WarnContext(ctx, "mask the recipients of a channel stored in the clear", "channel", c.ID, "err", err)
	}
	c.Shown = masked
}

// channelKind is how notification channels are shown, created, changed and deleted: their
// target sealed, their URL or recipients masked, a webhook's signing secret shown once, when
// it is made (on create and on rotateSecret).
func (s *Server) channelKind() itemKind[model.Channel, channel.Request] {
	return itemKind[model.Channel, channel.Request]{
		pathID:  "channelID",
		newItem: func() model.Channel { return model.Channel{ID: model.NewChannelID()} },
		apply:   s.applyChannelWrite,
		list:    s.channels,
		get:     s.channel,
		create:  s.store.CreateChannel,
		update:  byValue(s.store.UpdateChannel),
		remove:  s.store.DeleteChannel,
		show:    func(_ model.Website, ch model.Channel, secret string) any { return s.toChannelJSON(ch, secret) },
	}
}

// applyChannelWrite applies a create's or update's fields over ch and seals its target when it
// changed, with a new signing secret for a new webhook or on rotateSecret, which it returns.
func (s *Server) applyChannelWrite(ctx context.Context, site model.Website, in channel.Request, _ model.Channel, ch *model.Channel, create bool) (string, error) {
	target, err := in.Apply(ch, create, s.local)
	if err != nil {
		return "", err
	}
	rotate := in.RotateSecret != nil && *in.RotateSecret
	if create && ch.Kind == channel.Webhook {
		rotate = true
	}
	if target == nil && !rotate {
		return "", nil
	}
	if target == nil { // the secret alone: the target stays as sealed
		opened, err := channel.Open(ctx, s.sealer, site, *ch)
		if err != nil {
			return "", err
		}
		target = &opened
	}
	target.Secret = ""
	if rotate {
		target.Secret = channel.NewSecret()
	}
	if err := channel.Seal(ctx, s.sealer, site, ch, *target); err != nil {
		return "", err
	}
	return target.Secret, nil
}

// testChannel queues the sample event for the channel: it goes the way every notification
// goes (queue, notifier, delivery record), so its delivery shows whether the channel works.
func (s *Server) testChannel(w http.ResponseWriter, r *http.Request, c caller) error {
	site, ch, err := websiteAnd(s, r, c, withPathID(r, "channelID", s.channel))
	if err != nil {
		return err
	}
	if err := s.notifications.EnqueueSample(r.Context(), site, ch.ID); err != nil {
		return err
	}
	return writeJSON(w, http.StatusAccepted, map[string]string{"channel": ch.ID, "status": "queued"})
}

// deliveryJSON is one delivery attempt.
type deliveryJSON struct {
	Event      string     `json:"event"`
	EventType  string     `json:"eventType"`
	At         time.Time  `json:"at"`
	Attempt    int        `json:"attempt"`
	StatusCode int        `json:"statusCode"`
	LatencyMS  int64      `json:"latencyMs"`
	Error      string     `json:"error,omitempty"`
	NextRetry  *time.Time `json:"nextRetry,omitempty"`
}

func (s *Server) listDeliveries(w http.ResponseWriter, r *http.Request, c caller) error {
	win, site, err := s.windowAndWebsite(r, c)
	if err != nil {
		return err
	}
	ch, err := s.channel(r.Context(), site, r.PathValue("channelID"))
	if err != nil {
		return err
	}
	ds, cursors, more, err := s.store.Deliveries(r.Context(), site, ch.ID, win.after, win.limit)
	if err != nil {
		return err
	}
	out := make([]deliveryJSON, len(ds))
	for i, d := range ds {
		out[i] = deliveryJSON{Event: d.Event, EventType: d.EventType, At: d.At.UTC(), Attempt: d.Attempt,
			StatusCode: d.Status, LatencyMS: d.LatencyMS, Error: d.Error}
		if !d.Retry.IsZero() {
			retry := d.Retry.UTC()
			out[i].NextRetry = &retry
		}
	}
	next := ""
	if more {
		next = cursorAfter(cursors[len(cursors)-1])
	}
	return writeJSON(w, http.StatusOK, listPage(out, next))
}
