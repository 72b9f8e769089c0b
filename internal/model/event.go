package model

import (
	"crypto/sha256"
	"encoding/base32"
	"strconv"
	"strings"
	"time"
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
	Regression string `dynamodbav:",omitempty"`
	Metric     string `dynamodbav:",omitempty"`
	// Incident names an incident's event (regression.* events); Channel a channel's.
	Incident      string `dynamodbav:",omitempty"`
	Channel       string `dynamodbav:",omitempty"`
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

// EventRetention is how long events are kept: the most, and the default, of a website's
// retention of events.
const EventRetention = 90 * 24 * time.Hour

// EventKeep is how long an event is kept by a website keeping its events days (0: the
// default): its TTL is its time plus this, so that DynamoDB removes it when the retention
// pass would (the day itself and days-1 before are kept).
func EventKeep(days int) time.Duration {
	if days <= 0 || time.Duration(days)*24*time.Hour > EventRetention {
		return EventRetention
	}
	return time.Duration(days) * 24 * time.Hour
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

// EventID is the ID of a state's change to version: the same for every detection of it.
func EventID(w Website, key StateKey, version int) string {
	sum := sha256.Sum256([]byte(w.Account + "\x00" + w.ID + "\x00" + string(key) + "\x00" + strconv.Itoa(version)))
	return "evt_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:15]))
}

// EventFilter narrows the events list: Types (any of them; none: all), and the UTC days From
// and To (yyyymmdd, both included; "" for no bound).
type EventFilter struct {
	Types    []string
	From, To string
}
