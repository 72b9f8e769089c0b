package event

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/openvitals/openvitals/internal/model"
)

// Document is an event as the API lists it and as webhooks receive it.
type Document struct {
	ID         string    `json:"id"`
	Type       string    `json:"type"`
	Website    string    `json:"website"`
	OccurredAt time.Time `json:"occurredAt"`
	Subject    Subject   `json:"subject"`
	Before     string    `json:"before"`
	After      string    `json:"after"`
	Summary    string    `json:"summary"`
	Error      string    `json:"error,omitempty"`
	FailedStep *int      `json:"failedStep,omitempty"`
	Links      Links     `json:"links"`
	// View links to the dashboard's views of the event (when the sender knows the dashboard):
	// what a person opens, where Links are the API's resources, which need a key.
	View *View `json:"view,omitempty"`
	// InReplyTo is the event a follow-up belongs with: an incident.verdict's names its
	// incident's regression.detected event, whose thread it continues.
	InReplyTo string `json:"inReplyTo,omitempty"`
	// Events are the events a daily digest gathers, newest first.
	Events []Document `json:"events,omitempty"`
}

// Subject is what an event is about; only the fields that apply are set.
type Subject struct {
	Page   string `json:"page,omitempty"`
	Device string `json:"device,omitempty"`
	Budget string `json:"budget,omitempty"`
	Test   string `json:"test,omitempty"`
	Run    string `json:"run,omitempty"`
	// Regression and Metric name a regression (regression.* events).
	Regression string `json:"regression,omitempty"`
	Metric     string `json:"metric,omitempty"`
	// Incident names the incident of a regression.* event: the change of a page or test,
	// with every metric and device it moved.
	Incident string `json:"incident,omitempty"`
	// Channel names the channel of a channel.* event.
	Channel string `json:"channel,omitempty"`
}

// Links are API URLs: the subject, the failed run's screenshot, the website's events.
type Links struct {
	Subject    string `json:"subject"`
	Screenshot string `json:"screenshot,omitempty"`
	Events     string `json:"events"`
}

// View are the dashboard's views of an event: its subject's and the website's events.
type View struct {
	Subject string `json:"subject"`
	Events  string `json:"events"`
}

// WithView is d with the links to the dashboard's views (dashboard: its address, as
// https://example.com/app/), its digest's events' too.
func (d Document) WithView(dashboard string) Document {
	base := dashboard + "#/w/" + url.PathEscape(d.Website)
	s, subject := d.Subject, base+"/events"
	switch {
	case s.Incident != "":
		subject = base + "/regressions?incident=" + url.QueryEscape(s.Incident)
	case s.Channel != "":
		subject = base + "/events?channel=" + url.QueryEscape(s.Channel)
	case s.Page != "":
		subject = base + "/page/" + url.PathEscape(s.Page)
		if s.Device != "" {
			subject += "?device=" + url.QueryEscape(s.Device)
		}
	case s.Regression != "":
		subject = base + "/regressions"
	case s.Budget != "":
		subject = base // the website's view lists its budgets with their status
	case s.Test != "":
		subject = base + "/multistep/" + url.PathEscape(s.Test)
	}
	d.View = &View{Subject: subject, Events: base + "/events"}
	if len(d.Events) > 0 {
		evs := make([]Document, len(d.Events))
		for i, e := range d.Events {
			evs[i] = e.WithView(dashboard)
		}
		d.Events = evs
	}
	return d
}

// NewDocument describes ev of website w with links under base, the API's URL ("" for paths).
func NewDocument(w model.Website, ev model.Event, base string) Document {
	base = strings.TrimRight(base, "/") + "/" + w.ID
	d := Document{
		ID: ev.ID, Type: ev.Type, Website: w.ID, OccurredAt: ev.Occurred.UTC(),
		Subject: Subject{Page: ev.Page, Device: ev.Device, Budget: ev.Budget, Test: ev.Test, Run: ev.Run,
			Regression: ev.Regression, Metric: ev.Metric, Incident: ev.Incident, Channel: ev.Channel},
		Before: ev.Before, After: ev.After, Summary: ev.Summary, Error: ev.Error, FailedStep: ev.FailedStep,
		Links: Links{Events: base + "/events"},
	}
	if ev.Type == IncidentVerdict && ev.Incident != "" {
		d.InReplyTo = DetectionID(w, ev.Page, ev.Test, ev.Incident)
	}
	for _, e := range ev.Digest {
		d.Events = append(d.Events, NewDocument(w, e, strings.TrimSuffix(base, "/"+w.ID)))
	}
	switch {
	case ev.Incident != "":
		d.Links.Subject = base + "/incidents/" + ev.Incident
	case ev.Channel != "":
		d.Links.Subject = base + "/channels/" + ev.Channel + "/deliveries"
	case ev.Regression != "":
		d.Links.Subject = base + "/regressions/" + ev.Regression
	case ev.Page != "":
		d.Links.Subject = base + "/pages/" + ev.Page
		if ev.Device != "" {
			d.Links.Subject += "?device=" + ev.Device
		}
	case ev.Budget != "":
		d.Links.Subject = base + "/budgets"
	case ev.Test != "":
		d.Links.Subject = base + "/multistep/" + ev.Test
		if ev.Run != "" && ev.Screenshot != "" {
			d.Links.Screenshot = base + "/multistep/" + ev.Test + "/runs/" + ev.Run + "/screenshot"
		}
	default:
		d.Links.Subject = base + "/events"
	}
	return d
}

// NewDigest is the daily digest of a channel: evs (newest first) gathered as one message,
// whose ID is the same for a channel and day, so that receivers deduplicate it too.
func NewDigest(w model.Website, channel string, evs []model.Event, now time.Time) model.Event {
	summary := fmt.Sprintf("%d changes on %s in the last day", len(evs), w.Domain)
	if len(evs) == 1 {
		summary = "1 change on " + w.Domain + " in the last day"
	}
	return model.Event{ID: "evt_digest_" + channel + "_" + model.Day(now), Type: DailyDigest, Occurred: now,
		Summary: summary, Digest: evs}
}

// Sample is the event a channel's test sends: marked as a test in its type and summary.
func Sample(w model.Website, now time.Time) model.Event {
	return model.Event{ID: "evt_test_" + model.NewID(), Type: ChannelTest, Occurred: now, Budget: "sample",
		Before: "ok", After: "exceeded", Summary: "Test notification from openvitals for " + w.Domain + ": your channel works"}
}
