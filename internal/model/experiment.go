package model

import (
	"fmt"
	"slices"
	"time"
)

// ExperimentChanges are what an experiment changes in a page's load, in the audit's browser:
// requests blocked or delayed by URL pattern (DevTools wildcards: * any characters, ? one), a
// script or stylesheet injected into the document, text of the document replaced.
// The API takes and shows them as they are (their JSON names).
type ExperimentChanges struct {
	Block []string `json:"block,omitempty" dynamodbav:",omitempty"`
	Delay []Delay  `json:"delay,omitempty" dynamodbav:",omitempty"`
	// Script and Style are inserted at the start of the document's head: an http(s) URL (a
	// <script src>, a <link rel=stylesheet>) or the code itself.
	Script  string        `json:"script,omitempty" dynamodbav:",omitempty"`
	Style   string        `json:"style,omitempty" dynamodbav:",omitempty"`
	Replace []Replacement `json:"replace,omitempty" dynamodbav:",omitempty"`
}

// Delay holds the requests whose URL matches Pattern for Ms milliseconds before they are sent.
type Delay struct {
	Pattern string `json:"pattern"`
	Ms      int    `json:"ms"`
}

// Replacement replaces every Find in the document's HTML with With.
type Replacement struct {
	Find string `json:"find"`
	With string `json:"with"`
}

// Limits of an experiment's changes.
const (
	maxExperimentRules   = 20
	maxExperimentPattern = 500
	maxExperimentCode    = 20000
	maxExperimentFind    = 2000
)

// Check records what is wrong with the changes under "changes": there must be at least one,
// each within its limits.
func (c ExperimentChanges) Check(errs *FieldErrors) {
	pattern := func(field, p string) {
		if p == "" || checkHeaderValue(p, maxExperimentPattern) != "" {
			errs.Add(field, "must be a URL pattern of 1 to %d bytes (* matches any characters, ? one)", maxExperimentPattern)
		}
	}
	if len(c.Block) > maxExperimentRules || len(c.Delay) > maxExperimentRules || len(c.Replace) > maxExperimentRules {
		errs.Add("changes", "at most %d block, delay and replace rules each", maxExperimentRules)
		return
	}
	for i, p := range c.Block {
		pattern(fmt.Sprintf("changes.block[%d]", i), p)
	}
	for i, d := range c.Delay {
		pattern(fmt.Sprintf("changes.delay[%d].pattern", i), d.Pattern)
		if d.Ms < 1 || d.Ms > int(MaxExperimentDelay/time.Millisecond) {
			errs.Add(fmt.Sprintf("changes.delay[%d].ms", i), "must be from 1 to %d", MaxExperimentDelay/time.Millisecond)
		}
	}
	if len(c.Script) > maxExperimentCode {
		errs.Add("changes.script", "at most %d bytes", maxExperimentCode)
	}
	if len(c.Style) > maxExperimentCode {
		errs.Add("changes.style", "at most %d bytes", maxExperimentCode)
	}
	for i, r := range c.Replace {
		if r.Find == "" || len(r.Find) > maxExperimentFind {
			errs.Add(fmt.Sprintf("changes.replace[%d].find", i), "must be 1 to %d bytes", maxExperimentFind)
		}
		if len(r.With) > maxExperimentCode {
			errs.Add(fmt.Sprintf("changes.replace[%d].with", i), "at most %d bytes", maxExperimentCode)
		}
	}
	if c.IsZero() {
		errs.Add("changes", "change something: block, delay, script, style or replace")
	}
}

// ExperimentRequest asks for an experiment on a page and device; nil means omitted.
type ExperimentRequest struct {
	Page    *string            `json:"page"`
	Device  *string            `json:"device"`
	Changes *ExperimentChanges `json:"changes"`
}

// Experiment checks the request and returns the experiment it asks for, not yet queued.
// page reads a page of the website by its ID (ErrNotFound: the website has none of that ID);
// any other error it returns is returned.
func (r ExperimentRequest) Experiment(page func(id string) error) (Experiment, error) {
	var errs FieldErrors
	e := Experiment{ID: "exp_" + NewID()}
	if r.Device == nil || !slices.Contains(Devices, *r.Device) {
		errs.Add("device", "must be desktop or mobile")
	} else {
		e.Device = *r.Device
	}
	if r.Page == nil {
		errs.Add("page", "is required")
	} else if err := page(*r.Page); IsNotFound(err) {
		errs.Add("page", "is not a page of this website")
	} else if err != nil {
		return e, err
	} else {
		e.Page = *r.Page
	}
	if r.Changes == nil {
		errs.Add("changes", "is required")
	} else {
		r.Changes.Check(&errs)
		e.Changes = *r.Changes
	}
	return e, errs.Err()
}

// IsZero tells whether the changes change nothing.
func (c ExperimentChanges) IsZero() bool {
	return len(c.Block) == 0 && len(c.Delay) == 0 && c.Script == "" && c.Style == "" && len(c.Replace) == 0
}

// MaxExperimentDelay bounds a delay rule.
const MaxExperimentDelay = 30 * time.Second

// Experiment is a one-off audit of a page with changes applied in the browser, compared with a
// plain audit of the same page run right before it (its control), with the same runs and test
// profile. The API shows it as it is (its JSON names), with the comparison of its audits
// rather than the audits.
type Experiment struct {
	ID      string            `json:"id"`
	Page    string            `json:"page"`
	Device  string            `json:"device"`
	Changes ExperimentChanges `json:"changes"`
	// Status is RunQueued, RunTesting, RunCompleted or RunFailed; Error says why it failed.
	Status string `json:"status"`
	Error  string `json:"error,omitempty" dynamodbav:",omitempty"`
	// Control and Measured are the two audits' metrics (the median run's) and every run's
	// values of the watched metrics, once completed.
	Control, Measured *ExperimentAudit `json:"-" dynamodbav:",omitempty"`
	// ProfileID is the test profile both audits used ("": none).
	ProfileID string `json:"profile,omitempty" dynamodbav:",omitempty"`
	// Method is the measurement method both audits used ("": completed before methods, or
	// not completed).
	Method   string     `json:"method,omitempty" dynamodbav:",omitempty"`
	Created  time.Time  `json:"createdAt"`
	Finished *time.Time `json:"finishedAt,omitempty" dynamodbav:",omitempty"`
}

// ExperimentAudit is one audit of an experiment.
type ExperimentAudit struct {
	Metrics map[string]float64
	Samples map[string][]float64 `dynamodbav:",omitempty"`
	// ReportKey names where its median run's diagnostics are stored (artifact.DiagnosticsKey
	// of it); "" when none were kept.
	ReportKey string `dynamodbav:",omitempty"`
}
