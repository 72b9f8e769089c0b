package model

import (
	"crypto/sha256"
	"encoding/base32"
	"strings"
	"time"
)

// Regression statuses and kinds.
const (
	RegressionOpen         = "open"
	RegressionRecovered    = "recovered"
	RegressionAcknowledged = "acknowledged"

	KindRegression  = "regression"
	KindImprovement = "improvement"
)

// Regression is a lasting change of level found in one series of a website: a page's metric on
// a device (lab or user-experience data), or a multistep test's metric.
type Regression struct {
	ID   string
	Kind string // KindRegression or KindImprovement
	// Source is the series' origin: "lab", "ux", "rum" or "multistep".
	Source             string
	Page, Device, Test string `dynamodbav:",omitempty"`
	// Method is the measurement method of the lab results it compares (all of one method: the
	// detector starts a new baseline where the method changes); "" for another source, or a
	// lab regression stored before methods (simulated: read it with MethodOr).
	Method             string `dynamodbav:",omitempty"`
	Metric             string
	LastGood, FirstBad string // yyyymmdd
	Before, After      Level
	Delta, Percent, P  float64
	Status             string
	Recovered          string `dynamodbav:",omitempty"` // first day back at the old level
	Detected           time.Time
	Acknowledged       *time.Time `dynamodbav:",omitempty"`
	// Cause ranks what changed in the page between the last good and the first bad day's
	// reports, most likely first (lab regressions).
	Cause []CauseItem `dynamodbav:",omitempty"`
	// Incident is the incident the change belongs to (see IncidentID); regressions stored
	// before incidents have none and are grouped when read.
	Incident string `dynamodbav:",omitempty"`
	// Days are the series' daily medians around the change, for a small chart: up to 14 days
	// before the first bad day and the days after it known when it was found.
	Days []DayValue `dynamodbav:",omitempty"`
}

// End is when a regression may be forgotten (see HistoryDays): HistoryDays after the day it
// recovered, or after the first day of an improvement, which never recovers; false for an open
// or acknowledged regression, which stays for as long as it lasts.
func (r Regression) End() (time.Time, bool) {
	switch {
	case r.Kind == KindImprovement:
		return HistoryEnd(r.FirstBad), true
	case r.Status == RegressionRecovered:
		return HistoryEnd(r.Recovered), true
	}
	return time.Time{}, false
}

// DayValue is one day's value of a series (yyyymmdd).
type DayValue struct {
	Day   string
	Value float64
}

// Level is a series' median and spread (interquartile range) over some days.
type Level struct {
	Median, Spread float64
}

// CauseItem is one difference between two Lighthouse reports of a page.
type CauseItem struct {
	// Kind is what changed: "lcp_element", "lcp_resource", "lcp_phase", "resource_added",
	// "resource_removed", "resource_grew", "render_blocking_added", "render_blocking_slowed",
	// "request_slowed", "document_slowed", "script_main_thread", "long_task_added",
	// "layout_shift", "audit_failing".
	Kind   string
	Title  string
	URL    string `dynamodbav:",omitempty"`
	Type   string `dynamodbav:",omitempty"` // resource type
	Party  string `dynamodbav:",omitempty"` // "first" or "third"
	Before float64
	After  float64
	Unit   string `dynamodbav:",omitempty"`
	// Impact is the estimated effect on the regressed metric, in its unit; the list is
	// ordered by it.
	Impact float64
}

// RegressionID is the ID of the change of a series (its key, e.g. page, device and metric)
// that began on firstBad: the same however often it is found.
func RegressionID(w Website, series, firstBad string) string {
	sum := sha256.Sum256([]byte(w.Account + "\x00" + w.ID + "\x00" + series + "\x00" + firstBad))
	return "rg_" + firstBad + "_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:10]))
}

// IncidentID is the ID of the incident of a subject ("page:" or "test:" and its ID) and kind
// that began on firstBad: the same for every regression that joins it.
func IncidentID(w Website, subject, kind, firstBad string) string {
	sum := sha256.Sum256([]byte(w.Account + "\x00" + w.ID + "\x00" + subject + "\x00" + kind + "\x00" + firstBad))
	return "in_" + firstBad + "_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:10]))
}

// Incident states. An improvement is never open: it asks nothing of anyone, so it is resolved
// from the start.
const (
	IncidentOpen         = "open"
	IncidentAcknowledged = "acknowledged"
	IncidentResolved     = "resolved"
)

// Incident is one change of a page or of a multistep test: the regressions (or improvements)
// of its metrics and devices that began within IncidentWindowDays of its first.
type Incident struct {
	ID      string
	Kind    string // KindRegression or KindImprovement
	Subject string // "page:<id>" or "test:<id>"
	// Members are its regressions, oldest first bad day first.
	Members []Regression
}

// IncidentWindowDays is how many days after an incident's first bad day a change of the same
// page or test (and kind) still joins it: one page change shows on the same day's results and,
// for results of the next day (a later audit, the daily user-experience data), on the next.
const IncidentWindowDays = 1

// Subject is what a regression is about, as incidents group it: its page or its test.
func (r Regression) Subject() string {
	if r.Test != "" {
		return "test:" + r.Test
	}
	return "page:" + r.Page
}

// FirstBad is the first bad day of the incident's earliest change.
func (in Incident) FirstBad() string { return in.Members[0].FirstBad }

// State is open while a member regression is open, acknowledged while none is open but one
// has not recovered, and resolved once all recovered (an improvement: always).
func (in Incident) State() string {
	if in.Kind != KindRegression {
		return IncidentResolved
	}
	state := IncidentResolved
	for _, r := range in.Members {
		switch r.Status {
		case RegressionOpen:
			return IncidentOpen
		case RegressionAcknowledged:
			state = IncidentAcknowledged
		}
	}
	return state
}

// RegressionFilter narrows the regressions list; empty fields do not filter. From and To are
// days (yyyymmdd, both included) the first bad day lies in.
type RegressionFilter struct {
	Status, Metric, Page, Device, Test, Kind, Source string
	From, To                                         string
}

// RegressionThreshold is a website's least change of one metric (see regression.Threshold).
type RegressionThreshold struct {
	Relative, Absolute float64
}

// Annotation is something that happened to a website (a deploy, a campaign) at a time, shown
// on its timelines and as part of a regression's cause.
type Annotation struct {
	ID      string
	At      time.Time
	Text    string
	URL     string   `dynamodbav:",omitempty"`
	Pages   []string `dynamodbav:",omitempty"`
	Created time.Time
}
