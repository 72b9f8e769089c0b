package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/openvitals/openvitals/internal/model"
)

const (
	channelSKPrefix = "CHANNEL#"
	// A channel's deliveries and sent marks are apart from the channels, so that listing the
	// channels reads only them.
	channelDataPrefix = "CHX#"
)

func channelSK(id string) string { return channelSKPrefix + id }

func channelDataSK(id string) string { return channelDataPrefix + id + "#" }

var channelKind = websiteKind[model.Channel]{sk: channelSK, typ: "channel", name: "channel", plural: "channels",
	id: func(c model.Channel) string { return c.ID }, created: func(c model.Channel) time.Time { return c.Created }}

// CreateChannel stores a new channel; c.ID must be set (NewChannelID) and c.Created is set.
func (s *Store) CreateChannel(ctx context.Context, w model.Website, c *model.Channel) error {
	c.Created = s.now()
	return channelKind.put(ctx, s, w, *c, putNew)
}

// UpdateChannel replaces an existing channel.
func (s *Store) UpdateChannel(ctx context.Context, w model.Website, c model.Channel) error {
	return channelKind.put(ctx, s, w, c, putExisting)
}

// ReplaceChannelShown sets what the API shows of a channel's target to shown, where it is
// still old: a write meanwhile (a new target, the channel deleted) wins.
func (s *Store) ReplaceChannelShown(ctx context.Context, w model.Website, id, old, shown string) error {
	err := s.update(ctx, key(websitePK(w.Account, w.ID), channelSK(id)), "SET Shown = :new", "Shown = :old",
		map[string]ddbtypes.AttributeValue{":new": str(shown), ":old": str(old)})
	if err != nil && !isConditionFailed(err) {
		return fmt.Errorf("replace what channel %s shows: %w", id, err)
	}
	return nil
}

// Channel returns one channel.
func (s *Store) Channel(ctx context.Context, w model.Website, id string) (model.Channel, error) {
	return channelKind.get(ctx, s, w, id)
}

// Channels lists a website's channels, oldest first.
func (s *Store) Channels(ctx context.Context, w model.Website) ([]model.Channel, error) {
	return channelKind.list(ctx, s, w)
}

// DeleteChannel removes a channel, then its deliveries and marks.
func (s *Store) DeleteChannel(ctx context.Context, w model.Website, id string) error {
	if err := channelKind.delete(ctx, s, w, id); err != nil {
		return err
	}
	_, err := s.deletePrefix(ctx, websitePK(w.Account, w.ID), channelDataSK(id))
	return err
}

// MarkDigestSent records when a channel's digest was sent.
func (s *Store) MarkDigestSent(ctx context.Context, w model.Website, channel string, at time.Time) error {
	v, err := attributevalue.Marshal(at)
	if err != nil {
		return err
	}
	err = s.update(ctx, key(websitePK(w.Account, w.ID), channelSK(channel)), "SET DigestSent = :at", "attribute_exists(PK)",
		map[string]ddbtypes.AttributeValue{":at": v})
	if isConditionFailed(err) {
		return fmt.Errorf("channel %s: %w", channel, model.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("mark digest sent: %w", err)
	}
	return nil
}

type deliveryItem struct {
	PK, SK, Type string
	model.Delivery
	Expires int64 `dynamodbav:"expires"`
}

// RecordDelivery stores an attempt and keeps the channel's failing time and count of failures
// in a row: cleared by a success, the time set by the first failure after one. A channel
// deleted meanwhile is ErrNotFound.
func (s *Store) RecordDelivery(ctx context.Context, w model.Website, channel string, d model.Delivery, ok bool) error {
	item, err := attributevalue.MarshalMap(deliveryItem{PK: websitePK(w.Account, w.ID),
		SK:   channelDataSK(channel) + "D#" + d.At.UTC().Format("20060102T150405.000000000") + "#" + d.Event,
		Type: "delivery", Delivery: d, Expires: d.At.Add(model.DeliveryRetention).Unix()})
	if err != nil {
		return err
	}
	expr, values := "REMOVE FailingSince, Failures", map[string]ddbtypes.AttributeValue(nil)
	if !ok {
		at, err := attributevalue.Marshal(d.At)
		if err != nil {
			return err
		}
		expr, values = "SET FailingSince = if_not_exists(FailingSince, :at) ADD Failures :one", map[string]ddbtypes.AttributeValue{":at": at, ":one": num(1)}
	}
	r, err := s.transact(ctx, s.updateAction(key(websitePK(w.Account, w.ID), channelSK(channel)), expr, "attribute_exists(PK)", values),
		s.putAction(item, ""))
	if len(r) > 0 && r[0] == "ConditionalCheckFailed" {
		return fmt.Errorf("channel %s: %w", channel, model.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("record delivery: %w", err)
	}
	return nil
}

// Deliveries lists a channel's deliveries newest first: up to limit (0: all) before the one
// whose cursor is before ("" from the newest), with the cursor of the last and whether more
// remain.
func (s *Store) Deliveries(ctx context.Context, w model.Website, channel, before string, limit int) ([]model.Delivery, []string, bool, error) {
	prefix := channelDataSK(channel) + "D#"
	skip := ""
	if before != "" {
		skip = prefix + before
	}
	in := s.newestFirst(websitePK(w.Account, w.ID), prefix, prefix+"\U0010FFFF", skip)
	if limit > 0 {
		in.Limit = aws.Int32(int32(limit + 2))
	}
	items, more, err := window(ctx, s, in, skip, limit, "deliveries", func(it deliveryItem) (string, deliveryItem) { return it.SK, it })
	if err != nil {
		return nil, nil, false, err
	}
	out, cursors := make([]model.Delivery, len(items)), make([]string, len(items))
	for i, it := range items {
		out[i], cursors[i] = it.Delivery, it.SK[len(prefix):]
	}
	return out, cursors, more, nil
}

// MarkSent records that an event was delivered to a channel, once: false when it was already.
// message is the ID the channel gave the message (an email's Message-ID), kept for a
// follow-up to reply to. Marks expire with the deliveries.
func (s *Store) MarkSent(ctx context.Context, w model.Website, channel, event, message string) (bool, error) {
	item := map[string]ddbtypes.AttributeValue{
		attrPK: str(websitePK(w.Account, w.ID)), attrSK: str(channelDataSK(channel) + "S#" + event),
		"Type": str("sent"), TTLAttribute: num(int(s.now().Add(model.DeliveryRetention).Unix())),
	}
	if message != "" {
		item["Message"] = str(message)
	}
	err := s.putItem(ctx, item, putNew, "sent mark of event "+event)
	if errors.Is(err, errInUse) {
		return false, nil
	}
	return err == nil, err
}

// SentMessage is the message ID a channel gave the delivery of an event (an email's
// Message-ID), "" when it gave none or the event was not delivered there.
func (s *Store) SentMessage(ctx context.Context, w model.Website, channel, event string) (string, error) {
	var it struct{ Message string }
	_, err := s.getOr(ctx, websitePK(w.Account, w.ID), channelDataSK(channel)+"S#"+event, "sent mark", &it)
	return it.Message, err
}

// Sent tells whether an event was delivered to a channel.
func (s *Store) Sent(ctx context.Context, w model.Website, channel, event string) (bool, error) {
	var it struct{ PK string }
	return s.getOr(ctx, websitePK(w.Account, w.ID), channelDataSK(channel)+"S#"+event, "sent mark", &it)
}
