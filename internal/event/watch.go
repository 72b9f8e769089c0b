package event

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/openvitals/openvitals/internal/budget"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/multistep"
	"github.com/openvitals/openvitals/internal/store"
)

// Budgets records the status changes of a website's budgets, as budget.Checker reports them
// after a result was stored. A budget never seen before counts as ok before.
func (r *Recorder) Budgets(ctx context.Context, w model.Website, reports []budget.Report) error {
	var errs []error
	for _, rep := range reports {
		b := rep.Budget
		errs = append(errs, r.Observe(ctx, w, store.BudgetState(b.ID), func(st model.State) Decision {
			before := st.Value
			if before == "" {
				before = budget.OK
			}
			d := Decision{Value: rep.Status}
			if rep.Status != before {
				d.Event = &model.Event{Type: BudgetStatusChanged, Budget: b.ID, Before: before, After: rep.Status,
					Summary: fmt.Sprintf("Budget %s %s %s (%s): %s → %s, %s", b.Metric, operatorWord(b.Operator),
						strconv.FormatFloat(b.Value, 'f', -1, 64), b.Device, before, rep.Status, pagesWord(len(rep.Pages)))}
			}
			return d
		}))
	}
	return errors.Join(errs...)
}

func operatorWord(op string) string {
	if op == "gt" {
		return "above"
	}
	return "below"
}

func pagesWord(n int) string {
	switch n {
	case 0:
		return "every page within it"
	case 1:
		return "1 page and device off it"
	}
	return strconv.Itoa(n) + " pages and devices off it"
}

// Test records a multistep test's state after a run finished (up, down, flaky, off, from its
// runs of the statistics window), and a failed run that follows a completed one. A test's
// first state is recorded silently unless it is down.
func (r *Recorder) Test(ctx context.Context, w model.Website, t model.Test, run model.Run, runs []model.Run, now time.Time) error {
	state := multistep.Summarize(runs, now).State
	err := r.Observe(ctx, w, store.TestState(t.ID), func(st model.State) Decision {
		d := Decision{Value: state}
		if st.Value != state && (st.Value != "" || state == multistep.StateDown) {
			before := st.Value
			if before == "" {
				before = multistep.StateOff
			}
			d.Event = &model.Event{Type: MultistepStateChanged, Test: t.ID, Device: t.Device, Before: before, After: state,
				Summary: fmt.Sprintf("Multistep test %q is %s (was %s)", t.Alias, state, before)}
		}
		return d
	})
	if err != nil || run.Status != model.RunFailed || !previousCompleted(runs, run) {
		return err
	}
	// One failed run is one event: the state is the last failed run's ID.
	return r.Observe(ctx, w, model.StateKey(string(store.TestState(t.ID))+"#FAILED-RUN"), func(st model.State) Decision {
		d := Decision{Value: run.ID}
		if st.Value != run.ID {
			d.Event = &model.Event{Type: MultistepRunFailed, Test: t.ID, Run: run.ID, Device: t.Device,
				Before: model.RunCompleted, After: model.RunFailed,
				Error: run.Error, FailedStep: run.FailedStep, Screenshot: run.ScreenshotKey,
				Summary: fmt.Sprintf("Multistep test %q failed%s: %s", t.Alias, stepWords(run.FailedStep), run.Error)}
		}
		return d
	})
}

func stepWords(step *int) string {
	if step == nil {
		return ""
	}
	return " at step " + strconv.Itoa(*step+1)
}

// previousCompleted tells whether the finished run before run completed.
func previousCompleted(runs []model.Run, run model.Run) bool {
	var prev *model.Run
	for i, r := range runs {
		if r.ID == run.ID || !r.IsFinished() || !r.Created.Before(run.Created) {
			continue
		}
		if prev == nil || r.Created.After(prev.Created) {
			prev = &runs[i]
		}
	}
	return prev != nil && prev.Status == model.RunCompleted
}

// The states of a page's daily audit on one device.
const (
	auditPassing = "passing"
	auditFailing = "failing"
)

// AuditFailed records that a page's audit on device failed for good on day (yyyymmdd, its
// last attempt): the second day running makes the page failing (audit.failing).
func (r *Recorder) AuditFailed(ctx context.Context, w model.Website, p model.Page, device, day, reason string) error {
	return r.Observe(ctx, w, store.PageState(p.ID, "audit#"+device), func(st model.State) Decision {
		if st.Value == auditFailing {
			return Decision{Value: auditFailing, Day: st.Day}
		}
		if st.Day == "" || st.Day == day || st.Day != previousDay(day) {
			return Decision{Value: auditPassing, Day: day} // the first failed day
		}
		return Decision{Value: auditFailing, Day: day, Event: &model.Event{Type: AuditFailing, Page: p.ID, Device: device,
			Error: reason, Summary: fmt.Sprintf("%s on %s: the daily audit failed 2 days running: %s", p.URL, device, reason)}}
	})
}

// AuditSucceeded records that a page's audit on device succeeded: a failing page recovers
// (audit.recovered).
func (r *Recorder) AuditSucceeded(ctx context.Context, w model.Website, p model.Page, device string) error {
	return r.Observe(ctx, w, store.PageState(p.ID, "audit#"+device), func(st model.State) Decision {
		d := Decision{Value: auditPassing}
		if st.Value == auditFailing {
			d.Event = &model.Event{Type: AuditRecovered, Page: p.ID, Device: device,
				Summary: fmt.Sprintf("%s on %s: the daily audit succeeds again", p.URL, device)}
		}
		return d
	})
}

func previousDay(day string) string {
	t, err := time.Parse("20060102", day)
	if err != nil {
		return ""
	}
	return t.AddDate(0, 0, -1).Format("20060102")
}

// UXAssessment records a page's user-experience assessment on device (passed or not) after a
// collection; a flip is ux.assessment_changed. The first assessment is recorded silently.
func (r *Recorder) UXAssessment(ctx context.Context, w model.Website, p model.Page, device string, passed bool) error {
	value := "failed"
	if passed {
		value = "passed"
	}
	return r.Observe(ctx, w, store.PageState(p.ID, "ux#"+device), func(st model.State) Decision {
		d := Decision{Value: value}
		if st.Value != "" && st.Value != value {
			d.Event = &model.Event{Type: UXAssessmentChanged, Page: p.ID, Device: device,
				Summary: fmt.Sprintf("%s on %s: the user-experience assessment %s (was %s)", p.URL, device, value, st.Value)}
		}
		return d
	})
}

// Regression records a regression's state: open (or acknowledged) when found, recovered
// later. A regression found is regression.detected, its recovery regression.recovered;
// improvements are recorded without an event. subject names the page or test for people
// (its alias or URL; the ID when empty), unit the metric's unit ("" for none).
func (r *Recorder) Regression(ctx context.Context, w model.Website, reg model.Regression, subject, unit string) error {
	if reg.Kind != model.KindRegression {
		return nil
	}
	key := store.PageState(reg.Page, "regression#"+reg.ID)
	if reg.Test != "" {
		key = model.StateKey(string(store.TestState(reg.Test)) + "#REGRESSION#" + reg.ID)
	}
	value := "open"
	if reg.Status == model.RegressionRecovered {
		value = model.RegressionRecovered
	}
	if subject == "" {
		subject = reg.Page + reg.Test
	}
	if reg.Test != "" {
		subject = "multistep test " + subject
	}
	subject = reg.Metric + " of " + subject
	if reg.Device != "" {
		subject += " (" + reg.Device + ")"
	}
	return r.Observe(ctx, w, key, func(st model.State) Decision {
		d := Decision{Value: value}
		switch {
		case st.Value == "" && value == "open":
			d.Event = &model.Event{Type: RegressionDetected, Before: "ok", After: "regressed",
				Summary: fmt.Sprintf("Regression: %s went from %s to %s (%+.0f %%) from %s", subject,
					withUnit(reg.Before.Median, unit), withUnit(reg.After.Median, unit), reg.Percent, model.DayToISO(reg.FirstBad))}
		case st.Value != model.RegressionRecovered && value == model.RegressionRecovered:
			d.Event = &model.Event{Type: RegressionRecovered, Before: "regressed", After: "recovered",
				Summary: fmt.Sprintf("Recovered: %s is back near %s since %s", subject, withUnit(reg.Before.Median, unit), model.DayToISO(reg.Recovered))}
		default:
			return d
		}
		d.Event.Page, d.Event.Device, d.Event.Test = reg.Page, reg.Device, reg.Test
		d.Event.Regression, d.Event.Metric = reg.ID, reg.Metric
		return d
	})
}

func withUnit(v float64, unit string) string {
	if unit == "" {
		return number(v)
	}
	return number(v) + " " + unit
}

func number(v float64) string {
	if v != 0 && v > -10 && v < 10 {
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}
