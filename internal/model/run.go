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
}

// IsFinished tells whether a run has an outcome: completed or failed.
func (r Run) IsFinished() bool { return r.Status == RunCompleted || r.Status == RunFailed }
