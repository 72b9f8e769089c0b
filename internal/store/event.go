package store

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Event is a recorded change of a watched state of a website (see ChangeState): what changed,
// from what to what, and about which subject.
type Event struct {
	// ID is derived from the state and the number of its change, so that the same change is
	// one event however often it is detected.
	ID string
	// Type is the event's type ("budget.status_changed"); the item's own Type is "event".
	Type     string `dynamodbav:"EventType"`
	Occurred time.Time
	// The subject: a page (and device), a budget or a multistep test (and run).
	Page, Device, Budget, Test, Run string
	// Regression and Metric name a regression's event.
	Regression    string `dynamodbav:",omitempty"`
	Metric        string `dynamodbav:",omitempty"`
	Before, After string
	// Summary is one line for people.
	Summary string
	// Error, FailedStep and Screenshot (the screenshot's S3 key) describe a failed run or audit.
	Error      string `dynamodbav:",omitempty"`
	FailedStep *int   `dynamodbav:",omitempty"`
	Screenshot string `dynamodbav:",omitempty"`
	// State and Version name the change: the state's key and its version after the change.
	State   string
	Version int
	// Digest holds the events a daily digest gathers (never stored).
	Digest []Event `dynamodbav:"-"`
}

// EventRetention is how long events are kept.
const EventRetention = 90 * 24 * time.Hour

type eventItem struct {
	PK, SK, Type string
	Event
	Expires int64 `dynamodbav:"expires"`
}

// State is the last known value of something watched (a budget's status, a test's state),
// with the number of times it changed.
type State struct {
	Key     StateKey
	Value   string
	Version int
	// Since is when it took its value; Day a day the watcher keeps with it (see the audit's).
	Since time.Time
	Day   string `dynamodbav:",omitempty"`
	// Unsent is the key (EventKey) of the last change's event until it is queued for delivery.
	Unsent string `dynamodbav:",omitempty"`
}

// StateKey is the sort key of a watched state's item; the functions below make them, so that
// a page's and a test's states are purged with them.
type StateKey string

// BudgetState is a budget's status (DeleteBudget removes it).
func BudgetState(budget string) StateKey { return StateKey(budgetStatePrefix + budget) }

// PageState is a page's state of one kind ("audit#desktop", "ux").
func PageState(page, kind string) StateKey {
	return StateKey(PageItemsPrefix(page) + "STATE#" + kind)
}

// TestState is a multistep test's state.
func TestState(test string) StateKey { return StateKey(TestItemsPrefix(test) + "STATE") }

const budgetStatePrefix = "BSTATE#"

// owner is the sort key of the item whose state this is, which must exist for the state to be
// written: the budget, the page's pointer, the test.
func (k StateKey) owner() string {
	key := string(k)
	switch {
	case strings.HasPrefix(key, budgetStatePrefix):
		return budgetSK(strings.TrimPrefix(key, budgetStatePrefix))
	case strings.HasPrefix(key, "P#"):
		page, _, _ := strings.Cut(strings.TrimPrefix(key, "P#"), "#")
		return pagePointerSK(page)
	case strings.HasPrefix(key, "T#"):
		test, _, _ := strings.Cut(strings.TrimPrefix(key, "T#"), "#")
		return testSK(test)
	}
	return ""
}

type stateItem struct {
	PK, SK, Type string
	State
}

// WatchedState returns a watched state; one never recorded is the zero State with its key.
func (s *Store) WatchedState(ctx context.Context, w Website, key StateKey) (State, error) {
	var it stateItem
	err := s.getItem(ctx, websitePK(w.Account, w.ID), string(key), "state", &it)
	if IsNotFound(err) {
		return State{Key: key}, nil
	}
	it.State.Key = key
	return it.State, err
}

// ChangeState records that a state went from what from says (as read by WatchedState) to
// value, with ev as the change's event when ev is not nil: both or neither, and only if the
// state is still as read, else ErrChanged. The event gets its ID, State, Version and, unless the
// watcher set them (a default for a state never recorded, words for a run), Before and After, and the new state names it as Unsent until MarkEventQueued. A state of a website
// that is gone takes nothing (ErrNotFound).
func (s *Store) ChangeState(ctx context.Context, w Website, from State, value, day string, ev *Event) (State, error) {
	to := State{Key: from.Key, Value: value, Version: from.Version + 1, Since: s.now(), Day: day}
	var actions []ddbtypes.TransactWriteItem
	if ev != nil {
		ev.ID = EventID(w, from.Key, to.Version)
		ev.State, ev.Version = string(from.Key), to.Version
		if ev.Before == "" && ev.After == "" {
			ev.Before, ev.After = from.Value, value
		}
		if ev.Occurred.IsZero() {
			ev.Occurred = to.Since
		}
		to.Unsent = EventKey(*ev)
		item, err := attributevalue.MarshalMap(eventItem{PK: websitePK(w.Account, w.ID), SK: eventSK(*ev), Type: "event",
			Event: *ev, Expires: ev.Occurred.Add(EventRetention).Unix()})
		if err != nil {
			return from, err
		}
		actions = append(actions, ddbtypes.TransactWriteItem{Put: &ddbtypes.Put{
			TableName: aws.String(s.table), Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)"),
		}})
	}
	item, err := attributevalue.MarshalMap(stateItem{PK: websitePK(w.Account, w.ID), SK: string(from.Key), Type: "state", State: to})
	if err != nil {
		return from, err
	}
	put := &ddbtypes.Put{TableName: aws.String(s.table), Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)")}
	if from.Version > 0 {
		put.ConditionExpression = aws.String("Version = :v")
		put.ExpressionAttributeValues = map[string]ddbtypes.AttributeValue{":v": num(from.Version)}
	}
	actions = append(actions, ddbtypes.TransactWriteItem{Put: put}, s.websiteExists(w))
	if owner := from.Key.owner(); owner != "" {
		actions = append(actions, ddbtypes.TransactWriteItem{ConditionCheck: &ddbtypes.ConditionCheck{
			TableName: aws.String(s.table), Key: key(websitePK(w.Account, w.ID), owner),
			ConditionExpression: aws.String("attribute_exists(PK)"),
		}})
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: actions})
	reasons := cancellationReasons(err)
	state := len(actions) - 2 // the state's put, then the website's and the owner's checks
	if from.Key.owner() != "" {
		state--
	}
	switch {
	case len(reasons) > state && slices.Contains(reasons[state+1:], "ConditionalCheckFailed"):
		return from, fmt.Errorf("website or owner of state %s: %w", from.Key, ErrNotFound)
	case len(reasons) > 0 && slices.Contains(reasons, "ConditionalCheckFailed"):
		return from, fmt.Errorf("state %s: %w", from.Key, ErrChanged)
	case err != nil:
		return from, fmt.Errorf("change state %s: %w", from.Key, err)
	}
	return to, nil
}

// websiteExists holds a transaction to the website's item existing: a state or event written
// after its deletion would outlive the purge.
func (s *Store) websiteExists(w Website) ddbtypes.TransactWriteItem {
	return ddbtypes.TransactWriteItem{ConditionCheck: &ddbtypes.ConditionCheck{
		TableName: aws.String(s.table), Key: key(accountPK(w.Account), websiteSK(w.ID)),
		ConditionExpression: aws.String("attribute_exists(PK)"),
	}}
}

// MarkEventQueued records that a state's last event is queued for delivery.
func (s *Store) MarkEventQueued(ctx context.Context, w Website, st State) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: key(websitePK(w.Account, w.ID), string(st.Key)),
		UpdateExpression:          aws.String("REMOVE Unsent"),
		ConditionExpression:       aws.String("Version = :v"),
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":v": num(st.Version)},
	})
	if err != nil && !isConditionFailed(err) { // changed since: the newer change is queued
		return fmt.Errorf("mark event queued: %w", err)
	}
	return nil
}

// EventID is the ID of a state's change to version: the same for every detection of it.
func EventID(w Website, key StateKey, version int) string {
	sum := sha256.Sum256([]byte(w.Account + "\x00" + w.ID + "\x00" + string(key) + "\x00" + strconv.Itoa(version)))
	return "evt_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:15]))
}

const eventSKPrefix = "EV#"

// EventKey is an event's place in its website's events, newest last: its time and ID. It is
// the cursor of the events list and what a notification message names.
func EventKey(ev Event) string {
	return ev.Occurred.UTC().Format("20060102T150405.000000000") + "#" + ev.ID
}

func eventSK(ev Event) string { return eventSKPrefix + EventKey(ev) }

// Event returns one event by its key (EventKey).
func (s *Store) Event(ctx context.Context, w Website, eventKey string) (Event, error) {
	var it eventItem
	if err := s.getItem(ctx, websitePK(w.Account, w.ID), eventSKPrefix+eventKey, "event", &it); err != nil {
		return Event{}, err
	}
	return it.Event, nil
}

// EventFilter narrows the events list: Types (any of them; none: all), and the UTC days From
// and To (yyyymmdd, both included; "" for no bound).
type EventFilter struct {
	Types    []string
	From, To string
}

// Events lists a website's events newest first: up to limit (0: all) before the event whose key
// is before ("" from the newest), and whether more remain.
func (s *Store) Events(ctx context.Context, w Website, f EventFilter, before string, limit int) ([]Event, bool, error) {
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
	return window(ctx, s, in, skip, limit, "events", func(it eventItem) (string, Event) { return it.SK, it.Event })
}
