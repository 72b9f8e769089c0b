package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/openvitals/openvitals/internal/model"
)

type eventItem struct {
	PK, SK, Type string
	model.Event
	Expires int64 `dynamodbav:"expires"`
}

const budgetStatePrefix = "BSTATE#"

type stateItem struct {
	PK, SK, Type string
	model.State
}

// WatchedState returns a watched state; one never recorded is the zero State with its key.
func (s *Store) WatchedState(ctx context.Context, w model.Website, key model.StateKey) (model.State, error) {
	var it stateItem
	err := s.getItem(ctx, websitePK(w.Account, w.ID), string(key), "state", &it)
	if model.IsNotFound(err) {
		return model.State{Key: key}, nil
	}
	it.State.Key = key
	return it.State, err
}

// ChangeState records that a state went from what from says (as read by WatchedState) to
// value, with ev as the change's event when ev is not nil: both or neither, and only if the
// state is still as read, else ErrChanged. The event gets its ID, State, Version and, unless the
// watcher set them (a default for a state never recorded, words for a run), Before and After, and the new state names it as Unsent until MarkEventQueued. A state of a website
// that is gone takes nothing (ErrNotFound).
func (s *Store) ChangeState(ctx context.Context, w model.Website, from model.State, value, day string, ev *model.Event) (model.State, error) {
	return s.changeState(ctx, w, from, model.State{Value: value, Since: s.now(), Day: day}, ev, nil)
}

// changeState writes state to (its key and version set here, and Unsent when there is an
// event) over from with ev as ChangeState does, and writes along the writes of more, whose
// conditions failing is ErrChanged too.
func (s *Store) changeState(ctx context.Context, w model.Website, from, to model.State, ev *model.Event, more []ddbtypes.TransactWriteItem) (model.State, error) {
	to.Key, to.Version = from.Key, from.Version+1
	var actions []ddbtypes.TransactWriteItem
	if ev != nil {
		ev.ID = model.EventID(w, from.Key, to.Version)
		ev.State, ev.Version = string(from.Key), to.Version
		if ev.Before == "" && ev.After == "" {
			ev.Before, ev.After = from.Value, to.Value
		}
		if ev.Occurred.IsZero() {
			ev.Occurred = to.Since
		}
		to.Unsent = EventKey(*ev)
		// The website's retention of events sets the item's TTL; events written before a
		// shorter retention are the retention pass's.
		set, err := s.DataSettings(ctx, w)
		if err != nil {
			return from, err
		}
		item, err := attributevalue.MarshalMap(eventItem{PK: websitePK(w.Account, w.ID), SK: eventSK(*ev), Type: "event",
			Event: *ev, Expires: ev.Occurred.Add(model.EventKeep(set.Retention.Events)).Unix()})
		if err != nil {
			return from, err
		}
		actions = append(actions, s.putAction(item, "attribute_not_exists(PK)"))
	}
	item, err := attributevalue.MarshalMap(stateItem{PK: websitePK(w.Account, w.ID), SK: string(from.Key), Type: "state", State: to})
	if err != nil {
		return from, err
	}
	state := len(actions)
	actions = append(actions, s.versionedPut(item, from.Version, "attribute_not_exists(PK)"), s.websiteExists(w))
	if owner := stateOwner(from.Key); owner != "" {
		actions = append(actions, s.existsCheck(key(websitePK(w.Account, w.ID), owner)))
	}
	checks := len(actions) - state - 1 // the website's and the owner's
	actions = append(actions, more...)
	reasons, err := s.transact(ctx, actions...)
	switch {
	case len(reasons) == len(actions) && slices.Contains(reasons[state+1:state+1+checks], "ConditionalCheckFailed"):
		return from, fmt.Errorf("website or owner of state %s: %w", from.Key, model.ErrNotFound)
	case slices.Contains(reasons, "ConditionalCheckFailed"):
		return from, fmt.Errorf("state %s: %w", from.Key, model.ErrChanged)
	case err != nil:
		return from, fmt.Errorf("change state %s: %w", from.Key, err)
	}
	return to, nil
}

// websiteExists holds a transaction to the website's item existing: a state or event written
// after its deletion would outlive the purge.
func (s *Store) websiteExists(w model.Website) ddbtypes.TransactWriteItem {
	return s.existsCheck(key(accountPK(w.Account), websiteSK(w.ID)))
}

// MarkEventQueued records that a state's last event is queued for delivery.
func (s *Store) MarkEventQueued(ctx context.Context, w model.Website, st model.State) error {
	err := s.update(ctx, key(websitePK(w.Account, w.ID), string(st.Key)), "REMOVE Unsent", "Version = :v",
		map[string]ddbtypes.AttributeValue{":v": num(st.Version)})
	if err != nil && !isConditionFailed(err) { // changed since: the newer change is queued
		return fmt.Errorf("mark event queued: %w", err)
	}
	return nil
}

const eventSKPrefix = "EV#"

// EventKey is an event's place in its website's events, newest last: its time and ID. It is
// the cursor of the events list and what a notification message names.
func EventKey(ev model.Event) string {
	return ev.Occurred.UTC().Format("20060102T150405.000000000") + "#" + ev.ID
}

func eventSK(ev model.Event) string { return eventSKPrefix + EventKey(ev) }

// Event returns one event by its key (EventKey).
func (s *Store) Event(ctx context.Context, w model.Website, eventKey string) (model.Event, error) {
	var it eventItem
	if err := s.getItem(ctx, websitePK(w.Account, w.ID), eventSKPrefix+eventKey, "event", &it); err != nil {
		return model.Event{}, err
	}
	return it.Event, nil
}

// Events lists a website's events newest first: up to limit (0: all) before the event whose key
// is before ("" from the newest), and whether more remain.
func (s *Store) Events(ctx context.Context, w model.Website, f model.EventFilter, before string, limit int) ([]model.Event, bool, error) {
	lo, hi := eventSKPrefix, eventSKPrefix+"\U0010FFFF"
	if f.From != "" {
		lo = eventSKPrefix + f.From
	}
	if f.To != "" {
		hi = eventSKPrefix + f.To + "\U0010FFFF"
	}
	skip := ""
	if before != "" {
		skip = eventSKPrefix + before
	}
	in := s.newestFirst(websitePK(w.Account, w.ID), lo, hi, skip)
	in.ConsistentRead = nil
	if len(f.Types) > 0 {
		names := make([]string, len(f.Types))
		for i, t := range f.Types {
			names[i] = ":t" + strconv.Itoa(i)
			in.ExpressionAttributeValues[names[i]] = str(t)
		}
		in.FilterExpression = aws.String("EventType IN (" + strings.Join(names, ", ") + ")")
	}
	return window(ctx, s, in, skip, limit, "events", func(it eventItem) (string, model.Event) { return it.SK, it.Event })
}

// BudgetState is a budget's status (DeleteBudget removes it).
func BudgetState(budget string) model.StateKey { return model.StateKey(budgetStatePrefix + budget) }

// PageState is a page's state of one kind ("audit#desktop", "ux").
func PageState(page, kind string) model.StateKey {
	return model.StateKey(PageItemsPrefix(page) + "STATE#" + kind)
}

// TestState is a multistep test's state.
func TestState(test string) model.StateKey { return model.StateKey(TestItemsPrefix(test) + "STATE") }

// ChannelState is a channel's delivery state (DeleteChannel removes it with its data).
func ChannelState(channel string) model.StateKey {
	return model.StateKey(channelDataSK(channel) + "STATE")
}

// owner is the sort key of the item whose state this is, which must exist for the state to be
// written: the budget, the page's pointer, the test.
func stateOwner(k model.StateKey) string {
	key := string(k)
	switch {
	case strings.HasPrefix(key, budgetStatePrefix):
		return budgetSK(strings.TrimPrefix(key, budgetStatePrefix))
	case strings.HasPrefix(key, "P#"):
		page, _, _ := strings.Cut(strings.TrimPrefix(key, "P#"), "#")
		return pagePointerSK(page)
	case strings.HasPrefix(key, channelDataPrefix):
		channel, _, _ := strings.Cut(strings.TrimPrefix(key, channelDataPrefix), "#")
		return channelSK(channel)
	case strings.HasPrefix(key, "T#"):
		test, _, _ := strings.Cut(strings.TrimPrefix(key, "T#"), "#")
		return testSK(test)
	}
	return ""
}
