package model

import "time"

// Channel is where a website's events are sent: a webhook, a Slack incoming webhook or email
// recipients. Its target and secret are stored sealed (see the seal package).
type Channel struct {
	ID   string
	Name string
	Kind string
	// Events are the event types it takes; none means all.
	Events []string
	// Digest sends one message a day with the day's events instead of one per event.
	Digest bool
	// Target is sealed: the URL (webhook, Slack) or the recipients, one per line (email).
	Target []byte
	// Shown is the target as the API shows it: the URL with its path masked, or the recipients
	// masked (channels stored before that hold them in the clear until they are read).
	Shown string
	// Secret is the sealed signing secret of a webhook.
	Secret  []byte `dynamodbav:",omitempty"`
	Created time.Time
	// FailingSince is the first failed delivery since the last one that succeeded (zero when
	// the last succeeded).
	FailingSince time.Time `dynamodbav:",omitempty"`
	// Failures counts the failed deliveries since the last one that succeeded.
	Failures int `dynamodbav:",omitempty"`
	// DigestSent is when the last digest was sent.
	DigestSent time.Time `dynamodbav:",omitempty"`
}

// ChannelFailingAfter is how many failed deliveries in a row make a channel failing.
const ChannelFailingAfter = 3

// Failing tells whether the channel's last ChannelFailingAfter deliveries (or more) failed.
func (c Channel) Failing() bool { return c.Failures >= ChannelFailingAfter }

// ChannelAAD is what a channel's sealed values are bound to: its website and itself.
func ChannelAAD(w Website, channel string) []byte {
	return []byte("channel\x00" + w.Account + "\x00" + w.ID + "\x00" + channel)
}

// NewChannelID returns the ID for a new channel (the caller seals its values for it).
func NewChannelID() string { return NewID() }

// Delivery is one attempt to deliver an event to a channel.
type Delivery struct {
	Event     string // the event's ID
	EventType string
	At        time.Time
	Attempt   int
	// Status is the HTTP status the target answered (0 when none: a network error).
	Status    int
	LatencyMS int64
	Error     string `dynamodbav:",omitempty"`
	// Retry is when the next attempt is due (zero when none: delivered, or given up).
	Retry time.Time `dynamodbav:",omitempty"`
}

// DeliveryRetention is how long deliveries are kept.
const DeliveryRetention = 30 * 24 * time.Hour
