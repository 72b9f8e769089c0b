package model

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// TestSeries is a test series: what started it and how far its tests have come.
type TestSeries struct {
	ID          string
	Description string `dynamodbav:",omitempty"`
	Initiator   string `dynamodbav:",omitempty"`
	// Commit is the commit the series tested (lowercase hex), when CI said: a pull request's
	// series finds its base commit's by it.
	Commit  string `dynamodbav:",omitempty"`
	Created time.Time
	// Count is the number of tests; Started, Finished and Failed count the tests that began,
	// ended and failed. Each is counted in the transaction that changes the test's status, so
	// that a redelivered audit counts nothing twice.
	Count, Started, Finished, Failed int
}

// Status is the series' status: queued before any test began, testing until every test has
// ended, then completed, or failed when any test failed.
func (t TestSeries) Status() string {
	switch {
	case t.Finished >= t.Count && t.Failed > 0:
		return RunFailed
	case t.Finished >= t.Count:
		return RunCompleted
	case t.Started > 0 || t.Finished > 0:
		return RunTesting
	}
	return RunQueued
}

// SeriesTest is one test of a series: a page on a device, with its outcome once it ended.
type SeriesTest struct {
	ID     string
	Series string
	Page   string
	// URL and Alias are the page's when the series started, so that a series still reads
	// after its page changed or was deleted.
	URL, Alias string
	Device     string
	Status     string
	Error      string `dynamodbav:",omitempty"`
	// Metrics are the audit's lab fields (as LabResult.Metrics); Opportunities counts its
	// opportunities; ReportKey is the S3 key of its gzipped Lighthouse report.
	Metrics       map[string]float64 `dynamodbav:",omitempty"`
	Opportunities int
	ReportKey     string `dynamodbav:",omitempty"`
	// Method is the measurement method of its audit ("" until it completed, or completed
	// before methods: simulated).
	Method   string     `dynamodbav:",omitempty"`
	Started  *time.Time `dynamodbav:",omitempty"`
	Finished *time.Time `dynamodbav:",omitempty"`
	// Queued is when the test's current audit message was queued (its audit.Job's Queued):
	// a message of an earlier queuing, still in the queue after the audit was queued again,
	// is not audited. Requeued counts the times a sweep of overdue work queued it again.
	Queued   *time.Time `dynamodbav:",omitempty"`
	Requeued int        `dynamodbav:",omitempty"`
}

// IsFinished tells whether a test has an outcome.
func (t SeriesTest) IsFinished() bool { return t.Status == RunCompleted || t.Status == RunFailed }

// NewSeriesID returns the ID of a series created at t: its time first, so that the series of
// a website list newest first by key.
func NewSeriesID(t time.Time) string {
	t = t.UTC()
	return fmt.Sprintf("ts_%s%03d%s", t.Format("20060102150405"), t.Nanosecond()/1e6, NewID()[:8])
}

// SeriesTestID is the ID of a series' n-th test: it names its series, so that a test is read
// by its ID alone.
func SeriesTestID(series string, n int) string {
	return "tt_" + strings.TrimPrefix(series, "ts_") + "_" + strconv.Itoa(n)
}
