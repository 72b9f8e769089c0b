package regression

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/openvitals/openvitals/internal/compare"
	"github.com/openvitals/openvitals/internal/lighthouse"
	metricnames "github.com/openvitals/openvitals/internal/metrics"
	"github.com/openvitals/openvitals/internal/model"
)

// MaxCauseItems bounds a regression's cause: the top of the list is what matters.
const MaxCauseItems = 10

// labCause compares the diagnostics of a lab regression's last good and first bad days; a day
// that kept none (an audit from before diagnostics, a purged one) leaves the cause unknown:
// model.ErrNotFound.
func (w *Watcher) labCause(ctx context.Context, before, after model.LabResult, metric string) ([]model.CauseItem, error) {
	if w.diagnostics == nil {
		return nil, fmt.Errorf("no diagnostics to read: %w", model.ErrNotFound)
	}
	var diags [2]*model.Diagnostics
	for i, r := range []model.LabResult{before, after} {
		d, err := w.diagnostics.Diagnostics(ctx, r.ReportKey)
		if err != nil {
			return nil, fmt.Errorf("diagnostics of %s: %w", r.Day, err)
		}
		diags[i] = d
	}
	return ExplainLoads(diags[0], diags[1], after.Device, metric, newlyFailing(before.Opportunities, after.Opportunities)), nil
}

// weights say how much a kind of difference moves a metric, per unit of its estimated effect
// (milliseconds of loading or main-thread time; bytes are turned into milliseconds at the
// report's throttled throughput). Differences that do not move a metric are left out of its
// cause.
var weights = map[string]map[string]float64{
	"lcp":               {"lcp_element": 1, "lcp_resource": 1, "lcp_phase": 1, "render_blocking_added": 1, "render_blocking_slowed": 1, "resource_added": 0.3, "resource_grew": 0.3, "request_slowed": 0.3, "script_main_thread": 0.3, "long_task_added": 0.3},
	"fcp":               {"render_blocking_added": 1, "render_blocking_slowed": 1, "resource_added": 0.1, "resource_grew": 0.1, "script_main_thread": 0.2},
	"speed_index":       {"render_blocking_added": 1, "render_blocking_slowed": 1, "lcp_resource": 0.5, "lcp_element": 0.5, "lcp_phase": 0.5, "resource_added": 0.3, "resource_grew": 0.3, "request_slowed": 0.3, "script_main_thread": 0.3, "long_task_added": 0.3},
	"tbt":               {"script_main_thread": 1, "long_task_added": 1, "resource_added": 0.05},
	"ttfb":              {"document_slowed": 1, "resource_grew": 0.05},
	"cls":               {"layout_shift": 1},
	"kb_total":          {"resource_added": 1, "resource_grew": 1, "lcp_resource": 1},
	"requests":          {"resource_added": 1},
	"performance_score": {"lcp_element": 1, "lcp_resource": 1, "lcp_phase": 1, "render_blocking_added": 1, "render_blocking_slowed": 1, "script_main_thread": 1, "long_task_added": 1, "layout_shift": 1, "resource_added": 0.3, "resource_grew": 0.3, "request_slowed": 0.3},
}

// weigh adds it to items with its impact on a metric (effect times the weight w gives its
// kind), unless its kind does not move the metric or it has no effect.
func weigh(items []model.CauseItem, w map[string]float64, it model.CauseItem, effect float64) []model.CauseItem {
	if weight := w[it.Kind]; weight > 0 && effect > 0 {
		it.Impact = round(weight * effect)
		items = append(items, it)
	}
	return items
}

// sortByImpact orders items by impact, largest first; on a tie a change of the load (a
// request, an element) before an LCP phase, which only measures its effect; then by kind and
// URL, for a stable order.
func sortByImpact(items []model.CauseItem) {
	symptom := func(it model.CauseItem) int {
		if it.Kind == "lcp_phase" {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(items, func(a, b model.CauseItem) int {
		if a.Impact != b.Impact {
			if a.Impact > b.Impact {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(symptom(a), symptom(b)), strings.Compare(a.Kind+a.URL, b.Kind+b.URL))
	})
}

// effect is a change of kib bytes' effect on metric: bytes themselves for the byte and request
// counts, else the time to download them.
func effect(metric string, kib, msPerKiB float64) float64 {
	switch {
	case metric == "kb_total":
		return kib
	case !timeMetric(metric):
		return 1
	}
	return kib * msPerKiB
}

// timeMetric tells whether a change's effect on metric is time (ms), not bytes or a count.
func timeMetric(metric string) bool { return metric != "kb_total" && metric != "requests" }

func typeName(t string) string {
	switch t {
	case "Script":
		return "script"
	case "Stylesheet":
		return "stylesheet"
	case "Image":
		return "image"
	case "Font":
		return "font"
	case "Document":
		return "document"
	case "":
		return "resource"
	}
	return strings.ToLower(t) + " resource"
}

func round(v float64) float64 { return math.Round(v*1000) / 1000 }

// ExplainLoads ranks what changed between two loads of a page (the last good and the first
// bad day's diagnostics, compared as compare.CompareLoads does) by its likely effect on
// metric, largest first: requests added (render-blocking ones apart), grown or slowed, the LCP
// element and its phases, new layout shifts, long tasks and scripts' main-thread time (known
// when both loads' diagnostics list the scripts); requests removed follow with no
// effect, and the audits failing now that passed before (failing) last. device is the
// audits' ("mobile" or "desktop").
func ExplainLoads(before, after *model.Diagnostics, device, metric string, failing []model.Opportunity) []model.CauseItem {
	l := compare.CompareLoads(before, after, compare.DefaultThresholds)
	c := &causes{metric: metric, weights: weights[metric]}
	c.requests(l, device)
	c.lcp(l.LCP)
	c.shifts(l.Shifts)
	c.longTasks(before, after)
	c.scripts(before, after)
	return c.ranked(failing)
}

// causes gathers the cause items of a change of one metric, each weighed by its effect on it,
// and the requests removed (which have none).
type causes struct {
	metric         string
	weights        map[string]float64
	items, removed []model.CauseItem
}

func (c *causes) add(it model.CauseItem, effect float64) {
	c.items = weigh(c.items, c.weights, it, effect)
}

// requests adds the requests added, grown or slowed, with their effect at the throughput of
// device's throttling, and keeps the removed ones.
func (c *causes) requests(l compare.Loads, device string) {
	// The LCP resource's download is the LCP's load duration: while the LCP element stays,
	// that phase's growth is the resource's effect, measured by the trace (its request's own
	// times may differ by a few ms), so the resource, the cause, never ranks below the phase
	// that is its symptom. A new LCP element's load duration is the element change's.
	var loadDuration float64
	for _, p := range l.LCP.Phases {
		if p.Name == "loadDuration" && !l.LCP.ElementChanged {
			loadDuration = p.Delta
		}
	}
	msPerKiB := 0.8 // desktop preset: 10 Mbit/s
	if device == lighthouse.DeviceMobile {
		msPerKiB = 5.1 // mobile slow 4G: 1.6 Mbit/s
	}
	for _, ch := range l.Requests {
		r := ch.Request()
		it := model.CauseItem{URL: r.URL, Type: r.Type, Party: partyOf(r), Unit: "KiB"}
		what := requestName(r)
		kib := float64(ch.SizeDelta) / 1024
		switch ch.Kind {
		case compare.RequestAdded:
			it.Kind, it.After = "resource_added", round(kib)
			it.Title = fmt.Sprintf("+%s %s", kibText(kib), what)
			ms := effect(c.metric, kib, msPerKiB)
			if r.RenderBlocking {
				it.Kind = "render_blocking_added"
				ms = max(ms, r.End-r.Start)
			}
			c.add(it, ms)
		case compare.RequestGrew:
			it.Kind, it.Before, it.After = "resource_grew", round(float64(ch.Base.TransferSize)/1024), round(float64(r.TransferSize)/1024)
			ms := effect(c.metric, kib, msPerKiB)
			if r.LCP {
				it.Kind = "lcp_resource"
				// The LCP resource's own slower download, when measured (a throttled load's),
				// is its effect: the cause of the LCP load duration's growth beside it.
				if timeMetric(c.metric) {
					ms = max(ms, ch.TimeDelta, loadDuration)
				}
			}
			it.Title = fmt.Sprintf("%s grew by %s", upper(what), kibText(kib))
			c.add(it, ms)
		case compare.RequestSlowed:
			it.Kind, it.Unit = "request_slowed", "ms"
			it.Before, it.After = round(ch.Base.End-ch.Base.Start), round(r.End-r.Start)
			switch {
			case r.Document:
				it.Kind = "document_slowed"
			case r.RenderBlocking:
				it.Kind = "render_blocking_slowed"
			}
			it.Title = fmt.Sprintf("%s took %.0f ms longer", upper(what), ch.TimeDelta)
			c.add(it, ch.TimeDelta)
		case compare.RequestRemoved:
			it.Kind, it.Before = "resource_removed", round(float64(ch.Base.TransferSize)/1024)
			it.Title = fmt.Sprintf("%s was removed (%s)", upper(what), kibText(-kib))
			c.removed = append(c.removed, it)
		}
	}
}

// lcp adds a change of the LCP element and the changes of its phases.
func (c *causes) lcp(l compare.LCPChange) {
	if l.ElementChanged && l.Target != nil {
		var was, at float64
		if l.Base != nil {
			was = l.Base.Time
		}
		at = l.Target.Time
		c.add(model.CauseItem{Kind: "lcp_element", Title: "LCP element changed from " + lcpName(l.Base) + " to " + lcpName(l.Target),
			URL: l.Target.ImageURL, Before: round(was), After: round(at), Unit: "ms"}, at-was)
	}
	for _, p := range l.Phases {
		var b, a float64
		if p.Base != nil {
			b = *p.Base
		}
		if p.Target != nil {
			a = *p.Target
		}
		c.add(model.CauseItem{Kind: "lcp_phase", Title: fmt.Sprintf("LCP %s %+.0f ms", strings.ToLower(metricnames.PhaseLabel(p.Name)), p.Delta),
			URL: p.Name, Before: round(b), After: round(a), Unit: "ms"}, p.Delta)
	}
}

// shifts adds the layout shifts that are new or grew.
func (c *causes) shifts(shifts []compare.ShiftChange) {
	for _, s := range shifts {
		title := fmt.Sprintf("New layout shift of %s (%.3f)", cmp.Or(s.Key, "an element"), s.Score)
		if s.BaseScore > 0 {
			title = fmt.Sprintf("Layout shifts of %s grew from %.3f", cmp.Or(s.Key, "an element"), s.BaseScore)
		}
		c.add(model.CauseItem{Kind: "layout_shift", Title: title, URL: s.Key, Before: round(s.BaseScore), After: round(s.Score)}, s.Score)
	}
}

// longTasks adds the scripts whose long tasks block the main thread at least 20 ms more.
func (c *causes) longTasks(before, after *model.Diagnostics) {
	blocking := func(d *model.Diagnostics) map[string]float64 {
		out := map[string]float64{}
		for _, t := range d.LongTasks {
			out[t.URL] += max(t.Duration-50, 0)
		}
		return out
	}
	was, now := blocking(before), blocking(after)
	for u, ms := range now {
		// Work no script is named for points at nothing to change.
		if grew := ms - was[u]; grew >= 20 && u != "" && u != "Unattributable" {
			c.add(model.CauseItem{Kind: "long_task_added", Title: fmt.Sprintf("Long tasks of %s block the main thread %.0f ms more", cmp.Or(hostOf(u), "the page"), grew),
				URL: u, Before: round(was[u]), After: round(ms), Unit: "ms"}, grew)
		}
	}
}

// scripts adds the scripts whose main-thread time grew at least 20 ms.
func (c *causes) scripts(before, after *model.Diagnostics) {
	// Diagnostics stored before the scripts were kept list none: nothing to compare.
	if len(before.Scripts) == 0 || len(after.Scripts) == 0 {
		return
	}
	scriptWas := map[string]float64{}
	for _, sc := range before.Scripts {
		scriptWas[sc.URL] += sc.MainThread
	}
	for _, sc := range after.Scripts {
		if grew := sc.MainThread - scriptWas[sc.URL]; grew >= 20 && sc.URL != "" && sc.URL != "Unattributable" {
			c.add(model.CauseItem{Kind: "script_main_thread", Title: fmt.Sprintf("Main-thread time of a script from %s grew by %.0f ms", cmp.Or(hostOf(sc.URL), "the page"), grew),
				URL: sc.URL, Before: round(scriptWas[sc.URL]), After: round(sc.MainThread), Unit: "ms"}, grew)
		}
	}
}

// ranked is the cause: the items by impact, then the removed requests and the audits failing
// now (failing), at most MaxCauseItems.
func (c *causes) ranked(failing []model.Opportunity) []model.CauseItem {
	items := c.items
	sortByImpact(items)
	items = append(items, c.removed...)
	for _, o := range failing {
		items = append(items, model.CauseItem{Kind: "audit_failing", Title: o.Title + " (now failing)", URL: o.ID})
	}
	if len(items) > MaxCauseItems {
		items = items[:MaxCauseItems]
	}
	return items
}

// newlyFailing are the performance audits failing in after that passed in before.
func newlyFailing(before, after []model.Opportunity) []model.Opportunity {
	var out []model.Opportunity
	for _, o := range after {
		if o.Category == lighthouse.CategoryPerformance && !slices.ContainsFunc(before, func(b model.Opportunity) bool { return b.ID == o.ID }) {
			out = append(out, o)
		}
	}
	return out
}

func partyOf(r model.Request) string {
	if r.ThirdParty {
		return "third"
	}
	return "first"
}

// requestName names a request for people: "render-blocking script from cdn.example.com".
func requestName(r model.Request) string {
	name := typeName(r.Type) + " from " + cmp.Or(hostOf(r.URL), r.URL)
	if r.RenderBlocking {
		name = "render-blocking " + name
	}
	return name
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

func upper(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// kibText is a size for people: "312 KiB", "0.4 KiB".
func kibText(kib float64) string {
	if kib < 10 {
		return strconv.FormatFloat(math.Round(kib*10)/10, 'f', -1, 64) + " KiB"
	}
	return fmt.Sprintf("%.0f KiB", kib)
}

// lcpName names an LCP element: its selector (else its opening tag), "nothing" without one.
func lcpName(l *model.LCP) string {
	if l == nil {
		return "nothing"
	}
	return cmp.Or(l.Selector, l.Snippet, "an element")
}
