package api

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/openvitals/openvitals/internal/compare"
	"github.com/openvitals/openvitals/internal/metrics"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/regression"
)

// Limits of an experiment's changes.
const (
	maxExperimentRules   = 20
	maxExperimentPattern = 500
	maxExperimentCode    = 20000
	maxExperimentFind    = 2000
)

// experimentJSON is an experiment as the API shows it; a completed one has its comparison.
type experimentJSON struct {
	ID         string              `json:"id"`
	Page       string              `json:"page"`
	Device     string              `json:"device"`
	Changes    experimentChanges   `json:"changes"`
	Status     string              `json:"status"`
	Error      string              `json:"error,omitempty"`
	Profile    string              `json:"profile,omitempty"`
	Method     string              `json:"method,omitempty"`
	CreatedAt  time.Time           `json:"createdAt"`
	FinishedAt *time.Time          `json:"finishedAt,omitempty"`
	Metrics    []metricCompareJSON `json:"metrics,omitempty"`
	Loads      *loadsJSON          `json:"loads,omitempty"`
}

// experimentChanges are the changes as sent and shown.
type experimentChanges struct {
	Block   []string          `json:"block,omitempty"`
	Delay   []delayJSON       `json:"delay,omitempty"`
	Script  string            `json:"script,omitempty"`
	Style   string            `json:"style,omitempty"`
	Replace []replacementJSON `json:"replace,omitempty"`
}

type delayJSON struct {
	Pattern string `json:"pattern"`
	Ms      int    `json:"ms"`
}

type replacementJSON struct {
	Find string `json:"find"`
	With string `json:"with"`
}

type experimentInput struct {
	Page    *string            `json:"page"`
	Device  *string            `json:"device"`
	Changes *experimentChanges `json:"changes"`
}

func toExperimentJSON(e model.Experiment) experimentJSON {
	out := experimentJSON{ID: e.ID, Page: e.Page, Device: e.Device, Status: e.Status, Error: e.Error, Profile: e.ProfileID, Method: e.Method,
		CreatedAt: e.Created.UTC(), FinishedAt: e.Finished,
		Changes: experimentChanges{Block: e.Changes.Block, Script: e.Changes.Script, Style: e.Changes.Style}}
	for _, d := range e.Changes.Delay {
		out.Changes.Delay = append(out.Changes.Delay, delayJSON{Pattern: d.Pattern, Ms: d.Ms})
	}
	for _, r := range e.Changes.Replace {
		out.Changes.Replace = append(out.Changes.Replace, replacementJSON{Find: r.Find, With: r.With})
	}
	if e.Control != nil && e.Measured != nil {
		base := compare.Audit{Metrics: e.Control.Metrics, Samples: e.Control.Samples}
		target := compare.Audit{Metrics: e.Measured.Metrics, Samples: e.Measured.Samples}
		out.Metrics = []metricCompareJSON{}
		for _, m := range compare.Metrics(base, target, regression.SourceMetrics[regression.SourceLab]) {
			mj := metricCompareJSON{Name: m.Name, Base: m.Base, Target: m.Target, Change: m.Delta, ChangePercent: m.Percent,
				BaseSpread: m.BaseSpread, TargetSpread: m.TargetSpread, BeyondSpread: m.BeyondSpread}
			if watched, ok := regression.Lookup(m.Name); ok {
				mj.Unit, mj.HigherIsWorse = watched.Unit, &watched.HigherIsWorse
			}
			out.Metrics = append(out.Metrics, mj)
		}
	}
	return out
}

// checkChanges checks an experiment's changes: at least one, each within its limits.
func checkChanges(in experimentChanges, errs *model.FieldErrors) model.ExperimentChanges {
	var c model.ExperimentChanges
	pattern := func(field, p string) {
		if p == "" || len(p) > maxExperimentPattern || checkHeaderValue(p, maxExperimentPattern) != "" {
			errs.Add(field, "must be a URL pattern of 1 to %d bytes (* matches any characters, ? one)", maxExperimentPattern)
		}
	}
	if len(in.Block) > maxExperimentRules || len(in.Delay) > maxExperimentRules || len(in.Replace) > maxExperimentRules {
		errs.Add("changes", "at most %d block, delay and replace rules each", maxExperimentRules)
		return c
	}
	for i, p := range in.Block {
		pattern(fmt.Sprintf("changes.block[%d]", i), p)
		c.Block = append(c.Block, p)
	}
	for i, d := range in.Delay {
		pattern(fmt.Sprintf("changes.delay[%d].pattern", i), d.Pattern)
		if d.Ms < 1 || d.Ms > int(model.MaxExperimentDelay/time.Millisecond) {
			errs.Add(fmt.Sprintf("changes.delay[%d].ms", i), "must be from 1 to %d", model.MaxExperimentDelay/time.Millisecond)
		}
		c.Delay = append(c.Delay, model.Delay{Pattern: d.Pattern, Ms: d.Ms})
	}
	if len(in.Script) > maxExperimentCode {
		errs.Add("changes.script", "at most %d bytes", maxExperimentCode)
	}
	if len(in.Style) > maxExperimentCode {
		errs.Add("changes.style", "at most %d bytes", maxExperimentCode)
	}
	c.Script, c.Style = in.Script, in.Style
	for i, r := range in.Replace {
		if r.Find == "" || len(r.Find) > maxExperimentFind {
			errs.Add(fmt.Sprintf("changes.replace[%d].find", i), "must be 1 to %d bytes", maxExperimentFind)
		}
		if len(r.With) > maxExperimentCode {
			errs.Add(fmt.Sprintf("changes.replace[%d].with", i), "at most %d bytes", maxExperimentCode)
		}
		c.Replace = append(c.Replace, model.Replacement{Find: r.Find, With: r.With})
	}
	if c.IsZero() {
		errs.Add("changes", "change something: block, delay, script, style or replace")
	}
	return c
}

// createExperiment queues an experiment on one of the website's pages: two audits of the
// day's on-demand audits (its control and itself).
func (s *Server) createExperiment(w http.ResponseWriter, r *http.Request, c caller) error {
	site, in, err := websiteAndBody[experimentInput](s, w, r, c)
	if err != nil {
		return err
	}
	var errs model.FieldErrors
	e := model.Experiment{ID: "exp_" + model.NewID()}
	if in.Device == nil || !slices.Contains(metrics.Devices, *in.Device) {
		errs.Add("device", "must be desktop or mobile")
	} else {
		e.Device = *in.Device
	}
	if in.Page == nil {
		errs.Add("page", "is required")
	} else if _, err := s.store.Page(r.Context(), site, *in.Page); model.IsNotFound(err) {
		errs.Add("page", "is not a page of this website")
	} else if err != nil {
		return err
	} else {
		e.Page = *in.Page
	}
	if in.Changes == nil {
		errs.Add("changes", "is required")
	} else {
		e.Changes = checkChanges(*in.Changes, &errs)
	}
	if err := errs.Err(); err != nil {
		return err
	}
	err = s.takeAudits(r.Context(), site, 2, func() (int, error) {
		if err := s.auditor.Experiment(r.Context(), site, &e); err != nil {
			return 0, err
		}
		return 2, nil
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusAccepted, toExperimentJSON(e))
}

// experimentKind is how experiments are listed; one is created by createExperiment (it is
// queued) and shown by getExperiment (with its comparison).
func (s *Server) experimentKind() itemKind[model.Experiment, experimentInput] {
	return itemKind[model.Experiment, experimentInput]{list: s.store.Experiments, show: showing(toExperimentJSON)}
}

func (s *Server) getExperiment(w http.ResponseWriter, r *http.Request, c caller) error {
	site, err := s.website(r, c)
	if err != nil {
		return err
	}
	e, err := s.store.Experiment(r.Context(), site, r.PathValue("experimentID"))
	if err != nil {
		return err
	}
	out := toExperimentJSON(e)
	if e.Control != nil && e.Measured != nil {
		base, err := s.diagnosticsOrNone(r.Context(), e.Control.ReportKey)
		if err != nil {
			return err
		}
		target, err := s.diagnosticsOrNone(r.Context(), e.Measured.ReportKey)
		if err != nil {
			return err
		}
		if base != nil && target != nil {
			// The frames' images are kept, but served for pages' days only: times here.
			noImage := func(model.Frame) string { return "" }
			out.Loads = toLoadsJSON(compare.CompareLoads(base, target, compare.DefaultThresholds), noImage, noImage)
			out.Loads.LongTasks = compareLongTasks(base.LongTasks, target.LongTasks)
		}
	}
	return writeJSON(w, http.StatusOK, out)
}

// deleteExperiment removes an experiment, whatever its status: its diagnostics' objects are
// purged after it, and what a worker still running it stores meanwhile goes with the purge's
// later passes.
func (s *Server) deleteExperiment(w http.ResponseWriter, r *http.Request, c caller) error {
	site, err := s.website(r, c)
	if err != nil {
		return err
	}
	job, err := s.store.DeleteExperiment(r.Context(), site, r.PathValue("experimentID"))
	if err != nil {
		return err
	}
	s.enqueuePurge(r, job)
	w.WriteHeader(http.StatusNoContent)
	return nil
}
