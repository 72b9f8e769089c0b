package event

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/openvitals/openvitals/internal/metrics"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/multistep"
	"github.com/openvitals/openvitals/internal/store"
)

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

// Incident records an incident's state: open when its first regression is found, resolved
// once all its regressions recovered. An incident found is one regression.detected event
// naming every metric and device changed so far; its recovery one regression.recovered.
// Improvements are recorded without an event. unit is a metric's unit ("" for none).
func (r *Recorder) Incident(ctx context.Context, w model.Website, in model.Incident, unit func(metric string) string) error {
	if in.Kind != model.KindRegression || len(in.Members) == 0 {
		return nil
	}
	first := in.Members[0]
	key := incidentState(first.Page, first.Test, in.ID)
	value := "open"
	if in.State() == model.IncidentResolved {
		value = model.IncidentResolved
	}
	subject := SubjectName(ctx, r.store, w, first)
	return r.Observe(ctx, w, key, func(st model.State) Decision {
		d := Decision{Value: value}
		switch {
		case st.Value == "" && value == "open":
			d.Event = &model.Event{Type: RegressionDetected, Before: "ok", After: "regressed",
				Summary: IncidentSummary(in, subject, unit)}
		case st.Value != model.IncidentResolved && value == model.IncidentResolved:
			d.Event = &model.Event{Type: RegressionRecovered, Before: "regressed", After: "recovered",
				Summary: fmt.Sprintf("Recovered: %s is back to its level before %s (%s)", subject, model.DayToISO(in.FirstBad()), metricsWord(in))}
		default:
			return d
		}
		d.Event.Page, d.Event.Test, d.Event.Incident = first.Page, first.Test, in.ID
		if devices := devicesOf(in); len(devices) == 1 {
			d.Event.Device = devices[0]
		}
		if len(in.Members) == 1 {
			d.Event.Regression, d.Event.Metric = first.ID, first.Metric
		}
		return d
	})
}

// Verdict records an incident's field verdict and its event, once: the follow-up of the
// incident's detection (see DetectionID), named by the incident and its page.
func (r *Recorder) Verdict(ctx context.Context, w model.Website, in model.Incident, v model.Verdict) error {
	first := in.Members[0]
	if first.Page == "" {
		return nil
	}
	return r.Observe(ctx, w, store.PageState(first.Page, "verdict#"+in.ID), func(st model.State) Decision {
		d := Decision{Value: v.Verdict}
		if st.Value == "" {
			d.Event = &model.Event{Type: IncidentVerdict, Page: first.Page, Device: v.Device, Incident: in.ID, After: v.Verdict,
				Summary: v.Summary}
		} else {
			d.Value = st.Value // decided once
		}
		return d
	})
}

// DetectionID is the ID of the regression.detected event of an incident of a page or test: a
// verdict's follow-up names it, and channels keep the message they sent for it.
func DetectionID(w model.Website, page, test, incident string) string {
	return model.EventID(w, incidentState(page, test, incident), 1)
}

// incidentState is the key of an incident's watched state.
func incidentState(page, test, incident string) model.StateKey {
	if test != "" {
		return model.StateKey(string(store.TestState(test)) + "#INCIDENT#" + incident)
	}
	return store.PageState(page, "incident#"+incident)
}

// IncidentSummary is the summary of an incident's regression.detected event: its page or
// test (named by SubjectName), its first bad day and every metric's change.
func IncidentSummary(in model.Incident, subject string, unit func(string) string) string {
	return fmt.Sprintf("Regression of %s from %s: %s", subject, model.DayToISO(in.FirstBad()), changes(in, unit))
}

// Subjects reads the pages and multistep tests regressions are of; *store.Store is one.
type Subjects interface {
	Page(ctx context.Context, w model.Website, id string) (model.Page, error)
	Test(ctx context.Context, w model.Website, id string) (model.Test, error)
}

// SubjectName names a regression's page (alias and URL, else URL) or multistep test (alias)
// for people; its ID when it cannot be read.
func SubjectName(ctx context.Context, st Subjects, w model.Website, r model.Regression) string {
	if r.Test != "" {
		if t, err := st.Test(ctx, w, r.Test); err == nil {
			return "multistep test " + strconv.Quote(t.Alias)
		}
		return "multistep test " + r.Test
	}
	p, err := st.Page(ctx, w, r.Page)
	switch {
	case err != nil:
		return r.Page
	case p.Alias != "":
		return p.Alias + " (" + p.URL + ")"
	}
	return p.URL
}

// changes says each metric's change in an incident, with its devices and, for lab metrics,
// the measurement method, each metric by its name: "LCP 2,000 → 2,600 ms (+30 %, mobile, applied
// throttling), TBT 100 → 400 ms (+300 %, desktop, mobile, applied throttling)". A metric changed on several devices
// shows its largest change.
func changes(in model.Incident, unit func(string) string) string {
	type change struct {
		reg     model.Regression
		devices []string
	}
	var order []string
	by := map[string]*change{}
	for _, m := range in.Members {
		c := by[m.Metric]
		if c == nil {
			c = &change{reg: m}
			by[m.Metric] = c
			order = append(order, m.Metric)
		}
		if m.Device != "" && !slices.Contains(c.devices, m.Device) {
			c.devices = append(c.devices, m.Device)
		}
		if math.Abs(m.Percent) > math.Abs(c.reg.Percent) {
			c.reg = m
		}
	}
	parts := make([]string, len(order))
	for i, metric := range order {
		c := by[metric]
		slices.Sort(c.devices)
		where := ""
		if len(c.devices) > 0 {
			where = ", " + strings.Join(c.devices, ", ")
		}
		if c.reg.Source == "lab" { // its lab results are of one method (see regression.sinceMethod)
			where += ", " + model.MethodLabel(c.reg.Method)
		}
		u := unit(metric)
		parts[i] = fmt.Sprintf("%s %s → %s (%s %%%s)", metrics.Label(metric), number(c.reg.Before.Median), withUnit(c.reg.After.Median, u), signed(c.reg.Percent), where)
	}
	return strings.Join(parts, ", ")
}

// metricsWord names an incident's metrics: "LCP, TBT".
func metricsWord(in model.Incident) string {
	var names []string
	for _, m := range in.Members {
		if l := metrics.Label(m.Metric); !slices.Contains(names, l) {
			names = append(names, l)
		}
	}
	return strings.Join(names, ", ")
}

// devicesOf are the devices of an incident's regressions, sorted.
func devicesOf(in model.Incident) []string {
	var devices []string
	for _, m := range in.Members {
		if m.Device != "" && !slices.Contains(devices, m.Device) {
			devices = append(devices, m.Device)
		}
	}
	slices.Sort(devices)
	return devices
}

func withUnit(v float64, unit string) string {
	if unit == "" {
		return number(v)
	}
	return number(v) + " " + unit
}

// number writes a value as the dashboard does: small ones to three decimals at most (a layout
// shift's 0.05), others whole, in groups of three digits (2,600).
func number(v float64) string {
	if v != 0 && v > -10 && v < 10 {
		return strings.TrimRight(strings.TrimRight(strconv.FormatFloat(v, 'f', 3, 64), "0"), ".")
	}
	s := strconv.FormatFloat(math.Abs(math.Round(v)), 'f', 0, 64)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if v < 0 && s != "0" {
		s = "-" + s
	}
	return s
}

// signed is a change in percent, whole and grouped, with its sign: "+9,689", "-12", "0".
func signed(p float64) string {
	if math.Round(p) > 0 {
		return "+" + number(math.Round(p))
	}
	return number(math.Round(p))
}

// The delivery states of a channel.
const (
	channelActive  = "active"
	channelFailing = "failing"
)

// Channel records a channel's delivery state after an attempt: failing once its last
// model.ChannelFailingAfter deliveries failed (channel.failing), active again after one
// succeeds (channel.recovered). Its events go to the website's other channels.
func (r *Recorder) Channel(ctx context.Context, w model.Website, c model.Channel) error {
	value := channelActive
	if c.Failing() {
		value = channelFailing
	}
	return r.Observe(ctx, w, store.ChannelState(c.ID), func(st model.State) Decision {
		d := Decision{Value: value}
		switch {
		case value == channelFailing && st.Value != channelFailing:
			d.Event = &model.Event{Type: ChannelFailing, Channel: c.ID, Before: channelActive, After: channelFailing,
				Summary: fmt.Sprintf("Channel %q (%s) is failing: its last %d deliveries failed", c.Name, c.Kind, c.Failures)}
		case value == channelActive && st.Value == channelFailing:
			d.Event = &model.Event{Type: ChannelRecovered, Channel: c.ID, Before: channelFailing, After: channelActive,
				Summary: fmt.Sprintf("Channel %q (%s) delivers again", c.Name, c.Kind)}
		}
		return d
	})
}
