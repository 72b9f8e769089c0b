package model

import "time"

// ExperimentChanges are what an experiment changes in a page's load, in the audit's browser:
// requests blocked or delayed by URL pattern (DevTools wildcards: * any characters, ? one), a
// script or stylesheet injected into the document, text of the document replaced.
type ExperimentChanges struct {
	Block []string `dynamodbav:",omitempty"`
	Delay []Delay  `dynamodbav:",omitempty"`
	// Script and Style are inserted at the start of the document's head: an http(s) URL (a
	// <script src>, a <link rel=stylesheet>) or the code itself.
	Script  string        `dynamodbav:",omitempty"`
	Style   string        `dynamodbav:",omitempty"`
	Replace []Replacement `dynamodbav:",omitempty"`
}

// Delay holds the requests whose URL matches Pattern for Ms milliseconds before they are sent.
type Delay struct {
	Pattern string
	Ms      int
}

// Replacement replaces every Find in the document's HTML with With.
type Replacement struct {
	Find, With string
}

// IsZero tells whether the changes change nothing.
func (c ExperimentChanges) IsZero() bool {
	return len(c.Block) == 0 && len(c.Delay) == 0 && c.Script == "" && c.Style == "" && len(c.Replace) == 0
}

// MaxExperimentDelay bounds a delay rule.
const MaxExperimentDelay = 30 * time.Second

// Experiment is a one-off audit of a page with changes applied in the browser, compared with a
// plain audit of the same page run right before it (its control), with the same runs and test
// profile.
type Experiment struct {
	ID      string
	Page    string
	Device  string
	Changes ExperimentChanges
	// Status is RunQueued, RunTesting, RunCompleted or RunFailed; Error says why it failed.
	Status string
	Error  string `dynamodbav:",omitempty"`
	// Control and Measured are the two audits' metrics (the median run's) and every run's
	// values of the watched metrics, once completed.
	Control, Measured *ExperimentAudit `dynamodbav:",omitempty"`
	// ProfileID is the test profile both audits used ("": none).
	ProfileID string `dynamodbav:",omitempty"`
	// Method is the measurement method both audits used ("": completed before methods, or
	// not completed).
	Method   string `dynamodbav:",omitempty"`
	Created  time.Time
	Finished *time.Time `dynamodbav:",omitempty"`
}

// ExperimentAudit is one audit of an experiment.
type ExperimentAudit struct {
	Metrics map[string]float64
	Samples map[string][]float64 `dynamodbav:",omitempty"`
	// ReportKey names where its median run's diagnostics are stored (artifact.DiagnosticsKey
	// of it); "" when none were kept.
	ReportKey string `dynamodbav:",omitempty"`
}
