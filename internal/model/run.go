package model

import "time"

// The statuses of a multistep run.
const (
	RunQueued    = "queued"
	RunTesting   = "testing"
	RunCompleted = "completed"
	RunFailed    = "failed"
)

// Run is one run of a multistep test. Its measurements are nil until it completed.
type Run struct {
	ID      string
	Test    string
	Created time.Time
	Device  string
	Status  string

	Duration   *float64 // ms
	INP        *float64 // ms
	TBT        *float64 // ms
	CLS        *float64
	CPUTotal   *float64 // ms
	BytesTotal *int64

	// Error and FailedStep say why a failed run failed; ScreenshotKey is the S3 key of the
	// page at the failure.
	Error         string `dynamodbav:",omitempty"`
	FailedStep    *int
	ScreenshotKey string `dynamodbav:",omitempty"`
	Finished      time.Time
	// Queued is when the run's current message was queued (its multistep.Job's Queued): a
	// message of an earlier queuing, still in the queue after the run was queued again, is not
	// played. Started is when its first delivery began to play it. Requeued counts the times a
	// sweep of overdue work queued it again.
	Queued   *time.Time `dynamodbav:",omitempty"`
	Started  *time.Time `dynamodbav:",omitempty"`
	Requeued int        `dynamodbav:",omitempty"`
	// SoftNavigations are the route changes of a single-page app the run's steps made, each
	// with its route's vitals; none for a journey through documents only.
	SoftNavigations []SoftNavigation `dynamodbav:",omitempty"`
}

// SoftNavigation is a route change a step of a multistep run made in a single-page app, with
// its route's Core Web Vitals as the lab measured them (Chromium's soft-navigation entries).
type SoftNavigation struct {
	Step int    // index of the step whose interaction started it, from 0
	URL  string // the route's address
	// LCP is from the interaction to its largest paint, ms; INP the route's longest
	// interaction, ms; nil when the browser reported none.
	LCP        *float64 `dynamodbav:",omitempty"`
	LCPElement string   `dynamodbav:",omitempty"`
	CLS        float64
	INP        *float64 `dynamodbav:",omitempty"`
	INPTarget  string   `dynamodbav:",omitempty"`
}

// IsFinished tells whether a run has an outcome: completed or failed.
func (r Run) IsFinished() bool { return r.Status == RunCompleted || r.Status == RunFailed }
